package controller

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/reconcile"
)

// AsReconciler adapts an ObjectReconciler to a Reconciler: for each
// Request it reads the object with r into a new T (so reconciles never
// share an object) and hands it to rec. A Request whose object is not
// found (it was deleted) is dropped with a nil error; use a finalizer to
// act on deletion. T must be a pointer to a typed API struct, for example
// *corev1.ConfigMap; AsReconciler panics otherwise.
func AsReconciler[T client.Object](r client.Reader, rec reconcile.ObjectReconciler[T]) reconcile.Reconciler {
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("controller: AsReconciler: %s is not a pointer to a struct", typ))
	}
	return &objectReconciler[T]{reader: r, rec: rec, elem: typ.Elem()}
}

type objectReconciler[T client.Object] struct {
	reader client.Reader
	rec    reconcile.ObjectReconciler[T]
	elem   reflect.Type
}

func (o *objectReconciler[T]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	obj := reflect.New(o.elem).Interface().(T)
	if err := o.reader.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("get %s %s: %w", o.elem.Name(), req, err)
	}
	return o.rec.Reconcile(ctx, obj)
}
