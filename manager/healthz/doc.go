// Package healthz serves liveness and readiness probes the way Kubernetes
// components do.
//
// A Checker is a func(*http.Request) error; nil means healthy. A Handler
// holds named checks; mounted with http.StripPrefix("/healthz", h) on both
// "/healthz" and "/healthz/", it answers:
//
//	GET /healthz            200 "ok", or 500 listing every check
//	GET /healthz?verbose    200 or 500, listing every check either way
//	GET /healthz?exclude=a  skips check a (repeatable)
//	GET /healthz/a          runs only check a (404 if there is none)
//
// Each listed check is a line "[+]name ok" or "[-]name failed: reason"; a
// check that passes with a remark (it returns a Note) is "[+]name ok: remark".
// Unlike kube-apiserver, which withholds reasons, the reason is printed: an
// operator's probe port is not public, and "[-]cache failed: list
// v1/Secret: forbidden" is what a human debugging a stuck rollout needs.
//
// Guarantees:
//   - Checks run in name order, one at a time, with the request's context.
//   - A Handler with no checks is healthy.
//   - Checks can be added while the handler serves; names are unique.
//   - No global state: Handlers are values you create and mount.
package healthz
