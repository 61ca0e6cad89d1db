package webhook

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/webhook/admission"
	"github.com/kubeloop/kubeloop/webhook/conversion"
)

// ConvertPath is where ManagedBy registers the conversion webhook, shared
// by every kind of the scheme (controller-runtime's path).
const ConvertPath = "/convert"

// Manager is what ManagedBy needs of a manager; the manager package's
// Manager satisfies it.
type Manager interface {
	// GetScheme returns the scheme that maps Go types to kinds.
	GetScheme() *runtime.Scheme
	// GetWebhookServer returns the server the webhooks are registered on.
	GetWebhookServer() *Server
}

// MutatePath returns the path of gvk's defaulting webhook,
// controller-runtime's "/mutate-<group, dots as dashes>-<version>-<kind, lower case>",
// for example "/mutate-apps-example-com-v1-app" (core kinds:
// "/mutate--v1-configmap").
func MutatePath(gvk schema.GroupVersionKind) string { return "/mutate-" + pathSuffix(gvk) }

// ValidatePath returns the path of gvk's validating webhook, like
// MutatePath with "/validate-".
func ValidatePath(gvk schema.GroupVersionKind) string { return "/validate-" + pathSuffix(gvk) }

func pathSuffix(gvk schema.GroupVersionKind) string {
	return strings.ReplaceAll(gvk.Group, ".", "-") + "-" + gvk.Version + "-" + strings.ToLower(gvk.Kind)
}

// Builder registers the webhooks of one kind; ManagedBy starts one.
type Builder[T runtime.Object] struct {
	mgr             Manager
	obj             T
	defaulter       admission.Defaulter[T]
	validator       admission.Validator[T]
	customDefaulter admission.CustomDefaulter
	customValidator admission.CustomValidator
}

// ManagedBy starts registering webhooks for the kind of obj (a prototype,
// for example &App{}) on mgr's webhook server:
//
//	err := webhook.ManagedBy(mgr, &App{}).WithDefaulter(d).WithValidator(v).Complete()
func ManagedBy[T runtime.Object](mgr Manager, obj T) *Builder[T] {
	return &Builder[T]{mgr: mgr, obj: obj}
}

// WithDefaulter serves d at MutatePath(kind). The options are accepted
// for controller-runtime's signature (see admission.DefaulterOption).
func (b *Builder[T]) WithDefaulter(d admission.Defaulter[T], _ ...admission.DefaulterOption) *Builder[T] {
	b.defaulter = d
	return b
}

// WithValidator serves v at ValidatePath(kind).
func (b *Builder[T]) WithValidator(v admission.Validator[T]) *Builder[T] {
	b.validator = v
	return b
}

// WithCustomDefaulter serves d, an untyped defaulter whose Default takes a
// runtime.Object, at MutatePath(kind): controller-runtime's older form
// (what its WithDefaulter took before v0.23). Only one of WithDefaulter
// and WithCustomDefaulter may be used; Complete fails otherwise.
func (b *Builder[T]) WithCustomDefaulter(d admission.CustomDefaulter, _ ...admission.DefaulterOption) *Builder[T] {
	b.customDefaulter = d
	return b
}

// WithCustomValidator serves v, an untyped validator, at
// ValidatePath(kind), as WithCustomDefaulter does for defaulters. Only
// one of WithValidator and WithCustomValidator may be used.
func (b *Builder[T]) WithCustomValidator(v admission.CustomValidator) *Builder[T] {
	b.customValidator = v
	return b
}

// Complete registers the defaulter, the validator and, when the kind's
// versions in the scheme are a Hub and Convertibles
// (conversion.IsConvertible), the conversion webhook at ConvertPath (once
// per server). It registers nothing and returns an error when the kind is
// not in the scheme, a path is taken, the conversion setup is half done, or
// there is nothing to register.
func (b *Builder[T]) Complete() error {
	if b.mgr == nil {
		return errors.New("webhook: ManagedBy needs a manager")
	}
	scheme, srv := b.mgr.GetScheme(), b.mgr.GetWebhookServer()
	if scheme == nil || srv == nil {
		return errors.New("webhook: the manager has no scheme or no webhook server")
	}
	gvk, err := apiutil.GVKForObject(b.obj, scheme)
	if err != nil {
		return fmt.Errorf("webhook: kind of %T: %w", b.obj, err)
	}
	if b.defaulter != nil && b.customDefaulter != nil {
		return fmt.Errorf("webhook: %s: only one of WithDefaulter and WithCustomDefaulter can be used", gvk.Kind)
	}
	if b.validator != nil && b.customValidator != nil {
		return fmt.Errorf("webhook: %s: only one of WithValidator and WithCustomValidator can be used", gvk.Kind)
	}
	routes := map[string]http.Handler{}
	switch {
	case b.defaulter != nil:
		routes[MutatePath(gvk)] = admission.WithDefaulter(scheme, b.defaulter)
	case b.customDefaulter != nil:
		routes[MutatePath(gvk)] = admission.WithCustomDefaulter(scheme, b.obj, b.customDefaulter)
	}
	switch {
	case b.validator != nil:
		routes[ValidatePath(gvk)] = admission.WithValidator(scheme, b.validator)
	case b.customValidator != nil:
		routes[ValidatePath(gvk)] = admission.WithCustomValidator(scheme, b.obj, b.customValidator)
	}
	convertible := false
	if !apiutil.IsUnstructured(b.obj) {
		if convertible, err = conversion.IsConvertible(scheme, b.obj); err != nil {
			return fmt.Errorf("webhook: %s: %w", gvk.Kind, err)
		}
	}
	if len(routes) == 0 && !convertible {
		return fmt.Errorf("webhook: %s has no defaulter, validator or conversion to register", gvk)
	}
	for path := range routes {
		if srv.registered(path) {
			return fmt.Errorf("webhook: %s: path %s is already registered", gvk.Kind, path)
		}
	}
	for path, h := range routes {
		if err := srv.register(path, h); err != nil {
			return err
		}
	}
	if convertible && !srv.registered(ConvertPath) {
		if err := srv.register(ConvertPath, conversion.NewWebhook(scheme)); err != nil {
			return err
		}
	}
	return nil
}
