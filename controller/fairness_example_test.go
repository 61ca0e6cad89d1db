package controller_test

import (
	"context"
	"fmt"

	"github.com/go-logr/logr/funcr"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
)

// Namespace "flood" queues three Requests before namespace "quiet" queues
// one. Fair by namespace, the queue takes turns between the namespaces,
// so the quiet namespace's Request is the second one reconciled, not the
// fourth. With the builder: WithOptions(controller.Options{FairnessKey:
// controller.FairByNamespace}).
func ExampleFairByNamespace() {
	ctx, stop := context.WithCancel(context.Background())
	seen := 0
	c, err := controller.NewUnmanaged("tenants", controller.Options{
		FairnessKey: controller.FairByNamespace,
		Reconciler: reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
			fmt.Println("reconcile", req)
			if seen++; seen == 4 {
				stop()
			}
			return reconcile.Result{}, nil
		}),
		Logger: funcr.New(func(string, string) {}, funcr.Options{}), // silent
	})
	if err != nil {
		panic(err)
	}
	// The source queues every Request before the (one) worker starts.
	err = c.Watch(source.Func(func(_ context.Context, q handler.Queue) error {
		q.Add(request("flood", "cm-1"))
		q.Add(request("flood", "cm-2"))
		q.Add(request("flood", "cm-3"))
		q.Add(request("quiet", "cm-1"))
		return nil
	}))
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Start(ctx))
	// Output:
	// reconcile flood/cm-1
	// reconcile quiet/cm-1
	// reconcile flood/cm-2
	// reconcile flood/cm-3
	// <nil>
}
