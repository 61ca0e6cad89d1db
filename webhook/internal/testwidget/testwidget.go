// Package testwidget is a kind in three versions for the webhook tests:
// V1 is the conversion hub, V2 renames spec.size to spec.width, V3 to
// spec.sizeInCm (and panics on the color "panic", to test recovery).
package testwidget

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/webhook/conversion"
)

// Group is the API group of Widgets.
const Group = "test.kubeloop.dev"

// GroupVersionKinds of the three versions.
var (
	V1Kind = schema.GroupVersionKind{Group: Group, Version: "v1", Kind: "Widget"}
	V2Kind = schema.GroupVersionKind{Group: Group, Version: "v2", Kind: "Widget"}
	V3Kind = schema.GroupVersionKind{Group: Group, Version: "v3", Kind: "Widget"}
)

// AddToScheme registers the three versions.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(V1Kind, &V1{})
	s.AddKnownTypeWithName(V2Kind, &V2{})
	s.AddKnownTypeWithName(V3Kind, &V3{})
	return nil
}

// V1 is the hub (and storage) version.
type V1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              V1Spec `json:"spec,omitempty"`
}

// V1Spec is V1's spec.
type V1Spec struct {
	Size  int    `json:"size,omitempty"`
	Color string `json:"color,omitempty"`
}

// Hub marks V1 as the hub.
func (*V1) Hub() {}

// DeepCopyObject copies w.
func (w *V1) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// V2 names the size width.
type V2 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              V2Spec `json:"spec,omitempty"`
}

// V2Spec is V2's spec.
type V2Spec struct {
	Width int    `json:"width,omitempty"`
	Color string `json:"color,omitempty"`
}

// DeepCopyObject copies w.
func (w *V2) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// ConvertTo fills the V1 hub.
func (w *V2) ConvertTo(hub conversion.Hub) error {
	h, ok := hub.(*V1)
	if !ok {
		return errors.New("testwidget: hub is not a V1")
	}
	w.ObjectMeta.DeepCopyInto(&h.ObjectMeta)
	h.Spec = V1Spec{Size: w.Spec.Width, Color: w.Spec.Color}
	return nil
}

// ConvertFrom fills w from the V1 hub.
func (w *V2) ConvertFrom(hub conversion.Hub) error {
	h, ok := hub.(*V1)
	if !ok {
		return errors.New("testwidget: hub is not a V1")
	}
	h.ObjectMeta.DeepCopyInto(&w.ObjectMeta)
	w.Spec = V2Spec{Width: h.Spec.Size, Color: h.Spec.Color}
	return nil
}

// V3 names the size sizeInCm.
type V3 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              V3Spec `json:"spec,omitempty"`
}

// V3Spec is V3's spec.
type V3Spec struct {
	SizeInCm int    `json:"sizeInCm,omitempty"`
	Color    string `json:"color,omitempty"`
}

// DeepCopyObject copies w.
func (w *V3) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// ConvertTo fills the V1 hub; it refuses negative sizes.
func (w *V3) ConvertTo(hub conversion.Hub) error {
	if w.Spec.SizeInCm < 0 {
		return errors.New("testwidget: negative size")
	}
	h := hub.(*V1)
	w.ObjectMeta.DeepCopyInto(&h.ObjectMeta)
	h.Spec = V1Spec{Size: w.Spec.SizeInCm, Color: w.Spec.Color}
	return nil
}

// ConvertFrom fills w from the V1 hub; it panics on the color "panic".
func (w *V3) ConvertFrom(hub conversion.Hub) error {
	h := hub.(*V1)
	if h.Spec.Color == "panic" {
		panic("testwidget: asked to panic")
	}
	h.ObjectMeta.DeepCopyInto(&w.ObjectMeta)
	w.Spec = V3Spec{SizeInCm: h.Spec.Size, Color: h.Spec.Color}
	return nil
}
