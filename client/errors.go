package client

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client/internal/live"

	"github.com/kubeloop/kubeloop/internal/kinds"
)

// Errors for bad input. They are wrapped with the verb and the object, so
// test them with errors.Is.
var (
	// ErrNilObject is returned for a nil object or list.
	ErrNilObject = live.ErrNilObject
	// ErrNameRequired is returned when an object that needs a name has
	// none, by the live client and the cache alike.
	ErrNameRequired = kinds.ErrNameRequired
	// ErrNamespaceRequired is returned for a namespaced object without a
	// namespace, by the live client and the cache alike.
	ErrNamespaceRequired = kinds.ErrNamespaceRequired
	// ErrNamespaceInvalid is returned for a namespace that is not a valid
	// namespace name (a lowercase RFC 1123 label).
	ErrNamespaceInvalid = kinds.ErrNamespaceInvalid
	// ErrNotSupported is returned for a verb an object form does not
	// support, such as Create of a PartialObjectMetadata.
	ErrNotSupported = live.ErrNotSupported
	// ErrDeleteEverything is returned by DeleteAllOf when it has no
	// namespace and no label or field selector, which would delete every
	// object of the kind in the cluster, and the DeleteEverything option
	// was not given.
	ErrDeleteEverything = live.ErrDeleteEverything
)

// IgnoreNotFound returns nil when err is a NotFound API error, else err.
func IgnoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// IgnoreAlreadyExists returns nil when err is an AlreadyExists API error,
// else err.
func IgnoreAlreadyExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// KindString formats gvk the way this package's errors name kinds:
// "apps/v1, Kind=Deployment" or "v1, Kind=ConfigMap".
func KindString(gvk schema.GroupVersionKind) string { return kinds.String(gvk) }

// opError wraps err with the verb and the object it concerns (the one
// home of the format is internal/kinds, shared with client/fake).
var opError = kinds.OpError

// isNil reports whether obj is nil or a typed nil (kinds.IsNil).
var isNil = kinds.IsNil

// nilError reports a nil object for verb.
var nilError = live.NilError

// InvalidSelectorError returns the error of a label selector built by an
// option from bad input (for example HasLabels with an invalid key), or nil
// when sel is nil or valid. Every Reader calls it before listing.
func InvalidSelectorError(sel labels.Selector) error { return live.SelectorError(sel) }
