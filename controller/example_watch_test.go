package controller_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
)

// One watch of a running controller is removed; the other keeps feeding
// it.
func ExampleController_RemoveWatch() {
	reconciled := make(chan string)
	c, err := controller.NewUnmanaged("example", controller.Options{
		Reconciler: reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
			reconciled <- req.Name
			return reconcile.Result{}, nil
		}),
	})
	if err != nil {
		panic(err)
	}
	keepCh, dropCh := make(chan handler.GenericEvent, 1), make(chan handler.GenericEvent, 1)
	keep := source.Channel(keepCh, &handler.EnqueueRequestForObject{})
	drop := source.Channel(dropCh, &handler.EnqueueRequestForObject{})
	_ = c.Watch(keep)
	_ = c.Watch(drop)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Start(ctx) }()

	obj := func(name string) handler.GenericEvent {
		return handler.GenericEvent{Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}}
	}
	dropCh <- obj("before-removal")
	fmt.Println(<-reconciled)

	if err := c.RemoveWatch(drop); err != nil {
		panic(err)
	}
	dropCh <- obj("after-removal") // dropped: the watch is gone
	keepCh <- obj("kept")
	fmt.Println(<-reconciled)
	cancel()
	<-done
	// Output:
	// before-removal
	// kept
}
