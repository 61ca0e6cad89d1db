package cache

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeloop/kubeloop/client"
)

// TestGetTypedCopyAndNoCopy covers the typed fast path of Get: the kind
// and apiVersion set, shared or copied memory, NotFound, updates and
// deletes.
func TestGetTypedCopyAndNoCopy(t *testing.T) {
	c, srcs := newFakeCache(t, Options{})
	src := srcs.source(cmGVK)
	for i := range 3 {
		src.Add(configMap("ns", fmt.Sprint("cm-", i), i))
	}
	ctx := context.Background()
	require.Eventually(t, func() bool {
		var l corev1.ConfigMapList
		return c.List(ctx, &l) == nil && len(l.Items) == 3
	}, waitFor, tick)

	key := client.ObjectKey{Namespace: "ns", Name: "cm-1"}
	var shared, copied corev1.ConfigMap
	require.NoError(t, c.Get(ctx, key, &shared, client.UnsafeDisableDeepCopy))
	require.NoError(t, c.Get(ctx, key, &copied))
	for _, got := range []corev1.ConfigMap{shared, copied} {
		assert.Equal(t, "cm-1", got.Name)
		assert.Equal(t, "value-1", got.Data["key"])
		assert.Equal(t, metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, got.TypeMeta)
	}
	var again corev1.ConfigMap
	require.NoError(t, c.Get(ctx, key, &again, client.UnsafeDisableDeepCopy))
	assert.Equal(t, reflect.ValueOf(shared.Data).UnsafePointer(), reflect.ValueOf(again.Data).UnsafePointer(), "no-copy reads share the cached map")
	assert.NotEqual(t, reflect.ValueOf(shared.Data).UnsafePointer(), reflect.ValueOf(copied.Data).UnsafePointer(), "a copy does not")

	err := c.Get(ctx, client.ObjectKey{Namespace: "other", Name: "cm-1"}, &copied)
	assert.True(t, apierrors.IsNotFound(err), "wrong namespace: %v", err)
	err = c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "cm-9"}, &copied)
	assert.True(t, apierrors.IsNotFound(err), "missing name: %v", err)

	updated := configMap("ns", "cm-1", 41)
	src.Modify(updated)
	require.Eventually(t, func() bool {
		var cm corev1.ConfigMap
		return c.Get(ctx, key, &cm, client.UnsafeDisableDeepCopy) == nil && cm.Data["key"] == "value-41"
	}, waitFor, tick)
	src.Delete(configMap("ns", "cm-1", 41)) // a fresh object, as a watch decodes one per event
	require.Eventually(t, func() bool {
		var cm corev1.ConfigMap
		return apierrors.IsNotFound(c.Get(ctx, key, &cm))
	}, waitFor, tick)
}

// TestGetWhileUpdating reads objects without copies (Get with
// UnsafeDisableDeepCopy, and GetShared) while the informer replaces them;
// run with -race.
func TestGetWhileUpdating(t *testing.T) {
	c, srcs := newFakeCache(t, Options{})
	src := srcs.source(cmGVK)
	const n = 20
	for i := range n {
		src.Add(configMap("ns", fmt.Sprint("cm-", i), i))
	}
	ctx := context.Background()
	require.Eventually(t, func() bool {
		var l corev1.ConfigMapList
		return c.List(ctx, &l) == nil && len(l.Items) == n
	}, waitFor, tick)

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := range 2 {
		wg.Go(func() {
			var cm corev1.ConfigMap
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprint("cm-", (i+r)%n)
				if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: name}, &cm, client.UnsafeDisableDeepCopy); err != nil {
					t.Error(err)
					return
				}
				if cm.Name != name || cm.Kind != "ConfigMap" || len(cm.Data["key"]) == 0 {
					t.Errorf("got %s/%s kind %q data %v, want ns/%s", cm.Namespace, cm.Name, cm.Kind, cm.Data, name)
					return
				}
				shared, err := client.GetShared[*corev1.ConfigMap](ctx, c, client.ObjectKey{Namespace: "ns", Name: name})
				if err != nil {
					t.Error(err)
					return
				}
				if shared.Name != name || shared.Kind != "ConfigMap" || len(shared.Data["key"]) == 0 {
					t.Errorf("shared: got %s/%s kind %q data %v, want ns/%s", shared.Namespace, shared.Name, shared.Kind, shared.Data, name)
					return
				}
			}
		})
	}
	for i := range 300 {
		src.Modify(configMap("ns", fmt.Sprint("cm-", i%n), 1000+i))
	}
	last := client.ObjectKey{Namespace: "ns", Name: fmt.Sprint("cm-", 299%n)}
	require.Eventually(t, func() bool {
		var cm corev1.ConfigMap
		return c.Get(ctx, last, &cm) == nil && cm.Data["key"] == "value-1299"
	}, waitFor, tick)
	close(stop)
	wg.Wait()
}

func TestFillShapes(t *testing.T) {
	cachedCM := configMap("ns", "cm", 1)
	cachedCM.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"} // as the transform sets it
	cachedU := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm", "namespace": "ns"},
	}}
	cachedMeta := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns", Labels: map[string]string{"a": "b"}}}
	tests := []struct {
		name    string
		out     client.Object
		src     any
		deep    bool
		wantErr bool
		shared  func(out client.Object) bool // whether out shares the cached object's memory
	}{
		{"typed no-copy", &corev1.ConfigMap{}, cachedCM, false, false, func(o client.Object) bool {
			return reflect.ValueOf(o.(*corev1.ConfigMap).Data).UnsafePointer() == reflect.ValueOf(cachedCM.Data).UnsafePointer()
		}},
		{"typed copy", &corev1.ConfigMap{}, cachedCM, true, false, func(o client.Object) bool {
			return reflect.ValueOf(o.(*corev1.ConfigMap).Data).UnsafePointer() == reflect.ValueOf(cachedCM.Data).UnsafePointer()
		}},
		{"unstructured no-copy", &unstructured.Unstructured{}, cachedU, false, false, func(o client.Object) bool {
			return reflect.ValueOf(o.(*unstructured.Unstructured).Object).UnsafePointer() == reflect.ValueOf(cachedU.Object).UnsafePointer()
		}},
		{"unstructured copy", &unstructured.Unstructured{}, cachedU, true, false, func(o client.Object) bool {
			return reflect.ValueOf(o.(*unstructured.Unstructured).Object).UnsafePointer() == reflect.ValueOf(cachedU.Object).UnsafePointer()
		}},
		{"metadata no-copy", &metav1.PartialObjectMetadata{}, cachedMeta, false, false, func(o client.Object) bool {
			return reflect.ValueOf(o.GetLabels()).UnsafePointer() == reflect.ValueOf(cachedMeta.Labels).UnsafePointer()
		}},
		{"metadata copy", &metav1.PartialObjectMetadata{}, cachedMeta, true, false, func(o client.Object) bool {
			return reflect.ValueOf(o.GetLabels()).UnsafePointer() == reflect.ValueOf(cachedMeta.Labels).UnsafePointer()
		}},
		{"typed into another type", &corev1.Secret{}, cachedCM, false, true, nil},
		{"typed into unstructured", &unstructured.Unstructured{}, cachedCM, false, true, nil},
		{"unstructured into typed", &corev1.ConfigMap{}, cachedU, true, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fill(tt.out, tt.src, tt.deep)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "cm", tt.out.GetName())
			assert.Equal(t, "ConfigMap", tt.out.GetObjectKind().GroupVersionKind().Kind)
			assert.Equal(t, !tt.deep, tt.shared(tt.out), "shares the cached memory")
		})
	}
}
