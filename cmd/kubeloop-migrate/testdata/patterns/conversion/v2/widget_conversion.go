package v2

import (
	apiconversion "k8s.io/apimachinery/pkg/conversion"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	v1 "example.com/patterns/conversion/v1"
)

var _ conversion.Convertible = &Widget{}

// ConvertTo converts this Widget to the Hub version (v1).
func (src *Widget) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*v1.Widget)
	return Convert_v2_Widget_To_v1_Widget(src, dst, nil)
}

// ConvertFrom converts from the Hub version (v1) to this version.
func (dst *Widget) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*v1.Widget)
	return Convert_v1_Widget_To_v2_Widget(src, dst, nil)
}

// Convert_v2_WidgetSpec_To_v1_WidgetSpec is the manual part conversion-gen
// asks for: replicas is v1's size.
func Convert_v2_WidgetSpec_To_v1_WidgetSpec(in *WidgetSpec, out *v1.WidgetSpec, s apiconversion.Scope) error {
	if err := autoConvert_v2_WidgetSpec_To_v1_WidgetSpec(in, out, s); err != nil {
		return err
	}
	out.Size = in.Replicas
	return nil
}

// Convert_v1_WidgetSpec_To_v2_WidgetSpec is the manual part conversion-gen
// asks for: size is v2's replicas.
func Convert_v1_WidgetSpec_To_v2_WidgetSpec(in *v1.WidgetSpec, out *WidgetSpec, s apiconversion.Scope) error {
	if err := autoConvert_v1_WidgetSpec_To_v2_WidgetSpec(in, out, s); err != nil {
		return err
	}
	out.Replicas = in.Size
	return nil
}
