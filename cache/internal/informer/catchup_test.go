package informer

import (
	"context"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// catchUpLog is an eventLog that is told which changes are catch-up.
type catchUpLog struct{ eventLog }

var _ catchUpHandler = (*catchUpLog)(nil)

func (l *catchUpLog) OnCatchUpAdd(obj any) {
	cm := obj.(*corev1.ConfigMap)
	l.add("catch-up add %s rv=%s", cm.Name, cm.ResourceVersion)
}

func (l *catchUpLog) OnCatchUpUpdate(oldObj, newObj any) {
	o, n := oldObj.(*corev1.ConfigMap), newObj.(*corev1.ConfigMap)
	l.add("catch-up update %s rv=%s->%s", n.Name, o.ResourceVersion, n.ResourceVersion)
}

func (l *catchUpLog) OnCatchUpDelete(obj any) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		l.add("catch-up delete %s", o.Name)
	case toolscache.DeletedFinalStateUnknown:
		l.add("catch-up delete-unknown %s", o.Key)
	}
}

// TestRelistIsCatchUp runs the informer through a watch that fails with
// 410 Gone, the relist that follows and a watch event after it: a
// catchUpHandler is told which adds, updates and deletes (tombstones) the
// relist found, and gets the initial list and watch events as usual; a
// plain handler gets the relist as plain adds, updates and deletes. A
// handler added after the relist gets the store as an initial list.
func TestRelistIsCatchUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gone := &apierrors.NewResourceExpired("too old resource version").ErrStatus
		lw := &scriptedLW{
			lists: []func(metav1.ListOptions) (runtime.Object, error){
				listOf("10", cmAt("a", "5"), cmAt("b", "6"), cmAt("c", "7")),
				listOf("30", cmAt("a", "25"), cmAt("b", "6"), cmAt("d", "26")),
			},
			watches: []func(metav1.ListOptions) (watch.Interface, error){
				sending(false, watch.Event{Type: watch.Modified, Object: cmAt("c", "11")},
					watch.Event{Type: watch.Error, Object: gone}),
				sending(false, watch.Event{Type: watch.Modified, Object: cmAt("a", "31")}),
			},
		}
		marked, plain := &catchUpLog{}, &eventLog{}
		inf := New(Pipeline{ListWatch: lw, Example: &corev1.ConfigMap{}, Description: "v1 ConfigMap"})
		for _, h := range []toolscache.ResourceEventHandler{marked, plain} {
			_, err := inf.AddEventHandler(h)
			require.NoError(t, err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); inf.RunWithContext(ctx) }()
		defer func() { cancel(); <-done }()
		time.Sleep(5 * time.Second)
		synctest.Wait()

		assert.Equal(t, []string{
			"add a rv=5 initial=true", "add b rv=6 initial=true", "add c rv=7 initial=true",
			"update c rv=7->11",
			"catch-up delete-unknown ns/c",
			"catch-up update a rv=5->25", "catch-up update b rv=6->6", "catch-up add d rv=26",
			"update a rv=25->31",
		}, marked.take())
		assert.Equal(t, []string{
			"add a rv=5 initial=true", "add b rv=6 initial=true", "add c rv=7 initial=true",
			"update c rv=7->11",
			"delete-unknown ns/c rv=11",
			"update a rv=5->25", "update b rv=6->6", "add d rv=26 initial=false",
			"update a rv=25->31",
		}, plain.take())

		late := &catchUpLog{}
		_, err := inf.AddEventHandler(late)
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"add a rv=31 initial=true", "add b rv=6 initial=true", "add d rv=26 initial=true"}, late.take())
		calls, _ := lw.record()
		assert.Equal(t, []string{"list rv=0", "watch rv=10", "list rv=11", "watch rv=30"}, calls)
	})
}

// TestResumedWatchReplayIsCatchUp: a watch that is cut, then refused for
// a while, resumes from the last version seen; the reflector asks the
// server for its current version (a LIST of one, from etcd) and the
// replayed events up to it are catch-up, the later ones news. A watch
// reopened at once (its timeout ended it) asks nothing.
func TestResumedWatchReplayIsCatchUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &scriptedLW{
			lists: []func(metav1.ListOptions) (runtime.Object, error){
				listOf("10", cmAt("a", "5"), cmAt("b", "6")),
				listOf("13"), // the server's version when the watch resumed
			},
			watches: []func(metav1.ListOptions) (watch.Interface, error){
				sending(true, watch.Event{Type: watch.Modified, Object: cmAt("a", "11")}), // then cut
				// Refused four times: the gate waits at least 1.9 s in all.
				failing(syscall.ECONNREFUSED),
				failing(syscall.ECONNREFUSED),
				failing(syscall.ECONNREFUSED),
				failing(syscall.ECONNREFUSED),
				sending(true,
					watch.Event{Type: watch.Modified, Object: cmAt("a", "12")},
					watch.Event{Type: watch.Deleted, Object: cmAt("b", "13")},
					watch.Event{Type: watch.Added, Object: cmAt("c", "14")},
					watch.Event{Type: watch.Modified, Object: cmAt("a", "15")}),
				sending(false, watch.Event{Type: watch.Modified, Object: cmAt("c", "16")}),
			},
		}
		h := &catchUpLog{}
		_, stop := runWith(t, lw, Pipeline{OnWatchErr: func(context.Context, error) {}}, h)
		defer stop()
		time.Sleep(time.Minute)
		synctest.Wait()

		assert.Equal(t, []string{
			"add a rv=5 initial=true", "add b rv=6 initial=true",
			"update a rv=5->11",
			"catch-up update a rv=11->12", "catch-up delete b",
			"add c rv=14 initial=false", "update a rv=12->15",
			"update c rv=14->16",
		}, h.take())
		calls, opts := lw.record()
		assert.Equal(t, []string{
			"list rv=0", "watch rv=10",
			"watch rv=11", "watch rv=11", "watch rv=11", "watch rv=11", "watch rv=11", "list rv=",
			"watch rv=15",
		}, calls)
		assert.Equal(t, int64(1), opts[7].Limit, "the version probe lists one object")
	})
}
