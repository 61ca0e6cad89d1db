package handler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolsworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

// added is one request a handler added, with its priority.
type added struct {
	req      reconcile.Request
	priority int
}

// recordingQueue is a handler.Queue with priorities that records what is
// added, in order. The methods handlers never call are the embedded nil
// interface's (they would panic).
type recordingQueue struct {
	handler.Queue
	adds []added
}

var _ handler.TypedPriorityQueue[reconcile.Request] = (*recordingQueue)(nil)

func (q *recordingQueue) AddAfter(req reconcile.Request, _ time.Duration) { q.Add(req) }

func (q *recordingQueue) AddRateLimited(req reconcile.Request) { q.Add(req) }

func (q *recordingQueue) Add(req reconcile.Request) { q.adds = append(q.adds, added{req: req}) }

func (q *recordingQueue) AddWithOpts(opts workqueue.AddOpts, reqs ...reconcile.Request) {
	for _, r := range reqs {
		q.adds = append(q.adds, added{req: r, priority: opts.Priority})
	}
}

func workqueueOpts() workqueue.AddOpts { return workqueue.AddOpts{} }

// TestHandlersTakeClientGoQueues: a handler test written for
// controller-runtime passes a client-go queue; the built-in handlers
// add to it (priorities dropped, delays and rate limiting kept).
func TestHandlersTakeClientGoQueues(t *testing.T) {
	q := toolsworkqueue.NewTypedRateLimitingQueue(toolsworkqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	h := &handler.EnqueueRequestForObject{}
	h.Create(context.Background(), handler.CreateEvent{Object: cm, IsInInitialList: true}, q)
	require.Equal(t, 1, q.Len())
	got, shutdown := q.Get()
	require.False(t, shutdown)
	assert.Equal(t, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}, got)
	q.Done(got)

	handler.AddWithOpts(q, workqueue.AddOpts{Priority: 7, RateLimited: true}, got)
	assert.Equal(t, 1, q.NumRequeues(got), "rate limited through the client-go queue's limiter")
}
