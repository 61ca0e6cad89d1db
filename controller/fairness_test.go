package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
)

func TestFairByNamespace(t *testing.T) {
	assert.Equal(t, "team-a", controller.FairByNamespace(request("team-a", "web")))
	assert.Equal(t, "", controller.FairByNamespace(request("", "node-1")), "cluster-scoped objects are one tenant")
}

// TestFairnessKeyBoundsQuietTenant: flooding tenants queue perTenant
// Requests each while the workers are held; then a quiet tenant queues one.
// The workers are released one reconcile at a time, so reconciles start in
// the order the queue hands Requests out. With fairness by namespace, at
// most workers + tenants - 1 reconciles start before the quiet tenant's (the
// ones in flight when it arrived, then at most one per other tenant);
// first in, first out, every flood Request does.
func TestFairnessKeyBoundsQuietTenant(t *testing.T) {
	const (
		workers   = 3
		perTenant = 200
	)
	tests := []struct {
		name    string
		give    func(reconcile.Request) string
		floods  []string
		wantMax func(total int) int
	}{
		{"fair, one flooding tenant", controller.FairByNamespace, []string{"a"},
			func(int) int { return workers + 1 }},
		{"fair, three flooding tenants", controller.FairByNamespace, []string{"a", "c", "d"},
			func(int) int { return workers + 3 }},
		{"first in first out", nil, []string{"a"},
			func(total int) int { return total }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []client.Object
			var flood []reconcile.Request
			for _, ns := range tt.floods {
				for i := range perTenant {
					name := fmt.Sprintf("cm-%03d", i)
					objs = append(objs, configMap(ns, name))
					flood = append(flood, request(ns, name))
				}
			}
			objs = append(objs, configMap("b", "quiet"))
			cl := fake.NewClientBuilder().WithObjects(objs...).Build()

			// Each reconcile reads its ConfigMap through the fake client,
			// reports it, and waits for a token.
			started := make(chan types.NamespacedName, len(objs))
			tokens := make(chan struct{})
			r := controller.AsReconciler[*corev1.ConfigMap](cl, reconcile.ObjectFunc[*corev1.ConfigMap](
				func(ctx context.Context, cm *corev1.ConfigMap) (reconcile.Result, error) {
					started <- types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}
					select {
					case <-tokens:
					case <-ctx.Done():
					}
					return reconcile.Result{}, nil
				}))
			c, err := controller.NewUnmanaged("tenants", controller.Options{
				Reconciler:              r,
				MaxConcurrentReconciles: workers,
				FairnessKey:             tt.give,
				Logger:                  funcr.New(func(string, string) {}, funcr.Options{}),
			})
			require.NoError(t, err)
			queues := make(chan handler.Queue, 1)
			require.NoError(t, c.Watch(source.Func(func(_ context.Context, q handler.Queue) error {
				queues <- q
				return nil
			})))
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- c.Start(ctx) }()
			defer func() {
				cancel()
				assert.NoError(t, <-done)
			}()

			q := <-queues
			for _, req := range flood {
				q.Add(req)
			}
			for range workers { // the workers now hold flood Requests
				assert.NotEqual(t, "b", next(t, started).Namespace)
			}
			q.Add(request("b", "quiet"))

			before := workers
			for {
				tokens <- struct{}{}
				if next(t, started).Namespace == "b" {
					break
				}
				before++
			}
			t.Logf("%d reconciles started before the quiet tenant's", before)
			assert.LessOrEqual(t, before, tt.wantMax(len(flood)))
			if tt.give == nil {
				assert.Equal(t, len(flood), before, "first in, first out")
			}
		})
	}
}

func next(t *testing.T, c <-chan types.NamespacedName) types.NamespacedName {
	t.Helper()
	select {
	case n := <-c:
		return n
	case <-time.After(time.Minute): // bounds a hang only
		t.Fatal("no reconcile started")
		return types.NamespacedName{}
	}
}

func request(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

func configMap(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}
