// Package scoped is the namespace logic of client.NewNamespacedClient:
// which namespace a request about an object's kind uses.
//
// Guarantees:
//   - A namespaced kind gets the client's namespace when it names none,
//     and is refused with ErrMismatch when it names another.
//   - A cluster-scoped kind passes through untouched.
//   - An apply configuration gets its namespace through SetNamespace (an
//     unstructured one) or the WithNamespace(string) method every
//     generated configuration has; one with neither is refused.
package scoped

import (
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/client/internal/live"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// ErrMismatch is client.ErrNamespaceMismatch.
var ErrMismatch = errors.New("client: namespace does not match the namespaced client's")

// Scope is a namespace and how to learn kinds and their scopes.
type Scope struct {
	Namespace string
	GVKFor    func(runtime.Object) (schema.GroupVersionKind, error)
	Mapper    func() meta.RESTMapper
}

// Of returns the namespace a request about obj's kind uses: the scope's
// for a namespaced kind (given must be empty or equal), given unchanged
// for a cluster-scoped one. It reports whether the kind is namespaced.
func (s Scope) Of(verb string, obj runtime.Object, given string) (string, bool, error) {
	if kinds.IsNil(obj) {
		return given, false, nil // the wrapped client reports it
	}
	gvk, err := s.GVKFor(obj)
	if err != nil {
		return given, false, fmt.Errorf("%s %T: %w", verb, obj, err)
	}
	if _, isList := obj.(metav1.ListInterface); isList {
		gvk.Kind = kinds.TrimList(gvk.Kind)
	}
	namespaced, err := apiutil.IsGVKNamespaced(gvk, s.Mapper())
	if err != nil {
		return given, false, fmt.Errorf("%s %T: %w", verb, obj, err)
	}
	if !namespaced {
		return given, false, nil
	}
	if given != "" && given != s.Namespace {
		return given, true, fmt.Errorf("%s %T in %q: %w %q", verb, obj, given, ErrMismatch, s.Namespace)
	}
	return s.Namespace, true, nil
}

// Object sets obj's namespace to the scope's for a namespaced kind.
func (s Scope) Object(verb string, obj live.Object) error {
	if kinds.IsNil(obj) {
		return nil
	}
	ns, namespaced, err := s.Of(verb, obj, obj.GetNamespace())
	if err == nil && namespaced {
		obj.SetNamespace(ns)
	}
	return err
}

// Apply sets the namespace of an apply configuration of a namespaced kind.
func (s Scope) Apply(verb string, obj runtime.ApplyConfiguration) error {
	at, err := live.ApplyTargetOf(obj)
	if err != nil {
		return nil // the wrapped client reports it
	}
	namespaced, err := apiutil.IsGVKNamespaced(at.GVK, s.Mapper())
	if err != nil {
		return fmt.Errorf("%s %s: %w", verb, kinds.String(at.GVK), err)
	}
	if !namespaced {
		return nil
	}
	switch {
	case at.Namespace == s.Namespace:
		return nil
	case at.Namespace != "":
		return fmt.Errorf("%s %s %s/%s: %w %q", verb, kinds.String(at.GVK), at.Namespace, at.Name, ErrMismatch, s.Namespace)
	}
	if u, ok := obj.(interface{ SetNamespace(string) }); ok {
		u.SetNamespace(s.Namespace)
		return nil
	}
	m := reflect.ValueOf(obj).MethodByName("WithNamespace")
	if !m.IsValid() || m.Type().NumIn() != 1 || m.Type().In(0).Kind() != reflect.String {
		return fmt.Errorf("%s %T: cannot set the namespace (no WithNamespace(string) method): %w", verb, obj, kinds.ErrNamespaceRequired)
	}
	m.Call([]reflect.Value{reflect.ValueOf(s.Namespace)})
	return nil
}
