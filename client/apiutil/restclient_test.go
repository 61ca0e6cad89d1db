package apiutil_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client/apiutil"
)

func TestRESTClientForGVK(t *testing.T) {
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	codecs := serializer.NewCodecFactory(s)
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	tests := []struct {
		name         string
		gvk          schema.GroupVersionKind
		unstructured bool
		resource     string
		wantPath     string
	}{
		{name: "core typed", gvk: corev1.SchemeGroupVersion.WithKind("ConfigMap"), resource: "configmaps", wantPath: "/api/v1/namespaces/ns/configmaps"},
		{name: "group typed", gvk: appsv1.SchemeGroupVersion.WithKind("Deployment"), resource: "deployments", wantPath: "/apis/apps/v1/namespaces/ns/deployments"},
		{name: "custom unstructured", gvk: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, unstructured: true, resource: "widgets", wantPath: "/apis/example.com/v1/namespaces/ns/widgets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := apiutil.RESTClientForGVK(tt.gvk, tt.unstructured, cfg, codecs, nil)
			require.NoError(t, err)
			u := rc.Get().Namespace("ns").Resource(tt.resource).URL()
			assert.Equal(t, tt.wantPath, u.Path)
		})
	}
	_, err := apiutil.RESTClientForGVK(corev1.SchemeGroupVersion.WithKind("ConfigMap"), false, nil, codecs, nil)
	assert.ErrorContains(t, err, "rest.Config is nil")
	assert.True(t, apiutil.IsBuiltIn(appsv1.SchemeGroupVersion.WithKind("Deployment")))
	assert.False(t, apiutil.IsBuiltIn(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}))
}
