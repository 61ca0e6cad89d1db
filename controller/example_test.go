package controller_test

import (
	"context"
	"fmt"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
)

// A controller without a manager, fed by a function source. Start blocks
// until its context ends.
func ExampleNewUnmanaged() {
	ctx, stop := context.WithCancel(context.Background())
	c, err := controller.NewUnmanaged("hello", controller.Options{
		Reconciler: reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
			fmt.Println("reconcile", req)
			stop()
			return reconcile.Result{}, nil
		}),
		Logger: funcr.New(func(string, string) {}, funcr.Options{}), // silent
	})
	if err != nil {
		panic(err)
	}
	err = c.Watch(source.Func(func(_ context.Context, q handler.Queue) error {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "web"}})
		return nil
	}))
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Start(ctx))
	// Output:
	// reconcile default/web
	// <nil>
}

// AsReconciler fetches the object for the reconciler and drops requests
// for objects that no longer exist.
func ExampleAsReconciler() {
	cl := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Data:       map[string]string{"replicas": "3"},
	}).Build()
	r := controller.AsReconciler[*corev1.ConfigMap](cl, reconcile.ObjectFunc[*corev1.ConfigMap](
		func(_ context.Context, cm *corev1.ConfigMap) (reconcile.Result, error) {
			fmt.Println(cm.Name, "wants", cm.Data["replicas"], "replicas")
			return reconcile.Result{}, nil
		}))
	for _, name := range []string{"web", "deleted"} {
		_, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: name}})
		fmt.Println(name, err)
	}
	// Output:
	// web wants 3 replicas
	// web <nil>
	// deleted <nil>
}
