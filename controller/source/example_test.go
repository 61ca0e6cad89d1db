package source_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

// An external trigger: every object sent on the channel is enqueued.
func ExampleChannel() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := workqueue.New(workqueue.Options[reconcile.Request]{})
	defer q.ShutDown()

	events := make(chan handler.GenericEvent)
	src := source.Channel(events, &handler.EnqueueRequestForObject{})
	if err := src.Start(ctx, q); err != nil {
		panic(err)
	}
	events <- handler.GenericEvent{Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}}

	req, _ := q.Get()
	fmt.Println(req)
	// Output: default/web
}
