package admission

import (
	"context"
	"fmt"
	"net/http"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/client"
)

// CustomDefaulter is the untyped Defaulter of controller-runtime's older
// webhooks: Default gets the decoded object as a runtime.Object (a
// pointer of the prototype's type) and asserts it. It is registered with
// WithCustomDefaulter or Builder.WithCustomDefaulter. New code uses
// Defaulter[T].
type CustomDefaulter interface {
	// Default changes obj in place, as Defaulter.Default does.
	Default(ctx context.Context, obj runtime.Object) error
}

// CustomValidator is the untyped Validator of controller-runtime's older
// webhooks, registered with WithCustomValidator or
// Builder.WithCustomValidator. New code uses Validator[T].
type CustomValidator interface {
	// ValidateCreate checks a new object.
	ValidateCreate(ctx context.Context, obj runtime.Object) (Warnings, error)
	// ValidateUpdate checks a change from oldObj to newObj.
	ValidateUpdate(ctx context.Context, oldObj, newObj runtime.Object) (Warnings, error)
	// ValidateDelete checks the deletion of obj.
	ValidateDelete(ctx context.Context, obj runtime.Object) (Warnings, error)
}

// DefaulterOption configures a defaulting webhook. It exists for
// controller-runtime's signatures: its one option,
// DefaulterRemoveUnknownOrOmitableFields, is what kubeloop's patch always
// does (see the package doc), so options change nothing.
type DefaulterOption func(*defaulterOptions)

type defaulterOptions struct{}

// DefaulterRemoveUnknownOrOmitableFields is accepted for
// controller-runtime's signatures and changes nothing: kubeloop's
// defaulting patch never removes fields the Go type does not know, nor
// values that merely re-encode differently.
func DefaulterRemoveUnknownOrOmitableFields(*defaulterOptions) {}

// WithCustomDefaulter returns a mutating Webhook, as WithDefaulter does,
// that decodes each object as a new value of obj's type (a pointer type
// registered in scheme, or *unstructured.Unstructured) and calls d.
func WithCustomDefaulter(scheme *runtime.Scheme, obj runtime.Object, d CustomDefaulter, _ ...DefaulterOption) *Webhook {
	dec, bad := customDecoder(scheme, obj, "WithCustomDefaulter")
	if bad != nil {
		return bad
	}
	if d == nil {
		return failing(fmt.Errorf("admission: WithCustomDefaulter for %T: nil defaulter", obj))
	}
	return defaulting(dec, func(ctx context.Context, o client.Object) error { return d.Default(ctx, o) })
}

// WithCustomValidator returns a validating Webhook, as WithValidator does,
// that decodes each object as a new value of obj's type and calls v.
func WithCustomValidator(scheme *runtime.Scheme, obj runtime.Object, v CustomValidator) *Webhook {
	dec, bad := customDecoder(scheme, obj, "WithCustomValidator")
	if bad != nil {
		return bad
	}
	if v == nil {
		return failing(fmt.Errorf("admission: WithCustomValidator for %T: nil validator", obj))
	}
	return validating(dec, customValidator{v})
}

// customDecoder is the decoder of obj's type, or a Webhook that answers
// every request with the reason there is none.
func customDecoder(scheme *runtime.Scheme, obj runtime.Object, fn string) (*typedDecoder[client.Object], *Webhook) {
	if _, ok := obj.(client.Object); !ok || obj == nil || reflect.ValueOf(obj).Kind() != reflect.Pointer {
		return nil, failing(fmt.Errorf("admission: %s: the prototype %T is not a pointer to an object with metadata", fn, obj))
	}
	return newDecoderOf[client.Object](scheme, reflect.TypeOf(obj)), nil
}

// failing is a Webhook that answers every request with a 500 naming err:
// a misconfigured webhook fails its requests instead of panicking.
func failing(err error) *Webhook {
	return &Webhook{Handler: HandlerFunc(func(context.Context, Request) Response {
		return Errored(http.StatusInternalServerError, err)
	})}
}

// customValidator adapts a CustomValidator to Validator[client.Object].
type customValidator struct{ v CustomValidator }

func (c customValidator) ValidateCreate(ctx context.Context, obj client.Object) (Warnings, error) {
	return c.v.ValidateCreate(ctx, obj)
}

func (c customValidator) ValidateUpdate(ctx context.Context, oldObj, newObj client.Object) (Warnings, error) {
	return c.v.ValidateUpdate(ctx, oldObj, newObj)
}

func (c customValidator) ValidateDelete(ctx context.Context, obj client.Object) (Warnings, error) {
	return c.v.ValidateDelete(ctx, obj)
}
