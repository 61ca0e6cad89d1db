package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// Defaulter sets the defaults of objects of one kind before they are
// stored. It is controller-runtime's Defaulter[T]; its older untyped form
// is CustomDefaulter.
type Defaulter[T runtime.Object] interface {
	// Default changes obj in place. An error rejects the request (an API
	// status error keeps its code, any other error is a 403 with its text).
	Default(ctx context.Context, obj T) error
}

// DefaulterFunc adapts a function to a Defaulter.
type DefaulterFunc[T runtime.Object] func(ctx context.Context, obj T) error

// Default calls f(ctx, obj).
func (f DefaulterFunc[T]) Default(ctx context.Context, obj T) error { return f(ctx, obj) }

// Validator checks objects of one kind on create, update and delete. It is
// controller-runtime's Validator[T]; its older untyped form is
// CustomValidator.
type Validator[T runtime.Object] interface {
	// ValidateCreate checks a new object.
	ValidateCreate(ctx context.Context, obj T) (Warnings, error)
	// ValidateUpdate checks a change from oldObj to newObj.
	ValidateUpdate(ctx context.Context, oldObj, newObj T) (Warnings, error)
	// ValidateDelete checks the deletion of obj.
	ValidateDelete(ctx context.Context, obj T) (Warnings, error)
}

// WithDefaulter returns a mutating Webhook that decodes the object of each
// CREATE and UPDATE request as a T, calls d, and answers with a JSON patch
// of what d changed (only that: fields unknown to T and values that merely
// re-encode differently are left alone). Other operations are allowed
// untouched. T must be a pointer type registered in scheme, or
// *unstructured.Unstructured (which accepts any kind).
func WithDefaulter[T runtime.Object](scheme *runtime.Scheme, d Defaulter[T], _ ...DefaulterOption) *Webhook {
	return defaulting(newDecoder[T](scheme), d.Default)
}

// defaulting is the mutating Webhook of WithDefaulter and
// WithCustomDefaulter: dec decodes, d defaults.
func defaulting[T runtime.Object](dec *typedDecoder[T], d func(context.Context, T) error) *Webhook {
	return &Webhook{Handler: HandlerFunc(func(ctx context.Context, req Request) Response {
		if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
			return Allowed("")
		}
		obj, resp, ok := dec.decode(req, req.Object)
		if !ok {
			return resp
		}
		before, err := json.Marshal(obj)
		if err != nil {
			return Errored(http.StatusInternalServerError, fmt.Errorf("admission: encode %s: %w", describe(req), err))
		}
		if err := d(ctx, obj); err != nil {
			return deniedFromError(err)
		}
		after, err := json.Marshal(obj)
		if err != nil {
			return Errored(http.StatusInternalServerError, fmt.Errorf("admission: encode defaulted %s: %w", describe(req), err))
		}
		patches, err := defaultingPatch(req.Object.Raw, before, after)
		if err != nil {
			return Errored(http.StatusInternalServerError, err)
		}
		return Patched("", patches...)
	})}
}

// WithValidator returns a validating Webhook that decodes the objects of
// each request as T and calls v: ValidateCreate on CREATE, ValidateUpdate
// on UPDATE (old and new object), ValidateDelete on DELETE (the old
// object). CONNECT is allowed. An error denies the request with its text
// (an API status error keeps its code); warnings are passed on either way.
// T is as for WithDefaulter.
func WithValidator[T runtime.Object](scheme *runtime.Scheme, v Validator[T]) *Webhook {
	return validating(newDecoder[T](scheme), v)
}

// validating is the validating Webhook of WithValidator and
// WithCustomValidator.
func validating[T runtime.Object](dec *typedDecoder[T], v Validator[T]) *Webhook {
	return &Webhook{Handler: HandlerFunc(func(ctx context.Context, req Request) Response {
		var (
			warnings Warnings
			err      error
		)
		switch req.Operation {
		case admissionv1.Create:
			obj, resp, ok := dec.decode(req, req.Object)
			if !ok {
				return resp
			}
			warnings, err = v.ValidateCreate(ctx, obj)
		case admissionv1.Update:
			obj, resp, ok := dec.decode(req, req.Object)
			if !ok {
				return resp
			}
			old, resp, ok := dec.decode(req, req.OldObject)
			if !ok {
				return resp
			}
			warnings, err = v.ValidateUpdate(ctx, old, obj)
		case admissionv1.Delete:
			old, resp, ok := dec.decode(req, req.OldObject)
			if !ok {
				return resp
			}
			warnings, err = v.ValidateDelete(ctx, old)
		default:
			return Allowed("")
		}
		if err != nil {
			return deniedFromError(err).WithWarnings(warnings...)
		}
		return Allowed("").WithWarnings(warnings...)
	})}
}

// typedDecoder turns the raw objects of requests into Ts, through the
// Decoder raw handlers use.
type typedDecoder[T runtime.Object] struct {
	typ          reflect.Type // T's element type
	gvk          schema.GroupVersionKind
	gvkErr       error
	unstructured bool
	decoder      *decoder
}

func newDecoder[T runtime.Object](scheme *runtime.Scheme) *typedDecoder[T] {
	return newDecoderOf[T](scheme, reflect.TypeFor[T]())
}

// newDecoderOf is newDecoder for objects of typ, a pointer type that
// implements T (for example *corev1.Pod with T client.Object).
func newDecoderOf[T runtime.Object](scheme *runtime.Scheme, typ reflect.Type) *typedDecoder[T] {
	d := &typedDecoder[T]{typ: typ, decoder: NewDecoder(scheme).(*decoder)}
	if d.typ.Kind() != reflect.Pointer {
		d.gvkErr = fmt.Errorf("admission: %s is not a pointer type", d.typ)
		return d
	}
	d.typ = d.typ.Elem()
	obj := d.newObject()
	if d.unstructured = apiutil.IsUnstructured(obj); d.unstructured {
		return d
	}
	if scheme == nil {
		d.gvkErr = errors.New("admission: no scheme")
		return d
	}
	d.gvk, d.gvkErr = apiutil.GVKForObject(obj, scheme)
	return d
}

func (d *typedDecoder[T]) newObject() T {
	return reflect.New(d.typ).Interface().(T)
}

// decode decodes raw as a T. When it cannot, it returns the answer: a 500
// for a webhook that is misconfigured, a 400 for a request of another kind
// or an undecodable object.
func (d *typedDecoder[T]) decode(req Request, raw runtime.RawExtension) (T, Response, bool) {
	var zero T
	if d.gvkErr != nil {
		return zero, Errored(http.StatusInternalServerError, d.gvkErr), false
	}
	if !d.unstructured {
		got := schema.GroupVersionKind(req.Kind)
		if got != d.gvk {
			return zero, Errored(http.StatusBadRequest, fmt.Errorf("admission: this webhook serves %s; the request is for %s", kinds.String(d.gvk), kinds.String(got))), false
		}
	}
	if len(raw.Raw) == 0 {
		return zero, Errored(http.StatusBadRequest, fmt.Errorf("admission: %s request for %s has no object", req.Operation, describe(req))), false
	}
	obj := d.newObject()
	if err := d.decoder.decodeRaw(raw.Raw, obj); err != nil {
		return zero, Errored(http.StatusBadRequest, fmt.Errorf("admission: decode %s: %w", describe(req), err)), false
	}
	return obj, Response{}, true
}
