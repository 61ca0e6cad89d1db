// Package source provides the event streams a controller watches.
//
// A Source is started once with the controller's queue and feeds it
// through an EventHandler:
//
//   - Kind watches one kind through the cache's shared informer. It is the
//     source behind builder.For, Owns and Watches.
//   - WaitForCRD wraps a Kind whose CustomResourceDefinition may not be
//     installed yet, or may come and go (builder.WaitForCRD).
//   - Channel turns values received on a Go channel into generic events,
//     for triggers from outside the cluster.
//   - Func is a function that starts whatever it wants.
//
// The typed forms of controller-runtime compile unchanged: Kind's type
// parameter is inferred from its handler and predicates, so
// source.Kind(c, &v1.Foo{}, &handler.TypedEnqueueRequestForObject[*v1.Foo]{},
// predicate.TypedFuncs[*v1.Foo]{...}) hands them *v1.Foo objects, and the
// untyped handlers and predicates make it client.Object. Channel infers
// the object type from its channel of handler.TypedGenericEvent. TypedKind,
// TypedChannel, TypedSource and TypedFunc take controller-runtime's request
// type parameter; Source and Func are their reconcile.Request forms. A
// request type other than reconcile.Request compiles, but its source fails
// at Start with an error saying so: kubeloop's queue holds
// reconcile.Request.
//
// Guarantees:
//   - Start does not block; the controller waits for WaitForSync before it
//     starts its workers, so no reconcile runs before every source has
//     delivered its initial list.
//   - Kind obtains its informer in Prepare, which the controller calls from
//     Watch, before leader election: a standby replica's cache is filled and
//     kept warm, and a failover reconciles at once.
//   - Kind's WaitForSync fails with an error naming the kind, and the cause
//     the cache knows (for example RBAC forbidden), when its context ends
//     before the kind synced.
//   - Kind converts client-go's callbacks faithfully: OnAdd's
//     isInInitialList becomes CreateEvent.IsInInitialList, and a
//     DeletedFinalStateUnknown tombstone becomes a DeleteEvent with
//     DeleteStateUnknown set. From kubeloop's cache it also learns which
//     changes are the catch-up after an outage (what a relist found, or a
//     watch resumed after a gap replayed) and sets CatchUp on their
//     events; the built-in handlers queue them at low priority, behind
//     fresh watch events. Objects that are not client.Objects are
//     logged and dropped.
//   - Predicates run in order before the handler; the first false drops the
//     event.
//   - A source's handler registrations and goroutines end with the context
//     given to Start.
//   - Kind, WaitForCRD, Channel and Func may be started again once the
//     context of the previous Start has ended (a controller restarted for a
//     new leader term, see manager.Options.LeaderElectionRecampaign). A Kind
//     source's new registration is handed every object its informer holds
//     as an initial add, from the informer's store: nothing is listed
//     again. Start while the previous context is live fails with
//     ErrStarted.
//   - WaitForCRD's source does not fail when its kind is not served: it
//     follows the metadata of the CustomResourceDefinitions (one informer
//     of metav1.PartialObjectMetadata in the cache, shared by every such
//     source), starts the kind's informer once the kind is served (its CRD
//     exists and the RESTMapper finds the kind, which discovery lists only
//     once the CRD is Established; a CRD of the group that is still being
//     established is asked about again, a bounded number of times), and
//     when the CRD is deleted removes that informer from the cache before
//     its list or watch can fail, so nothing is logged at ERROR and the
//     cache's Healthy does not report the kind, resets the mapper's
//     discovery and waits again. A Terminating CRD stays served until it
//     is gone, so that finalizers can still be removed. Waiting reports the
//     state; with CRDOptions.Reconciled the controller drops its Requests
//     while the kind is not served. Its WaitForSync returns at once while
//     the kind waits.
package source
