package recorders_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubeloop/kubeloop/manager/internal/recorders"
)

// rig is a Recorders on client-go's fake clientset, counting the event
// creates that reach it.
type rig struct {
	cs      *fake.Clientset
	rec     *recorders.Recorders
	creates atomic.Int32
	obj     *corev1.ConfigMap
}

func newRig(t *testing.T, block <-chan struct{}) *rig {
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	r := &rig{cs: fake.NewClientset(), obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cm", UID: "1"}}}
	r.cs.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		r.creates.Add(1)
		if block != nil {
			<-block
		}
		return false, nil, nil // the tracker stores it
	})
	r.rec = recorders.New(scheme, r.cs.EventsV1(), logr.Discard())
	return r
}

func (r *rig) stored(t *testing.T) []string {
	list, err := r.cs.EventsV1().Events("default").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	var reasons []string
	for _, ev := range list.Items {
		reasons = append(reasons, ev.Reason)
	}
	return reasons
}

func TestEventsOnlyWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		rec := r.rec.For("widget-controller") // taken before Start
		rec.Eventf(r.obj, nil, corev1.EventTypeNormal, "Early", "Test", "before start")
		require.NoError(t, r.rec.Start(context.Background()))
		rec.Eventf(r.obj, nil, corev1.EventTypeNormal, "Running", "Test", "hello %s", "world")
		synctest.Wait()
		r.rec.Stop()
		rec.Eventf(r.obj, nil, corev1.EventTypeNormal, "Late", "Test", "after stop")
		synctest.Wait()
		assert.Equal(t, []string{"Running"}, r.stored(t), "dropped before Start and after Stop")
		assert.EqualValues(t, 1, r.creates.Load())
		r.rec.Stop() // twice does nothing
	})
}

func TestStopWaitsForWritesInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		r := newRig(t, release)
		require.NoError(t, r.rec.Start(context.Background()))
		r.rec.For("widget-controller").Eventf(r.obj, nil, corev1.EventTypeWarning, "Slow", "Test", "in flight")
		synctest.Wait()
		require.EqualValues(t, 1, r.creates.Load(), "the write is in flight")

		stopped := make(chan struct{})
		go func() { r.rec.Stop(); close(stopped) }()
		synctest.Wait()
		select {
		case <-stopped:
			t.Fatal("Stop returned while an event write was in flight")
		default:
		}
		close(release)
		synctest.Wait()
		select {
		case <-stopped:
		default:
			t.Fatal("Stop did not return once the write ended")
		}
		assert.EqualValues(t, 1, r.creates.Load(), "no write after Stop")
	})
}

func TestStopWithoutStart(t *testing.T) {
	r := newRig(t, nil)
	r.rec.Stop()
	r.rec.For("x").Eventf(r.obj, nil, corev1.EventTypeNormal, "Never", "Test", "dropped")
	assert.Empty(t, r.stored(t))
	assert.Zero(t, r.creates.Load())
}
