package conversion

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Hub marks the version of a kind that every other version converts
// through, usually the storage version. Hub() does nothing.
type Hub interface {
	runtime.Object
	// Hub marks the type.
	Hub()
}

// Convertible is a version of a kind that converts to and from its Hub.
type Convertible interface {
	runtime.Object
	// ConvertTo fills hub from the receiver.
	ConvertTo(hub Hub) error
	// ConvertFrom fills the receiver from hub.
	ConvertFrom(hub Hub) error
}

// The wire types below mirror apiextensions.k8s.io/v1 ConversionReview,
// ConversionRequest and ConversionResponse, field for field and with the
// same JSON names. They are declared here because
// k8s.io/apiextensions-apiserver, where the originals live, is a large
// module (the whole CRD API server) that the library does not depend on
// for three plain structs.

// Review is an apiextensions.k8s.io/v1 ConversionReview: the API server
// sends one with Request set and expects it back with Response set.
type Review struct {
	metav1.TypeMeta `json:",inline"`
	// Request is what to convert.
	Request *Request `json:"request,omitempty"`
	// Response is the answer.
	Response *Response `json:"response,omitempty"`
}

// Request asks to convert Objects to DesiredAPIVersion.
type Request struct {
	// UID identifies this conversion; the Response repeats it.
	UID types.UID `json:"uid"`
	// DesiredAPIVersion is the group/version to convert to.
	DesiredAPIVersion string `json:"desiredAPIVersion"`
	// Objects are the objects to convert, possibly of several versions.
	Objects []runtime.RawExtension `json:"objects"`
}

// Response holds the converted objects, in the order of the Request's.
type Response struct {
	// UID is the Request's UID.
	UID types.UID `json:"uid"`
	// ConvertedObjects are the converted objects.
	ConvertedObjects []runtime.RawExtension `json:"convertedObjects"`
	// Result is Status "Success", or "Failure" with a Message.
	Result metav1.Status `json:"result"`
}
