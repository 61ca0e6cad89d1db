package zapraw_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeloop/kubeloop/log/zap/zapraw"
)

func TestKubeObjects(t *testing.T) {
	typed := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Namespace")
	u.SetName("shop")
	for _, tt := range []struct {
		name string
		give any
		dev  bool
		want any
	}{
		{name: "typed", give: typed, want: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web"}},
		{name: "without its type", give: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}, want: map[string]any{"namespace": "shop", "name": "web"}},
		{name: "unstructured, cluster-scoped", give: u, want: map[string]any{"apiVersion": "v1", "kind": "Namespace", "name": "shop"}},
		{name: "not an object", give: metav1.ObjectMeta{Name: "web"}, want: map[string]any{"name": "web"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			opts := []zapraw.Opts{zapraw.WriteTo(&buf), zapraw.UseDevMode(tt.dev)}
			if tt.dev {
				opts = append(opts, zapraw.JSONEncoder())
			}
			zapraw.New(opts...).Info("x", "obj", tt.give)
			got := lines(t, &buf)
			require.Len(t, got, 1)
			assert.Equal(t, tt.want, got[0]["obj"])
		})
	}
}

// In development an object is left to zap: its String method here.
func TestKubeObjectInDevelopment(t *testing.T) {
	var buf bytes.Buffer
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	zapraw.New(zapraw.WriteTo(&buf), zapraw.UseDevMode(true), zapraw.JSONEncoder()).Info("x", "obj", obj)
	got := lines(t, &buf)
	require.Len(t, got, 1)
	assert.Equal(t, obj.String(), got[0]["obj"])
}

func TestNilKubeObject(t *testing.T) {
	var buf bytes.Buffer
	var obj *metav1.PartialObjectMetadata
	zapraw.NewRaw(zapraw.WriteTo(&buf)).Info("x", zap.Any("obj", obj))
	got := lines(t, &buf)
	require.Len(t, got, 1)
	assert.Equal(t, map[string]any{}, got[0]["obj"])
	assert.Contains(t, got[0]["objError"], "nil runtime.Object", "zap writes the encoder's error under <key>Error")
}
