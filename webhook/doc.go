// Package webhook serves the HTTPS endpoints the API server calls:
// admission webhooks (package admission) and CRD conversion webhooks
// (package conversion).
//
// A Server is a manager runnable. Register a kind's webhooks next to its
// controller, with controller-runtime's paths:
//
//	err := webhook.ManagedBy(mgr, &App{}).
//		WithDefaulter(appDefaulter{}).  // /mutate-<group>-<version>-app
//		WithValidator(appValidator{}).  // /validate-<group>-<version>-app
//		Complete()                      // and /convert when App's versions are a Hub and Convertibles
//
// or serve any http.Handler with Server.Register, such as an admission
// webhook around a raw handler, as in controller-runtime:
//
//	mgr.GetWebhookServer().Register("/validate-x", &webhook.Admission{Handler: h})
//
// Without a manager:
//
//	srv := webhook.NewServer(webhook.Options{CertDir: "/certs"})
//	srv.Register("/validate-configmaps", &admission.Webhook{Handler: h})
//	err := srv.Start(ctx) // blocks until ctx ends
//
// The kubebuilder scaffold's certificate watcher works unchanged: a
// GetCertificate set through Options.TLSOpts (certwatcher.CertWatcher's)
// is served, and CertDir is then not read.
//
// Guarantees:
//   - TLS 1.2 at least; HTTP/1.1 only unless Options.EnableHTTP2.
//   - The certificate and key in Options.CertDir are re-read when their
//     contents change (looked at, at most once a second, when a TLS
//     handshake happens; no goroutine, no file watcher): a rotated pair is
//     served without a restart, and a half-written or invalid pair is
//     ignored while the previous one is served. A certificate set by
//     TLSOpts (GetCertificate or Certificates) wins over CertDir's.
//   - Options.Port -1 (DisabledPort, or any negative value) means no
//     server, controller-runtime's meaning: Register works, Start serves
//     nothing and returns when its context ends, the readiness check
//     passes, and a manager does not run it. AnyPort picks a free port.
//   - Request bodies are limited (Options.MaxRequestBytes; admission reviews
//     further to admission.MaxRequestBytes); header reads time out after
//     32 s and idle connections after 90 s.
//   - A handler that panics never takes the process down: the panic is
//     logged with its stack, counted in controller_runtime_webhook_panics_total
//     and answered (admission: allowed=false, code 500; others: HTTP 500).
//   - Metrics, on Options.Metrics only: controller_runtime_webhook_requests_total
//     {webhook, code (the HTTP status)}, controller_runtime_webhook_latency_seconds
//     {webhook}, controller_runtime_webhook_requests_in_flight{webhook} and
//     controller_runtime_webhook_panics_total{webhook}; webhook is the path.
//     A panic in a conversion function (conversion.Webhook) is also counted
//     in controller-runtime's controller_runtime_conversion_webhook_panics_total
//     (no labels, served at 0 from the start). The reads of CertDir's pair
//     are counted in certwatcher_read_certificate_total and
//     ..._errors_total (CertWatcher.WithMetrics), as controller-runtime's
//     server's certwatcher counts them.
//   - Start returns after the listener is closed and every request in flight
//     has been answered (or Options.ShutdownTimeout passed).
//   - NeedLeaderElection is false: every replica serves.
//   - A Server handed to a manager (manager.Options.WebhookServer) whose
//     Options left Metrics or Logger zero uses the manager's registry and
//     logger (Server.UseDefaults), so its series and logs are not lost.
//
// Differences from controller-runtime: ManagedBy(mgr, obj) replaces
// NewWebhookManagedBy(mgr).For(obj), so that WithDefaulter and WithValidator
// take the typed admission.Defaulter[T] and admission.Validator[T]; Server is
// a struct, not an interface (NewServer returns *Server); Options.WebhookMux
// and ClientCAName are absent (use TLSOpts for client certificates); paths
// are matched exactly; a free port is AnyPort (1<<16), not a negative
// value. Admission, AdmissionRequest, AdmissionResponse, AdmissionHandler,
// AdmissionDecoder, JSONPatchOp, Allowed, Denied, Patched and Errored are
// controller-runtime's shorthands for the admission package's names
// (functions here, not variables).
package webhook
