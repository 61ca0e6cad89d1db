package ryow

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func cachedCM(rv string, uid types.UID, deleting bool) metav1.Object {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv, UID: uid}}
	if deleting {
		now := metav1.Now()
		cm.DeletionTimestamp = &now
	}
	return cm
}

// TestJudge: what a cached read saw, against what the server holds after
// the client's write.
func TestJudge(t *testing.T) {
	tests := []struct {
		name string
		give Entry
		obs  observation
		want verdict
	}{
		{"present: cache older", Entry{State: Present, RV: 10}, observation{obj: cachedCM("9", "", false)}, behind},
		{"present: cache at the write", Entry{State: Present, RV: 10}, observation{obj: cachedCM("10", "", false)}, caughtUp},
		{"present: not found yet", Entry{State: Present, RV: 10}, observation{}, behind},
		{"present: cache past the write, whatever it holds", Entry{State: Present, RV: 10}, observation{observed: 10, known: true}, caughtUp},
		{"present: unknown write version", Entry{State: Present}, observation{obj: cachedCM("9", "", false)}, incomparable},
		{"present: not an integer", Entry{State: Present, RV: 10}, observation{obj: cachedCM("abc", "", false)}, incomparable},
		{"out of scope: not held", Entry{State: OutOfScope, RV: 10}, observation{}, caughtUp},
		{"out of scope: an older copy held", Entry{State: OutOfScope, RV: 10}, observation{obj: cachedCM("9", "", false)}, behind},
		{"gone: not found", Entry{State: Gone, UID: "a"}, observation{}, caughtUp},
		{"gone: still held", Entry{State: Gone, UID: "a"}, observation{obj: cachedCM("9", "a", false)}, behind},
		{"gone: a newer object of the name", Entry{State: Gone, UID: "a"}, observation{obj: cachedCM("12", "b", false)}, caughtUp},
		{"deleting: seen terminating", Entry{State: Deleting, RV: 10, UID: "a"}, observation{obj: cachedCM("11", "a", true)}, caughtUp},
		{"deleting: held as before", Entry{State: Deleting, RV: 10, UID: "a"}, observation{obj: cachedCM("10", "a", false)}, behind},
		{"deleting: not found, cache before the object", Entry{State: Deleting, RV: 10}, observation{observed: 9, known: true}, behind},
		{"deleting: not found, cache past the object", Entry{State: Deleting, RV: 10}, observation{observed: 10, known: true}, caughtUp},
		{"deleting: not found, progress unknown", Entry{State: Deleting, RV: 10}, observation{}, caughtUp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, judge(tt.give, tt.obs))
		})
	}
}

// TestRecordKeepsNewer: of two writes racing on one object the newer
// resourceVersion wins, and a delete keeps the version the object had.
func TestRecordKeepsNewer(t *testing.T) {
	tr := New(0)
	k := Key{Namespace: "ns", Name: "a"}
	tr.Record(k, Entry{State: Present, RV: 12, UID: "u"})
	tr.Record(k, Entry{State: Present, RV: 11})
	e, _ := tr.lookup(k)
	assert.Equal(t, uint64(12), e.RV, "the older write's answer does not replace the newer")
	tr.Record(k, Entry{State: Deleting})
	e, _ = tr.lookup(k)
	assert.Equal(t, Deleting, e.State)
	assert.Equal(t, uint64(12), e.RV, "a delete of what was written: it existed at 12")
	assert.Equal(t, types.UID("u"), e.UID)
}
