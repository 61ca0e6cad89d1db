package informer

import (
	"context"
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

// relistLog is an eventLog that is told which changes a relist found.
type relistLog struct{ eventLog }

var _ relistHandler = (*relistLog)(nil)

func (l *relistLog) OnRelistAdd(obj any) {
	cm := obj.(*corev1.ConfigMap)
	l.add("relist add %s rv=%s", cm.Name, cm.ResourceVersion)
}

func (l *relistLog) OnRelistUpdate(oldObj, newObj any) {
	o, n := oldObj.(*corev1.ConfigMap), newObj.(*corev1.ConfigMap)
	l.add("relist update %s rv=%s->%s", n.Name, o.ResourceVersion, n.ResourceVersion)
}

// TestRelistIsMarked runs the informer through a watch that fails with
// 410 Gone, the relist that follows and a watch event after it: a
// relistHandler is told which adds and updates the relist found (deletes
// come as tombstones), and gets the initial list and watch events as
// usual; a plain handler gets the relist as plain adds and updates. A
// handler added after the relist gets the store as an initial list.
func TestRelistIsMarked(t *testing.T) {
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
		marked, plain := &relistLog{}, &eventLog{}
		inf := New(lw, &corev1.ConfigMap{}, Options{Description: "v1 ConfigMap"})
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
			"delete-unknown ns/c rv=11",
			"relist update a rv=5->25", "relist update b rv=6->6", "relist add d rv=26",
			"update a rv=25->31",
		}, marked.take())
		assert.Equal(t, []string{
			"add a rv=5 initial=true", "add b rv=6 initial=true", "add c rv=7 initial=true",
			"update c rv=7->11",
			"delete-unknown ns/c rv=11",
			"update a rv=5->25", "update b rv=6->6", "add d rv=26 initial=false",
			"update a rv=25->31",
		}, plain.take())

		late := &relistLog{}
		_, err := inf.AddEventHandler(late)
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"add a rv=31 initial=true", "add b rv=6 initial=true", "add d rv=26 initial=true"}, late.take())
		calls, _ := lw.record()
		assert.Equal(t, []string{"list rv=0", "watch rv=10", "list rv=11", "watch rv=30"}, calls)
	})
}
