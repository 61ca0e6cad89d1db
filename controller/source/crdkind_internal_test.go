package source

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/handler"
)

// Gizmo is a typed kind without apiVersion and kind set, as a Go object
// of a custom resource usually is; the scheme knows its group.
type Gizmo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func (g *Gizmo) DeepCopyObject() runtime.Object {
	out := &Gizmo{TypeMeta: g.TypeMeta}
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

// otherGizmo is a kind of the same name, Gizmo, in another group.
type otherGizmo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func (g *otherGizmo) DeepCopyObject() runtime.Object {
	out := &otherGizmo{TypeMeta: g.TypeMeta}
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

// TestCRDSourceKindNamedInFull: Kind and String name the kind as
// "Kind.group", resolved through the scheme for a typed object whose
// apiVersion and kind are not set; a core kind is "Kind"; two kinds of one
// name in different groups have different names; without a scheme the
// object's own apiVersion and kind are used.
func TestCRDSourceKindNamedInFull(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	scheme.AddKnownTypeWithName(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gizmo"}, &Gizmo{})
	scheme.AddKnownTypeWithName(schema.GroupVersionKind{Group: "other.example.com", Version: "v1alpha1", Kind: "Gizmo"}, &otherGizmo{})
	c := newFakeCache()
	h := &handler.EnqueueRequestForObject{}
	tests := []struct {
		name   string
		give   *CRDSource
		want   string
		wantOK bool // resolve succeeds
	}{
		{name: "typed, through the scheme", give: WaitForCRD(Kind(c, &Gizmo{}, h), &fakeMapper{}, CRDOptions{Scheme: scheme}), want: "Gizmo.example.com", wantOK: true},
		{name: "same name, other group", give: WaitForCRD(Kind(c, &otherGizmo{}, h), &fakeMapper{}, CRDOptions{Scheme: scheme}), want: "Gizmo.other.example.com", wantOK: true},
		{name: "core kind", give: WaitForCRD(Kind(c, &corev1.ConfigMap{}, h), &fakeMapper{}, CRDOptions{Scheme: scheme}), want: "ConfigMap", wantOK: true},
		{name: "unstructured, no scheme", give: WaitForCRD(Kind(c, widgetObj(""), h), &fakeMapper{}, CRDOptions{}), want: "Widget.example.com", wantOK: true},
		{name: "typed, no scheme: the Go type, and resolve fails", give: WaitForCRD(Kind(c, &Gizmo{}, h), &fakeMapper{}, CRDOptions{}), want: "Gizmo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.give.Kind())
			assert.Equal(t, "kind "+tt.want+" (when served)", tt.give.String())
			err := tt.give.resolve()
			if tt.wantOK {
				assert.NoError(t, err)
				assert.Equal(t, tt.want, tt.give.Kind(), "unchanged by resolve")
			} else {
				assert.ErrorContains(t, err, "kind Gizmo (when served)")
			}
		})
	}
}
