// Package serving is the plumbing of the manager's HTTP servers: a Server
// that listens (over TLS when given a config), serves and shuts down, the
// pprof handler, and the TLS configuration and self-signed certificate of
// the HTTPS metrics server. The manager decides which servers run, on which addresses and
// with which handlers; this package is how each one runs.
//
// Guarantees:
//   - Listen opens the address at once, so a taken port fails the
//     manager's Start, not a goroutine later; Addr gives the port chosen
//     for ":0".
//   - Shutdown waits for in-flight requests until its context ends, then
//     closes the rest, and returns only once Serve returned: no goroutine
//     of the server outlives it. A Serve that ends otherwise is reported.
//   - Headers are bounded: 1 MiB, read within 32 s.
//   - Profiles serves net/http/pprof's format (what `go tool pprof`
//     reads) without importing net/http/pprof, whose init registers
//     handlers on http.DefaultServeMux.
//   - SelfSigned makes a fresh ECDSA P-256 key and certificate for
//     localhost, the loopback addresses and the host name.
//   - MetricsTLS is the HTTPS metrics server's configuration: TLS 1.2 at
//     least, HTTP/1.1 unless the caller's options turn HTTP/2 on, and a
//     certificate from those options, else the pair on disk (re-read when
//     it changes), else a self-signed one; never two side by side.
package serving
