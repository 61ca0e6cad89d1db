// Package faultproxy is test infrastructure: an HTTPS reverse proxy between
// a client under test and a real kube-apiserver that injects faults on
// demand. It is not user API.
//
// The proxy terminates TLS with a CA of its own and forwards every request
// upstream with the credentials of the rest.Config it was built from, so
// the client under test needs no credentials of its own: Config returns a
// rest.Config that points at the proxy and trusts its CA. One proxy stands
// for one identity; build one per client whose traffic must be faulted on
// its own (a leader to pause, a user without RBAC permissions).
//
//	p, err := faultproxy.New(adminConfig)
//	defer p.Close()
//	cfg := p.Config() // give this to the manager under test
//	remove := p.AddRule(faultproxy.Rule{Match: faultproxy.Watches, Status: 410})
//	p.CutWatches()    // every open watch ends now
//	p.Freeze()        // existing connections stop forwarding bytes, stay open
//	p.Blackhole(true) // every connection, old and new, stops forwarding
//	p.Reject(faultproxy.ResetConnections) // every connection is reset on arrival
//
// Faults:
//   - Rules answer matching requests with a metav1.Status of a given code
//     (410, 429 with Retry-After, 500, 403, ...), a number of times or
//     until removed. A rule with Hold answers nothing (the request hangs
//     until the client gives up); one with Rewrite changes the request
//     (its query, say) and forwards it.
//   - CutWatches ends every open watch stream cleanly; WatchLifetime ends
//     each new watch after a delay; EventDelay holds each chunk of a watch
//     stream (one event, as the API server flushes them) before passing it
//     on, in order.
//   - Freeze stops every connection open now from forwarding bytes in
//     either direction without closing it (a half-open TCP connection);
//     new connections work. Blackhole does the same to every connection,
//     including new ones, until turned off (a paused process or a network
//     partition).
//   - Reject(CloseConnections) and Reject(ResetConnections) end every
//     connection open now and accept each new one only to close it at once
//     (FIN) or reset it (RST), before reading a byte: a load balancer with
//     no backend, or an API server restarting. Reject(Pass) ends it.
//
// Every request is recorded (time, method, path, watch or not, status), so
// tests can count requests over a window.
package faultproxy
