package reliability_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/manager"
)

// notRegistered is a kind no scheme knows.
type notRegistered struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func (n *notRegistered) DeepCopyObject() runtime.Object { c := *n; return &c }

// TestBadInputErrorsNeverPanics sends bad input through the live client,
// the manager's cached client and the cache: each call returns an error
// and none panics.
func TestBadInputErrorsNeverPanics(t *testing.T) {
	ns := newNamespace(t)
	configMaps(t, ns, 1)
	live, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	mgr := newManager(t, restConfig, ns, manager.Options{})
	_, err = mgr.GetCache().GetInformer(context.Background(), &corev1.ConfigMap{})
	require.NoError(t, err)
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	require.True(t, mgr.GetCache().WaitForCacheSync(context.Background()))

	unknown := &unstructured.Unstructured{}
	unknown.SetGroupVersionKind(schema.GroupVersionKind{Group: "nowhere.example.com", Version: "v1", Kind: "Ghost"})
	unknown.SetNamespace(ns)
	unknown.SetName("boo")
	unknownList := &unstructured.UnstructuredList{}
	unknownList.SetGroupVersionKind(schema.GroupVersionKind{Group: "nowhere.example.com", Version: "v1", Kind: "GhostList"})
	huge := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "huge", Namespace: ns},
		Data: map[string]string{"blob": strings.Repeat("x", 3<<20)}} // etcd refuses objects above ~1.5 MiB
	key := client.ObjectKey{Namespace: ns, Name: "cm-0"}
	var nilCM *corev1.ConfigMap
	var nilList *corev1.ConfigMapList

	readers := map[string]client.Reader{"live client": live, "cached client": mgr.GetClient(), "cache": mgr.GetCache()}
	type call func(ctx context.Context, c client.Reader) error
	reads := []struct {
		name string
		call call
	}{
		{"invalid label key", func(ctx context.Context, c client.Reader) error {
			return c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns), client.MatchingLabels{"bad key!": "v"})
		}},
		{"invalid label value", func(ctx context.Context, c client.Reader) error {
			return c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns), client.MatchingLabels{"app": "x,tier!=prod"})
		}},
		{"invalid HasLabels", func(ctx context.Context, c client.Reader) error {
			return c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns), client.HasLabels{"!!"})
		}},
		{"field selector on an unknown field", func(ctx context.Context, c client.Reader) error {
			return c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns), client.MatchingFields{"spec.nothing": "x"})
		}},
		{"get unknown kind", func(ctx context.Context, c client.Reader) error {
			return c.Get(ctx, client.ObjectKeyFromObject(unknown), unknown.DeepCopy())
		}},
		{"list unknown kind", func(ctx context.Context, c client.Reader) error { return c.List(ctx, unknownList.DeepCopy()) }},
		{"get unregistered Go type", func(ctx context.Context, c client.Reader) error { return c.Get(ctx, key, &notRegistered{}) }},
		{"get into nil", func(ctx context.Context, c client.Reader) error { return c.Get(ctx, key, nil) }},
		{"get into typed nil", func(ctx context.Context, c client.Reader) error { return c.Get(ctx, key, nilCM) }},
		{"list into nil", func(ctx context.Context, c client.Reader) error { return c.List(ctx, nil) }},
		{"list into typed nil", func(ctx context.Context, c client.Reader) error { return c.List(ctx, nilList) }},
	}
	writes := []struct {
		name string
		call func(ctx context.Context, c client.Client) error
	}{
		{"create nil", func(ctx context.Context, c client.Client) error { return c.Create(ctx, nil) }},
		{"create typed nil", func(ctx context.Context, c client.Client) error { return c.Create(ctx, nilCM) }},
		{"update nil", func(ctx context.Context, c client.Client) error { return c.Update(ctx, nil) }},
		{"delete typed nil", func(ctx context.Context, c client.Client) error { return c.Delete(ctx, nilCM) }},
		{"create unknown kind", func(ctx context.Context, c client.Client) error { return c.Create(ctx, unknown.DeepCopy()) }},
		{"create unregistered Go type", func(ctx context.Context, c client.Client) error {
			return c.Create(ctx, &notRegistered{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}})
		}},
		{"create oversized object", func(ctx context.Context, c client.Client) error { return c.Create(ctx, huge.DeepCopy()) }},
		{"delete all with an invalid selector", func(ctx context.Context, c client.Client) error {
			return c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns), client.MatchingLabels{"bad key!": "v"})
		}},
	}

	noPanic := func(t *testing.T, f func() error) (err error) {
		t.Helper()
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("panicked: %v", p)
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return f()
	}
	ctx := context.Background()
	for rname, c := range readers {
		for _, tc := range reads {
			t.Run(rname+"/"+tc.name, func(t *testing.T) {
				err := noPanic(t, func() error { return tc.call(ctx, c) })
				assert.Error(t, err)
				t.Logf("%v", err)
			})
		}
	}
	for cname, c := range map[string]client.Client{"live client": live, "cached client": mgr.GetClient()} {
		for _, tc := range writes {
			t.Run(cname+"/"+tc.name, func(t *testing.T) {
				err := noPanic(t, func() error { return tc.call(ctx, c) })
				assert.Error(t, err)
				t.Logf("%v", err)
			})
		}
	}
	// Nothing was deleted by the invalid DeleteAllOf.
	assert.Len(t, serverState(t, ns), 1)
}
