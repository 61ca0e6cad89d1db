// Package manager runs a controller process: one Manager owns the
// connection to the API server (an instrumented rest.Config and one HTTP
// client), the cache, the clients, a Prometheus registry, an event
// broadcaster, the probe, metrics and pprof servers and the leader
// election, and runs every Runnable (controllers, mostly) added to it.
//
//	mgr, err := manager.New(cfg, manager.Options{
//		LeaderElection:         true,
//		LeaderElectionID:       "my-operator",
//		HealthProbeBindAddress: ":8081",
//		Metrics:                manager.MetricsOptions{BindAddress: ":8080"},
//	})
//	...
//	_ = mgr.AddHealthzCheck("ping", healthz.Ping)
//	... controller.New("widgets", mgr, ...) ...
//	if err := mgr.Start(signals.SetupSignalHandler()); err != nil {
//		os.Exit(1)
//	}
//
// Guarantees:
//   - Start order: HTTP servers, caches (Start waits until they sync),
//     runnables whose NeedLeaderElection() is false, the election, and on
//     winning it the leader-only runnables (those without
//     NeedLeaderElection count as leader-only). Caches of a standby are
//     therefore warm when it takes over. A kind the cache cannot list or
//     watch (RBAC forbidden, not served) does not hold the others up: Start
//     logs it and carries on, /readyz names it, and its controller fails
//     after its CacheSyncTimeout.
//   - Runnables may be added before or after Start; one added late starts
//     with its group (a leader-only one only once elected). Two controllers
//     with the same ControllerName are rejected.
//   - The first runnable error stops the manager and Start returns it.
//     Losing the lease cancels every context at once and Start returns an
//     error wrapping leaderelection.ErrLeaderElectionLost; exit then.
//   - With LeaderElectionRecampaign, losing the lease instead stops only
//     the leader-only runnables; once every one has returned (within
//     GracefulShutdownTimeout, else Start stops as above and names the
//     ones still running) the manager campaigns again with the same
//     identity, caches and other runnables running all along. On winning,
//     it calls Start of every leader-only runnable again: controllers
//     restart with a new empty queue and get every cached object as an
//     initial add from the informers' stores, without a relist; a
//     runnable of one's own must accept a second Start. Never two leaders:
//     the elector stops leading RenewDeadline after its last renewal,
//     before a standby may take over, and the next campaign waits for the
//     old term's runnables. Log lines name the term ("term": n);
//     leader_election_master_status is 0 between terms.
//   - Fenced writes: with leader election, the context of each leader-only
//     runnable (and so of its controllers' reconciles) carries the fence
//     of its term's elector (client.WithFence): every write through the
//     manager's clients with that context (or one derived from it, even
//     with context.WithoutCancel) fails with an error wrapping
//     client.ErrLeaseLost once the term's lease is no longer held by the
//     local monotonic clock (IsLeader turns false RenewDeadline after the
//     last renewal), and each admitted request is bounded by the time
//     left. A term's fence never admits again: a runnable of a lost term
//     stays fenced after LeaderElectionRecampaign won the next one. The
//     lease is renewed until the leader-only runnables returned, so their
//     writes during a graceful stop go through. A write already on the
//     wire when the hold ends, or sent by a process paused between check
//     and send, may still land: give writes resourceVersion
//     preconditions (see the client package). Without leader election
//     nothing is fenced. A sharded reconcile is fenced by its shard's
//     Lease instead (package sharding).
//   - Shutdown runs in reverse order (leader-only runnables, then the lease,
//     other runnables, caches, servers, events) within
//     GracefulShutdownTimeout, and Start returns only when every goroutine
//     it started has exited, or with an error naming the runnables still
//     running when the timeout passed.
//   - With LeaderElectionReleaseOnCancel, the lease is released only after
//     every leader-only runnable returned.
//   - /readyz fails until the caches have synced and while any informer's
//     list or watch keeps failing (its reason names the kind), including
//     while the API server's address accepts connections and closes or
//     resets them (a load balancer without a backend, a restart): it turns
//     red about 2 s after that begins and green once requests are answered
//     and the informer lists or watches again (cache.Cache's Healthy);
//     /healthz runs the checks added with AddHealthzCheck.
//   - A manager with a controller has the readiness check "crd-sources".
//     It passes, and while a controller's sources wait for their kind to
//     be served (builder.WaitForCRD) it names them in /readyz?verbose:
//     "[+]crd-sources ok: waiting for kinds to be served:
//     Widget.example.com (controller widget)". A kind that waits is not a
//     failing informer: the cache holds none for it.
//   - /metrics serves the manager's own registry: Go and process
//     collectors, rest_client_requests_total and
//     rest_client_request_duration_seconds measured on the manager's
//     transport, rest_client_rate_limiter_duration_seconds{host} (the
//     waits for the rest.Config's RateLimiter, when it has one),
//     leader_election_master_status and leader_election_slowpath_total,
//     certwatcher_read_certificate_total and ..._errors_total (the reads
//     of every certwatcher.CertWatcher added with Add), the controllers',
//     workqueues' and webhooks' metrics (controller_runtime_conversion_webhook_panics_total
//     included), and whatever is registered on Metrics(); histograms are
//     classic unless Metrics.NativeHistogramBucketFactor makes them native
//     too; and
//     with them the process-wide metrics.Registry (controller-runtime's
//     global registry, where ported init()s register their collectors).
//     A family on both is served once, from the manager's registry.
//     With Metrics.FilterProvider set to WithAuthenticationAndAuthorization
//     (or MetricsAuth) it answers only requests whose bearer token, the
//     scheme in any case, may get the path (a TokenReview and a
//     SubjectAccessReview), failing closed. Answers are cached by the
//     sha256 of the token (authenticated 1 minute, rejected 10 seconds)
//     and of the user, verb and path (allowed 5 minutes, denied 30
//     seconds), in LRUs of at most MetricsAuthOptions.CacheSize entries
//     each: repeated scrapes cost no review, garbage tokens no memory past
//     the bound, failed reviews are never cached. So a revoked token
//     keeps scraping for up to the authenticated TTL and a revoked
//     permission for up to the allowed TTL. With
//     Metrics.SecureServing it is served over HTTPS (TLS 1.2 at least,
//     HTTP/1.1), with the pair in Metrics.CertDir re-read when it changes,
//     or a self-signed certificate: the kubebuilder scaffold's secure
//     metrics endpoint.
//   - /metrics also has kubeloop_cache_objects and kubeloop_cache_bytes
//     {group, version, kind, shape}: the objects the manager's cache holds
//     (exact) and their approximate size as JSON (cache.InformerCache's
//     Sizes), read from the cache when scraped, never updated per event.
//     The metrics server serves the same per namespace as JSON at
//     /debug/cache (CacheDebugPath; CacheDebugHandler to mount it
//     elsewhere), behind Metrics.FilterProvider like /metrics.
//   - A webhook server handed over in Options.WebhookServer whose
//     webhook.Options left Metrics or Logger zero reports its
//     controller_runtime_webhook_* series to the manager's registry and
//     logs through the manager's logger.
//   - No global state: no init(), no global logger, scheme or event
//     broadcaster, and no global registry but the one compatibility twin
//     metrics.Registry, which only users fill. Two managers in one
//     process are independent.
package manager
