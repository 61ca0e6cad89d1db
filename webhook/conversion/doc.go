// Package conversion serves CustomResourceDefinition conversion webhooks:
// the API server sends an apiextensions.k8s.io/v1 ConversionReview when an
// object is read or written in a version other than the one it is stored
// in, and the Webhook converts it through the kind's hub version.
//
// One version of a kind is the Hub (usually the storage version) and the
// others are Convertible to and from it, as in controller-runtime:
//
//	func (*AppV1) Hub() {}
//
//	func (a *AppV2) ConvertTo(hub conversion.Hub) error   { h := hub.(*AppV1); ...; return nil }
//	func (a *AppV2) ConvertFrom(hub conversion.Hub) error { h := hub.(*AppV1); ...; return nil }
//
//	server.Register("/convert", conversion.NewWebhook(scheme))
//
// One Webhook serves every kind of its scheme; webhook.ManagedBy registers
// it at /convert for a kind that IsConvertible.
//
// Guarantees:
//   - A request that cannot be read (not a POST, not application/json,
//     empty, over MaxRequestBytes, malformed, not a v1 ConversionReview
//     with a request) gets a 4xx status and a message, never a panic.
//   - Objects already in the desired version are passed back unchanged;
//     the others are converted hub-to-spoke, spoke-to-hub, or
//     spoke-to-hub-to-spoke, and come back in the request's order with
//     apiVersion and kind set to the desired version.
//   - Any failure, including a panic in ConvertTo or ConvertFrom (logged,
//     and, on a webhook.Server, counted in
//     controller_runtime_conversion_webhook_panics_total and
//     controller_runtime_webhook_panics_total{webhook}), answers the whole review with Result Failure and a message
//     naming the object's index and versions; the API server then fails the
//     client's request with that message.
//
// The review types are declared here (Review, Request, Response mirror
// apiextensions.k8s.io/v1 ConversionReview, ConversionRequest,
// ConversionResponse) so that the library need not depend on
// k8s.io/apiextensions-apiserver.
package conversion
