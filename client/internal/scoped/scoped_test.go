package scoped

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeloop/kubeloop/client/apiutil"
)

func newScope(ns string) Scope {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	return Scope{Namespace: ns, Mapper: func() meta.RESTMapper { return m },
		GVKFor: func(obj runtime.Object) (schema.GroupVersionKind, error) {
			return apiutil.GVKForObject(obj, clientgoscheme.Scheme)
		}}
}

func TestOf(t *testing.T) {
	s := newScope("team")
	tests := []struct {
		name           string
		obj            runtime.Object
		given          string
		want           string
		wantNamespaced bool
		wantErr        error
	}{
		{name: "namespaced, none given", obj: &corev1.ConfigMap{}, want: "team", wantNamespaced: true},
		{name: "namespaced, same given", obj: &corev1.ConfigMap{}, given: "team", want: "team", wantNamespaced: true},
		{name: "namespaced, other given", obj: &corev1.ConfigMap{}, given: "other", want: "other", wantNamespaced: true, wantErr: ErrMismatch},
		{name: "list", obj: &corev1.ConfigMapList{}, want: "team", wantNamespaced: true},
		{name: "cluster-scoped", obj: &corev1.Namespace{}, given: "x", want: "x"},
		{name: "nil", obj: (*corev1.ConfigMap)(nil), given: "x", want: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, namespaced, err := s.Of("get", tt.obj, tt.given)
			assert.ErrorIs(t, err, tt.wantErr)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantNamespaced, namespaced)
		})
	}
}

func TestApply(t *testing.T) {
	s := newScope("team")
	ac := corev1ac.ConfigMap("web", "")
	require.NoError(t, s.Apply("apply", ac))
	assert.Equal(t, "team", *ac.Namespace, "set through WithNamespace")
	require.ErrorIs(t, s.Apply("apply", corev1ac.ConfigMap("web", "other")), ErrMismatch)
	ns := corev1ac.Namespace("n")
	require.NoError(t, s.Apply("apply", ns))
	assert.Nil(t, ns.Namespace, "a cluster-scoped kind is untouched")
}

func ExampleScope_Object() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	err := newScope("team").Object("create", cm)
	fmt.Println(cm.Namespace, err)
	// Output: team <nil>
}
