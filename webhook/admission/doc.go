// Package admission answers the API server's admission requests
// (admission.k8s.io/v1 AdmissionReview): typed defaulting and validation
// for one kind, and raw handlers for anything else.
//
// A typed webhook needs only the object's logic:
//
//	type appDefaulter struct{}
//
//	func (appDefaulter) Default(ctx context.Context, app *App) error {
//		if app.Spec.Replicas == 0 {
//			app.Spec.Replicas = 1
//		}
//		return nil
//	}
//
//	server.Register("/mutate-apps-example-com-v1-app", admission.WithDefaulter(scheme, appDefaulter{}))
//
// webhook.ManagedBy does that registration, with controller-runtime's paths,
// in one call. A raw handler sees the whole request, and decodes its
// objects with a Decoder, as in controller-runtime:
//
//	decoder := admission.NewDecoder(scheme)
//	server.Register("/validate-pods", &admission.Webhook{Handler: admission.HandlerFunc(
//		func(ctx context.Context, req admission.Request) admission.Response {
//			pod := &corev1.Pod{}
//			if err := decoder.Decode(req, pod); err != nil {
//				return admission.Errored(http.StatusBadRequest, err)
//			}
//			return admission.Denied("no")
//		})})
//
// Guarantees:
//   - A request that cannot be read (not a POST, not application/json,
//     empty, over MaxRequestBytes, malformed JSON, not an
//     admission.k8s.io/v1 AdmissionReview with a request) is answered with a
//     4xx status and a message, never a panic; the handler is not called.
//   - A request of another kind than a typed webhook's T, or whose object
//     does not decode as T, is denied with code 400 and a message naming
//     both kinds or the decode error.
//   - A handler panic is recovered, logged with its stack, counted, and
//     answered allowed=false with code 500; the panic value is not sent to
//     the client.
//   - A defaulter's answer is an RFC 6902 JSON patch against the object the
//     API server sent, holding only what the defaulter changed.
//   - Every answer carries the request's UID and a status code
//     (Response.Complete); Webhook.Handle does the same without HTTP.
//   - The Handler's context carries the request (RequestFromContext) and a
//     logger with the request's identity (LogConstructor,
//     DefaultLogConstructor).
//   - The typed webhooks decode through the same Decoder as raw handlers;
//     *unstructured.Unstructured takes the JSON as it is.
//
// Differences from controller-runtime: CustomDefaulter and CustomValidator
// (the untyped forms, WithCustomDefaulter, WithCustomValidator) are
// interfaces of their own, not Defaulter[runtime.Object], since T here is
// a client.Object; DefaulterRemoveUnknownOrOmitableFields is accepted and
// changes nothing (the patch never removes fields the Go type does not
// know); Response.Patches holds
// PatchOperation values (controller-runtime: gomodules' JsonPatchOperation,
// whose field is named Operation, here Op); NewDecoder(nil) returns a
// Decoder whose typed decodes fail instead of panicking; only
// admission.k8s.io/v1 reviews are read (not v1beta1); StandaloneWebhook
// is absent (a Webhook is an http.Handler; serve it from any server).
package admission
