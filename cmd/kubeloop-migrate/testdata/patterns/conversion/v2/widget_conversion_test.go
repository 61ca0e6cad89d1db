package v2

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	v1 "example.com/patterns/conversion/v1"
)

var _ conversion.Hub = &v1.Widget{}

func TestConvertToAndFromTheHub(t *testing.T) {
	src := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"}, Spec: WidgetSpec{Color: "red", Replicas: 3}}
	hub := &v1.Widget{}
	if err := src.ConvertTo(hub); err != nil {
		t.Fatal(err)
	}
	if hub.Name != "w" || hub.Spec.Color != "red" || hub.Spec.Size != 3 {
		t.Fatalf("ConvertTo gave %+v", hub)
	}
	back := &Widget{}
	if err := back.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	if back.Spec != src.Spec || back.Name != "w" {
		t.Fatalf("round trip gave %+v, want %+v", back.Spec, src.Spec)
	}
}

func TestTheSchemeHasTheGeneratedConversions(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []string{"Widget", "WidgetList"} {
		if !s.Recognizes(GroupVersion.WithKind(gvk)) || !s.Recognizes(v1.GroupVersion.WithKind(gvk)) {
			t.Fatalf("the scheme does not know %s in both versions", gvk)
		}
	}
	src := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w"}, Spec: WidgetSpec{Color: "blue", Replicas: 2}}
	out := &v1.Widget{}
	if err := s.Convert(src, out, nil); err != nil {
		t.Fatalf("the scheme cannot convert v2 to v1 (RegisterConversions did not run?): %v", err)
	}
	if out.Spec.Size != 2 || out.Spec.Color != "blue" {
		t.Fatalf("scheme conversion gave %+v", out.Spec)
	}
}
