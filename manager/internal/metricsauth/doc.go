// Package metricsauth is the engine behind manager.MetricsAuth and
// manager.WithAuthenticationAndAuthorization: an HTTP filter that lets a
// request through only when the API server says its bearer token is valid
// (a TokenReview) and its user may perform the request's verb on its path
// as a non-resource URL (a SubjectAccessReview), with the answers cached.
// The manager's package doc states what users see; this package is the
// seam where the parsing, the caches and their bounds are tested without
// a server.
//
// Guarantees:
//   - Fails closed: no token or an invalid one answers 401, a denied user
//     403, a review that could not be made 500; none reaches the handler.
//   - The Authorization header is parsed as the API server's bearer token
//     authenticator does (scheme in any case, single spaces), and is
//     removed from a request let through.
//   - The user's groups gain system:authenticated unless the user is
//     anonymous or already in system:authenticated or
//     system:unauthenticated, as the API server's delegating authenticator
//     does.
//   - Answers are cached under a sha256 digest of length-prefixed fields
//     (the token; the user's name, UID, groups, extra, the verb and path),
//     never the token itself; positive and negative answers in separate
//     LRUs of at most Config.CacheSize entries each, so garbage tokens
//     cannot evict valid ones nor grow memory past the bound.
//   - Errors are never cached; concurrent misses on one key share one
//     review, detached from the request that started it and bounded by
//     Config.ReviewTimeout; a waiter whose request ends returns at once, and
//     a review that panics releases its waiters with an error.
package metricsauth
