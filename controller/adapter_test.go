package controller

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/client/interceptor"
	"github.com/kubeloop/kubeloop/reconcile"
)

func TestAsReconciler(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Data:       map[string]string{"k": "v"},
	}).Build()
	var got []*corev1.ConfigMap
	r := AsReconciler[*corev1.ConfigMap](c, reconcile.ObjectFunc[*corev1.ConfigMap](
		func(_ context.Context, cm *corev1.ConfigMap) (reconcile.Result, error) {
			got = append(got, cm)
			return reconcile.Result{}, nil
		}))

	res, err := r.Reconcile(t.Context(), webReq)
	require.NoError(t, err)
	assert.True(t, res.IsZero())
	res, err = r.Reconcile(t.Context(), webReq)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "v", got[0].Data["k"])
	assert.NotSame(t, got[0], got[1], "a new object per call")

	missing := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "gone"}}
	res, err = r.Reconcile(t.Context(), missing)
	assert.NoError(t, err, "not found is dropped")
	assert.True(t, res.IsZero())
	assert.Len(t, got, 2, "the reconciler is not called for a missing object")
}

func TestAsReconcilerGetError(t *testing.T) {
	boom := errors.New("connection refused")
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.Client, client.ObjectKey, client.Object, ...client.GetOption) error {
			return boom
		},
	}).Build()
	r := AsReconciler[*corev1.ConfigMap](c, reconcile.ObjectFunc[*corev1.ConfigMap](
		func(context.Context, *corev1.ConfigMap) (reconcile.Result, error) { return reconcile.Result{}, nil }))
	_, err := r.Reconcile(t.Context(), webReq)
	assert.ErrorIs(t, err, boom)
	assert.EqualError(t, err, "get ConfigMap default/web: connection refused")
}
