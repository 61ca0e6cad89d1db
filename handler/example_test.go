package handler_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

// A ConfigMap change reconciles the App named in its "app" label.
func ExampleEnqueueRequestsFromMapFunc() {
	h := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		app := obj.GetLabels()["app"]
		if app == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: app}}}
	})
	q := workqueue.New(workqueue.Options[reconcile.Request]{})
	defer q.ShutDown()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-config", Labels: map[string]string{"app": "web"}}}
	h.Create(context.Background(), handler.CreateEvent{Object: cm}, q)

	req, _ := q.Get()
	fmt.Println(req)
	// Output: default/web
}

func ExampleEnqueueRequestForObject() {
	q := workqueue.New(workqueue.Options[reconcile.Request]{})
	defer q.ShutDown()
	h := &handler.EnqueueRequestForObject{}

	old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", ResourceVersion: "7"}}
	updated := old.DeepCopy()
	updated.ResourceVersion = "8"
	h.Update(context.Background(), handler.UpdateEvent{ObjectOld: old, ObjectNew: updated}, q)

	req, _ := q.Get()
	fmt.Println(req, q.Len())
	// Output: default/web 0
}

// A typed map function, as ported controller-runtime code writes it: the
// handler is handed *corev1.Secret objects, no assertion needed.
func ExampleTypedEnqueueRequestsFromMapFunc() {
	h := handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, s *corev1.Secret) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Labels["app"]}}}
	})
	q := workqueue.New(workqueue.Options[reconcile.Request]{})
	defer q.ShutDown()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-tls", Labels: map[string]string{"app": "web"}}}
	h.Create(context.Background(), handler.TypedCreateEvent[*corev1.Secret]{Object: secret}, q)
	req, _ := q.Get()
	fmt.Println(req)
	// Output:
	// default/web
}
