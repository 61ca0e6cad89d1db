package fieldindex

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kubeloop/kubeloop/cache/internal/store"
	"github.com/kubeloop/kubeloop/client"
)

func TestKeys(t *testing.T) {
	assert.Equal(t, []string{Key("", "a"), "ns/a", Key("", "b"), "ns/b"}, Keys("ns", []string{"a", "b"}))
	assert.Equal(t, []string{Key("", "a")}, Keys("", []string{"a"}), "cluster-scoped: once")
	assert.NotEqual(t, Key("", "a"), Key("a", ""), "cluster-wide keys do not collide with a namespace's")
}

// TestFilter resolves selectors against a store with one field index and
// checks which objects each one yields.
func TestFilter(t *testing.T) {
	st := store.New()
	byOwner := func(obj any) ([]string, error) {
		cm := obj.(*corev1.ConfigMap)
		return Keys(cm.Namespace, []string{cm.Data["owner"]}), nil
	}
	require.NoError(t, st.AddIndexes(map[string]store.IndexFunc{Name("data.owner"): byOwner}))
	for _, c := range []struct{ ns, name, owner string }{{"a", "x", "o1"}, {"a", "y", "o2"}, {"b", "x", "o1"}} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: c.name}, Data: map[string]string{"owner": c.owner}}
		require.NoError(t, st.Put(store.Key{Namespace: c.ns, Name: c.name}, cm))
	}
	tests := []struct {
		name string
		give string
		ns   string
		want []string
	}{
		{"indexed, cluster-wide", "data.owner=o1", "", []string{"a/x", "b/x"}},
		{"indexed, in a namespace", "data.owner=o1", "b", []string{"b/x"}},
		{"indexed and name", "data.owner=o1,metadata.name=x", "", []string{"a/x", "b/x"}},
		{"name only", "metadata.name=y", "", []string{"a/y"}},
		{"metadata.namespace", "metadata.namespace=a", "", []string{"a/x", "a/y"}},
		{"nothing", "", "a", []string{"a/x", "a/y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := fields.ParseSelector(tt.give)
			require.NoError(t, err)
			q, err := Parse(sel)
			require.NoError(t, err)
			f, err := q.Resolve(st, tt.ns)
			require.NoError(t, err)
			var got []string
			f.Each(st, tt.ns, func(o client.Object) bool {
				if f.Matches(o) {
					got = append(got, o.GetNamespace()+"/"+o.GetName())
				}
				return true
			})
			assert.ElementsMatch(t, tt.want, got)
		})
	}
	q, err := Parse(fields.OneTermNotEqualSelector("data.owner", "o1"))
	assert.ErrorIs(t, err, ErrUnsupported, "not an exact match")
	_ = q
	q, err = Parse(fields.SelectorFromSet(fields.Set{"data.owner": "o1", "data.other": "x"}))
	require.NoError(t, err)
	_, err = q.Resolve(st, "")
	assert.ErrorIs(t, err, ErrUnsupported, "a field without an index")
	assert.ErrorContains(t, err, "data.other")
}
