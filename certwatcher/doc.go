// Package certwatcher serves a TLS key pair from two PEM files and picks up
// new contents without a restart. It is controller-runtime's certwatcher
// under the same names, so the kubebuilder scaffold's main.go ports by its
// import path alone:
//
//	w, err := certwatcher.New(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
//	if err != nil { ... }
//	tlsOpts = append(tlsOpts, func(c *tls.Config) { c.GetCertificate = w.GetCertificate })
//	srv := webhook.NewServer(webhook.Options{TLSOpts: tlsOpts})
//	...
//	if err := mgr.Add(w); err != nil { ... } // Start polls the files until the manager stops
//
// Guarantees:
//   - New reads and parses the pair, and fails when it cannot: a watcher
//     always has a certificate to serve.
//   - GetCertificate never reads files: it returns the pair loaded last
//     (tls.Config.GetCertificate's signature).
//   - While Start runs, the files are looked at (os.Stat) every second, or
//     every watch interval when that is shorter, and read again when their
//     size, modification time or identity changed (a Secret volume's
//     symlink swap changes the identity), and in any case once per watch
//     interval (WithWatchInterval; 10 s by default, controller-runtime's).
//     Only the standard library is used: no inotify, no fsnotify.
//   - A pair that does not parse (a rotation caught half-written: new
//     certificate, old key) is logged and ignored; the previous pair is
//     served until the files form a valid pair again.
//   - The callback (RegisterCallback) is called with each new pair, once
//     per change, never while a lock is held.
//   - Every read (New's, Start's and every ReadCertificate) is counted in
//     certwatcher_read_certificate_total, and a failed one in
//     certwatcher_read_certificate_errors_total, on the registry of the
//     watcher's Metrics: WithMetrics(NewMetrics(reg)), or the manager's
//     when it is added to a manager (mgr.Add(w)), which serves both at 0
//     from its start. Reads made before the Metrics were attached are
//     added when they are.
//   - Start blocks until its context ends and then returns nil; it starts
//     no goroutine. NeedLeaderElection is false, so a manager runs it on
//     every replica.
//
// Differences from controller-runtime: changes are found by polling, not
// by fsnotify, so a change is served up to a second later; callbacks run
// synchronously on the goroutine that read the files (controller-runtime
// starts a goroutine per call); controller-runtime's
// certwatcher_read_certificate_total and
// certwatcher_read_certificate_errors_total are counted on the registry of
// the manager the watcher is added to (or on the one NewMetrics and
// WithMetrics name), not on a process-wide one; WithLogger sets the logger
// (the zero value logs through log/slog's default handler).
package certwatcher
