package interceptor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/client/interceptor"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}) }

var errInjected = errors.New("injected")

func TestEachFuncReplacesItsCall(t *testing.T) {
	ctx := t.Context()
	cm := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}
	}
	tests := []struct {
		name  string
		funcs interceptor.Funcs
		call  func(c client.Client) error
	}{
		{name: "Get", funcs: interceptor.Funcs{Get: func(context.Context, client.Client, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errInjected
		}},
			call: func(c client.Client) error { return c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "cm"}, cm()) }},
		{name: "List", funcs: interceptor.Funcs{List: func(context.Context, client.Client, client.ObjectList, ...client.ListOption) error {
			return errInjected
		}},
			call: func(c client.Client) error { return c.List(ctx, &corev1.ConfigMapList{}) }},
		{name: "Create", funcs: interceptor.Funcs{Create: func(context.Context, client.Client, client.Object, ...client.CreateOption) error { return errInjected }},
			call: func(c client.Client) error { return c.Create(ctx, cm()) }},
		{name: "Update", funcs: interceptor.Funcs{Update: func(context.Context, client.Client, client.Object, ...client.UpdateOption) error { return errInjected }},
			call: func(c client.Client) error { return c.Update(ctx, cm()) }},
		{name: "Patch", funcs: interceptor.Funcs{Patch: func(context.Context, client.Client, client.Object, client.Patch, ...client.PatchOption) error {
			return errInjected
		}},
			call: func(c client.Client) error { return c.Patch(ctx, cm(), client.Merge) }},
		{name: "Delete", funcs: interceptor.Funcs{Delete: func(context.Context, client.Client, client.Object, ...client.DeleteOption) error { return errInjected }},
			call: func(c client.Client) error { return c.Delete(ctx, cm()) }},
		{name: "DeleteAllOf", funcs: interceptor.Funcs{DeleteAllOf: func(context.Context, client.Client, client.Object, ...client.DeleteAllOfOption) error {
			return errInjected
		}},
			call: func(c client.Client) error { return c.DeleteAllOf(ctx, cm()) }},
		{name: "Apply", funcs: interceptor.Funcs{Apply: func(context.Context, client.Client, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			return errInjected
		}},
			call: func(c client.Client) error { return c.Apply(ctx, corev1ac.ConfigMap("cm", "ns")) }},
		{name: "SubResourceGet", funcs: interceptor.Funcs{SubResourceGet: func(context.Context, client.Client, string, client.Object, client.Object, ...client.SubResourceGetOption) error {
			return errInjected
		}}, call: func(c client.Client) error { return c.SubResource("scale").Get(ctx, cm(), cm()) }},
		{name: "SubResourceCreate", funcs: interceptor.Funcs{SubResourceCreate: func(context.Context, client.Client, string, client.Object, client.Object, ...client.SubResourceCreateOption) error {
			return errInjected
		}}, call: func(c client.Client) error { return c.SubResource("eviction").Create(ctx, cm(), cm()) }},
		{name: "SubResourceUpdate", funcs: interceptor.Funcs{SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
			return errInjected
		}}, call: func(c client.Client) error { return c.Status().Update(ctx, cm()) }},
		{name: "SubResourcePatch", funcs: interceptor.Funcs{SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			return errInjected
		}}, call: func(c client.Client) error { return c.Status().Patch(ctx, cm(), client.Merge) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := interceptor.NewClient(fake.NewClientBuilder().Build(), tt.funcs)
			assert.ErrorIs(t, tt.call(c), errInjected)
		})
	}
}

func TestNilFuncsPassThrough(t *testing.T) {
	c := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}
	require.NoError(t, c.Create(t.Context(), cm))
	var got corev1.ConfigMap
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(cm), &got))
	assert.Equal(t, cm.UID, got.UID)
	assert.NotNil(t, c.Scheme())
}

// Fail the first update with a conflict, then let updates through.
func ExampleNewClient() {
	calls := 0
	c := interceptor.NewClient(fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"},
	}).Build(), interceptor.Funcs{
		Update: func(ctx context.Context, c client.Client, obj client.Object, opts ...client.UpdateOption) error {
			calls++
			if calls == 1 {
				return errInjected
			}
			return c.Update(ctx, obj, opts...)
		},
	})
	var cm corev1.ConfigMap
	_ = c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "cm"}, &cm)
	fmt.Println(c.Update(context.Background(), &cm))
	fmt.Println(c.Update(context.Background(), &cm))
	// Output:
	// injected
	// <nil>
}

// notWatching hides the fake's Watch.
type notWatching struct{ client.Client }

func TestWatch(t *testing.T) {
	ctx := t.Context()
	inner := fake.NewClientBuilder().Build()

	// Passed through to a wrapped client that watches.
	w, err := interceptor.NewClient(inner, interceptor.Funcs{}).Watch(ctx, &corev1.ConfigMapList{})
	require.NoError(t, err)
	w.Stop()

	// Replaced by Funcs.Watch, which gets the wrapped client as a
	// client.WithWatch and can call through to its Watch.
	calls := 0
	through := interceptor.Funcs{
		Watch: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
			calls++
			return c.Watch(ctx, list, opts...)
		},
	}
	w, err = interceptor.NewClient(inner, through).Watch(ctx, &corev1.ConfigMapList{})
	require.NoError(t, err)
	w.Stop()
	assert.Equal(t, 1, calls)
	c := interceptor.NewClient(inner, interceptor.Funcs{
		Watch: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
			return nil, errInjected
		},
	})
	_, err = c.Watch(ctx, &corev1.ConfigMapList{})
	assert.ErrorIs(t, err, errInjected)
	_, err = interceptor.NewClient(notWatching{inner}, through).Watch(ctx, &corev1.ConfigMapList{})
	assert.ErrorIs(t, err, client.ErrNotSupported, "calling through to a wrapped client that does not watch")

	// A wrapped client that does not watch: a clear error.
	_, err = interceptor.NewClient(notWatching{inner}, interceptor.Funcs{}).Watch(ctx, &corev1.ConfigMapList{})
	assert.ErrorIs(t, err, client.ErrNotSupported)
	assert.ErrorContains(t, err, "does not watch")
}
