// Package serving is the one request path the admission and the
// conversion webhooks share: Serve reads a review from an HTTP request,
// checks it, hands it to the webhook and writes the webhook's answer; the
// package also carries recovered panics to the server that counts them.
//
// Guarantees:
//   - A request that is not a POST is answered 405; one without an
//     application/json content type, with an empty, unreadable or
//     malformed body, of another apiVersion or kind, or without a request,
//     400; a body over the protocol's limit, 413. Each such answer is a
//     review of the protocol's own kind whose status carries the same code
//     and a message that says what is wrong, prefixed with the protocol's
//     name ("admission: ...", "conversion: ...").
//   - The webhook's answer func sees only reviews that passed every check;
//     its review is written with status 200.
//   - An answer that cannot be encoded is a plain 500; a failed write is
//     logged on the context's logger, never retried.
//   - RecordPanic and RecordConversionPanic reach the Recorder of the
//     request's context, if any, and do nothing without one.
package serving
