// Package controller runs a Reconciler for the events of its sources.
//
// A Controller owns a rate-limited, de-duplicating queue of
// reconcile.Requests. Its sources (controller/source) feed the queue
// through event handlers (handler); its workers take requests from the
// queue and call the Reconciler. Most operators build controllers with
// controller/builder; New and NewUnmanaged are the layer below.
//
//	c, err := controller.New("app", mgr, controller.Options{Reconciler: r})
//	err = c.Watch(source.Kind(mgr.GetCache(), &App{}, &handler.EnqueueRequestForObject{}))
//
// Guarantees:
//   - No reconcile starts before every source watched before Start has
//     synced; a source that does not sync within CacheSyncTimeout makes
//     Start return an error naming its kind and, when the cache knows it,
//     why (for example RBAC forbidden).
//   - The same Request is never reconciled by two workers at once; at most
//     MaxConcurrentReconciles Requests are reconciled at once.
//   - A returned error re-queues the Request with per-Request exponential
//     backoff; a reconcile.TerminalError is logged and counted and not
//     retried; Result.RequeueAfter re-queues after that delay; the
//     deprecated Result.Requeue re-queues through the rate limiter
//     (backing off, counted as result="requeue"); success resets the
//     backoff. An error wins over RequeueAfter, which wins over Requeue, as
//     in controller-runtime. Result.Priority, when set, is the priority of
//     that re-add. A 409 conflict is retried the same way but logged
//     at V(1), not as an error: it only means the read was stale.
//   - With Options.FairnessKey (FairByNamespace, for example), waiting
//     Requests are handed out round-robin across tenants: with W workers
//     and T tenants with Requests waiting, the Request of a tenant with
//     nothing else waiting starts after at most W + T - 1 others (the W in
//     flight when it arrived, then at most one of each other tenant),
//     however many Requests the other tenants have queued.
//   - RemoveWatch stops one source of a running controller: its context
//     ends (a Kind source removes its handler registration; the informer
//     stays in the cache, which other watches may share), and once it
//     returns the source adds nothing to the queue. A source removed while
//     Start waits for it to sync is no longer waited for.
//   - A source that waits for its kind to be served (source.WaitForCRD)
//     does not hold Start up. While the reconciled kind (builder.For with
//     builder.WaitForCRD) is not served, every Request taken from the queue
//     is dropped and forgotten instead of reconciled (and a reconcile that
//     fails meanwhile is not retried): a Request names an object of that
//     kind, which cannot be read. WaitingKinds lists the waiting kinds, the
//     gauge kubeloop_source_waiting{controller,kind} is 1 for each while
//     the controller runs (0 once served), and the manager's crd-sources
//     readiness check names them.
//   - A panicking Reconciler does not stop the controller: the panic is
//     recovered into an error (and counted) unless Options.RecoverPanic is
//     false.
//   - The reconcile context carries a logger with controller-runtime's keys
//     (logr.FromContext): controller, controllerGroup and controllerKind
//     (when Options.ForKind, which the builder sets, names the kind),
//     "<Kind>": {name, namespace} ("object" without a kind), namespace,
//     name and reconcileID; and the ID itself (ReconcileIDFromContext). The values reach the log sink only when the
//     reconcile logs: a reconcile that logs nothing does not pay for a
//     handler with them (which slog's JSON handler would pre-format).
//   - Start blocks until its context ends. It then starts no new reconcile,
//     waits for the reconciles in flight (their context is cancelled) and
//     returns after every worker has exited.
//   - Start may be called again after it returned (the manager does so each
//     leader term with LeaderElectionRecampaign): the sources start again,
//     into a new empty queue, and hand over what their informers hold as
//     initial adds, without a new list; Requests left in the old queue and
//     their backoff are dropped. Watch between two runs adds a source that
//     the next run starts.
//   - New and controller/builder take the manager's config.Controller
//     (manager.Options.Controller) for the Options left zero
//     (DefaultFromConfig); NewUnmanaged does not. SkipNameValidation lets
//     the manager run two controllers of one name.
//   - TypedOptions, NewTyped, NewTypedUnmanaged and TypedController are
//     controller-runtime's typed forms; Options is the TypedOptions of
//     reconcile.Request and *Controller is a TypedController of it. Any
//     other request type is refused with ErrUnsupportedRequest: the queue
//     holds reconcile.Request.
//   - Metrics use controller-runtime's names (controller_runtime_reconcile_*
//     and workqueue_*) on the registerer of Options.Metrics or of the
//     manager; nothing is registered globally.
package controller
