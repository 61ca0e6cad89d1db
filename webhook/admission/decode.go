package admission

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// Decoder turns the objects of admission requests into Go objects, for
// raw handlers (typed Defaulters and Validators are decoded for you). It is
// controller-runtime's admission.Decoder.
type Decoder interface {
	// Decode decodes req.Object into into. It fails when req has no
	// object (a DELETE has only OldObject: use DecodeRaw(req.OldObject, into)).
	Decode(req Request, into runtime.Object) error
	// DecodeRaw decodes raw into into; it fails when raw is empty.
	DecodeRaw(raw runtime.RawExtension, into runtime.Object) error
}

// decoder is the Decoder of a scheme; the typed webhooks use it too.
type decoder struct {
	deserializer runtime.Decoder // nil: no scheme
}

var _ Decoder = (*decoder)(nil)

// NewDecoder returns a Decoder of the kinds in scheme. Typed objects are
// decoded by the scheme's universal deserializer (JSON, YAML or protobuf,
// defaults not applied); *unstructured.Unstructured (any
// runtime.Unstructured) takes the JSON as it is, with or without apiVersion
// and kind (the API server omits them in some requests). A nil scheme
// gives a Decoder whose every typed decode fails with an error saying so
// (controller-runtime panics).
func NewDecoder(scheme *runtime.Scheme) Decoder {
	if scheme == nil {
		return &decoder{}
	}
	return &decoder{deserializer: serializer.NewCodecFactory(scheme).UniversalDeserializer()}
}

// Decode decodes req.Object into into.
func (d *decoder) Decode(req Request, into runtime.Object) error {
	if len(req.Object.Raw) == 0 {
		return fmt.Errorf("admission: %s request for %s has no object to decode", req.Operation, describe(req))
	}
	return d.DecodeRaw(req.Object, into)
}

// DecodeRaw decodes raw into into.
func (d *decoder) DecodeRaw(raw runtime.RawExtension, into runtime.Object) error {
	if into == nil {
		return errors.New("admission: decode into a nil object")
	}
	if len(raw.Raw) == 0 {
		return fmt.Errorf("admission: no object to decode into %T", into)
	}
	if err := d.decodeRaw(raw.Raw, into); err != nil {
		return fmt.Errorf("admission: decode into %T: %w", into, err)
	}
	return nil
}

// decodeRaw decodes the non-empty raw into into.
func (d *decoder) decodeRaw(raw []byte, into runtime.Object) error {
	if u, ok := into.(runtime.Unstructured); ok {
		// Not u's UnmarshalJSON, which requires apiVersion and kind.
		var content map[string]any
		if err := json.Unmarshal(raw, &content); err != nil {
			return err
		}
		u.SetUnstructuredContent(content)
		return nil
	}
	if d.deserializer == nil {
		return errors.New("the Decoder has no scheme (NewDecoder(nil))")
	}
	return runtime.DecodeInto(d.deserializer, raw, into)
}

// describe names the request's object for error messages: its kind and
// namespace/name.
func describe(req Request) string {
	name := req.Name
	if req.Namespace != "" {
		name = req.Namespace + "/" + name
	}
	return fmt.Sprintf("%s %s", req.Kind.Kind, name)
}
