package listwatch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// TestSourceStoreView checks that the factory hands out a store view
// exactly where the watch decoder shares maps (a typed kind with Share),
// as the view of that decoder's wire.Stored for the request's kind and
// namespace, and one prober for every informer. Nothing is sent.
func TestSourceStoreView(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	f := NewFactory(&rest.Config{Host: "https://127.0.0.1:1"}, nil, scheme)
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	mapping := &meta.RESTMapping{Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), GroupVersionKind: gvk, Scope: meta.RESTScopeNamespace}

	for _, tc := range []struct {
		name     string
		give     Request
		wantView bool
	}{
		{"typed, shared", Request{Shape: Typed, Share: true, Strip: true}, true},
		{"typed, not shared", Request{Shape: Typed, Strip: true}, false},
		{"unstructured", Request{Shape: Unstructured, Share: true}, false},
		{"metadata", Request{Shape: Metadata, Share: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.give
			r.GVK, r.Mapping, r.Namespace = gvk, mapping, "team-a"
			src, err := f.ListWatch(r)
			require.NoError(t, err)
			assert.NotNil(t, src.ListWatch)
			if !tc.wantView {
				assert.Nil(t, src.StoreView)
				return
			}
			require.NotNil(t, src.StoreView)
			tc, ok := f.typed[typedClientKey{gv: gvk.GroupVersion(), strip: r.Strip, share: true}]
			require.True(t, ok)
			assert.Same(t, tc.stored, src.StoreView.stored, "the view is of the decoder's Stored")
			assert.Equal(t, gvk, src.StoreView.gvk)
			assert.Equal(t, "team-a", src.StoreView.namespace)
		})
	}

	p := f.Prober()
	require.NotNil(t, p)
	assert.Same(t, p, f.Prober(), "one prober per factory")
}
