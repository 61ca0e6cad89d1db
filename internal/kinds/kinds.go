// Package kinds is the one home of the conventions by which every package
// names kinds and objects in its errors and logs:
//
//   - a kind reads "apps/v1, Kind=Deployment" or "v1, Kind=ConfigMap"
//     (String), the form of schema.GroupVersionKind's own String;
//   - an object reads "namespace/name", or "name" when cluster-scoped (Key);
//   - a failed operation reads "<verb> <kind> <object>: <cause>" (OpError),
//     with the verb in lower case and the cause wrapped for errors.Is/As,
//     but for an error of the API server, returned as it is (it names
//     the resource and the object itself);
//   - a list kind names its items' kind without "List" (TrimList);
//   - a nil object, or a typed nil, is refused before anything else (IsNil).
package kinds

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// String formats gvk the way errors name kinds: "apps/v1, Kind=Deployment"
// or "v1, Kind=ConfigMap".
func String(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + ", Kind=" + gvk.Kind
}

// Key formats a namespace and name as "namespace/name", "name" when the
// namespace is empty, and "namespace" when the name is (a collection).
func Key(namespace, name string) string {
	switch {
	case namespace == "":
		return name
	case name == "":
		return namespace
	}
	return namespace + "/" + name
}

// OpError wraps err with the verb and the object it concerns:
// "get v1, Kind=ConfigMap default/web: <err>". It returns nil for a nil err,
// and an error of the API server (an apierrors.APIStatus, such as the
// NotFound a cache or a fake makes as the server would) as it is: its text
// already names the resource and the object (`configmaps "web" not found`)
// and is what controller-runtime returns, which operators copy into
// conditions and events and their tests compare.
func OpError(verb string, gvk schema.GroupVersionKind, namespace, name string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	target := String(gvk)
	if k := Key(namespace, name); k != "" {
		target += " " + k
	}
	return fmt.Errorf("%s %s: %w", verb, target, err)
}

// IsNil reports whether obj is nil or a typed nil (pointer, map, slice or
// interface): what the client and its fake refuse before they look at an
// object.
func IsNil(obj any) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// TrimList returns the kind of a list's items: "ConfigMapList" gives
// "ConfigMap". A kind without the suffix, and "List" itself, are returned
// as they are.
func TrimList(kind string) string {
	if len(kind) > len("List") {
		return strings.TrimSuffix(kind, "List")
	}
	return kind
}

// Errors for a bad object key, shared by the client and the cache so that
// both paths answer alike; the client package exports them.
var (
	// ErrNameRequired: an object that needs a name has none.
	ErrNameRequired = errors.New("client: name is required")
	// ErrNamespaceRequired: a namespaced object without a namespace.
	ErrNamespaceRequired = errors.New("client: namespace is required for a namespaced kind")
	// ErrNamespaceInvalid: a namespace that is not a valid namespace name.
	ErrNamespaceInvalid = errors.New("client: invalid namespace")
)

// CheckKey validates the namespace and name of one object of kind gvk, in
// a key or in the metadata of an object written: a name, and for a
// namespaced kind a namespace that is a valid namespace name. A namespace
// given for a cluster-scoped kind is ignored, in reads and writes alike,
// as the API server does (it clears the field of a written object). The
// error is an OpError of verb.
func CheckKey(verb string, gvk schema.GroupVersionKind, namespaced bool, namespace, name string) error {
	var err error
	switch {
	case name == "":
		err = ErrNameRequired
	case namespaced && namespace == "":
		err = ErrNamespaceRequired
	case namespaced && !isDNSLabel(namespace):
		err = fmt.Errorf("%w %q: a namespace is a lowercase RFC 1123 label "+
			"(at most 63 of a-z, 0-9 and '-', starting and ending with a letter or digit)", ErrNamespaceInvalid, namespace)
	default:
		return nil
	}
	return OpError(verb, gvk, namespace, name, err)
}

// isDNSLabel reports whether s is a lowercase RFC 1123 label, the form of
// namespace names, without the cost of a regular expression (it runs on
// every cached Get).
func isDNSLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(s)-1:
		default:
			return false
		}
	}
	return true
}
