package controller_test

import (
	"context"
	"fmt"
	"regexp"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/reconcile"
)

// The reconcile logger has controller-runtime's keys. The builder sets
// ForKind from For; a controller built by hand may set it too (without
// it, the object's reference is under "object").
func ExampleOptions_forKind() {
	id := regexp.MustCompile(`"reconcileID"="[0-9a-f-]+"`)
	log := funcr.New(func(_, args string) { fmt.Println(id.ReplaceAllString(args, `"reconcileID"="…"`)) }, funcr.Options{})
	c, err := controller.NewUnmanaged("gizmo", controller.Options{
		Logger:  log,
		ForKind: schema.GroupKind{Group: "example.com", Kind: "Gizmo"},
		Reconciler: reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
			logr.FromContextOrDiscard(ctx).Info("reconciling")
			return reconcile.Result{}, nil
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _ = c.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "g1"}})
	// Output:
	// "level"=0 "msg"="reconciling" "controller"="gizmo" "controllerGroup"="example.com" "controllerKind"="Gizmo" "Gizmo"={"name"="g1" "namespace"="ns"} "namespace"="ns" "name"="g1" "reconcileID"="…"
}
