// Package fake provides an in-memory client.Client with the API server's
// semantics, for unit tests of controllers:
//
//	c := fake.NewClientBuilder().
//		WithObjects(&corev1.ConfigMap{...}).
//		WithStatusSubresource(&myv1.Widget{}).
//		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string {
//			return []string{o.(*corev1.Pod).Spec.NodeName}
//		}).
//		Build()
//
// The same table of cases runs against this client and against a real API
// server (see client's conformance tests), so behaviour that test covers
// is the API server's. Guarantees:
//   - Every object created gets a UID, a creationTimestamp and a
//     resourceVersion (a counter, so it compares as an integer). Objects
//     given to WithObjects keep what they have, as in controller-runtime's
//     fake: no UID or creationTimestamp is added, and one without a
//     resourceVersion gets "999", written back to the given object too;
//     later writes count on from there. generateName appends five
//     random characters; generation (on custom resources and built-in kinds
//     with a spec) starts at 1 and grows when anything but metadata and
//     status changes.
//   - Update and Patch with a stale resourceVersion fail with a 409
//     conflict; an update that changes nothing keeps the resourceVersion.
//   - For kinds with a status subresource, Create and Update ignore the
//     status and Status().Update and Status().Patch change only the status.
//     Kinds without one answer NotFound to Status() writes.
//   - Delete of an object with finalizers sets deletionTimestamp instead;
//     the object goes away when an update removes the last finalizer, and
//     no finalizer can be added meanwhile.
//   - List honours namespaces, label selectors, Limit and Continue, and
//     field selectors on metadata.name, metadata.namespace and on fields
//     added with WithIndex; any other field selector is an error.
//   - Merge, JSON and (for built-in kinds only) strategic merge patches
//     apply as on the server; Apply is a simplified server-side apply that
//     tracks field owners, fails with a conflict when another manager owns
//     a field it changes (unless ForceOwnership) and removes fields a
//     manager stops applying. Apply writes no managedFields; those of seeded
//     objects are kept, and Create keeps the caller's with
//     WithReturnManagedFields (dropped otherwise).
//   - Status().Apply applies the status the same way, its field owners
//     kept apart from those of the object, as the server keeps
//     managedFields per subresource.
//   - Watch (client.WithWatch) sends what the API server would: ADDED for
//     the existing matches without a resourceVersion, then every change;
//     from a List's resourceVersion, the changes after it (410 once the
//     last 1,024 writes no longer reach back); an object modified into or
//     out of the selection arrives as ADDED or DELETED. An unread watch
//     never blocks writers; Stop or the end of its context closes it.
//   - Reads return deep copies; nothing a caller holds aliases the store.
//   - Bad input yields the same errors as the real client. Build (a
//     client.WithWatch, as controller-runtime's) never panics: a bad setup
//     makes every call of its client fail with the error that BuildClient
//     returns.
//   - A kind's scope comes from WithRESTMapper's mapper, then the
//     CustomResourceDefinitions given with WithObjects, then the built-in
//     kinds; a kind none knows is what each object or key says (namespaced
//     when it names a namespace), as in controller-runtime's fake. A
//     namespace on a cluster-scoped kind is ignored on every verb, and
//     dropped from stored objects, as the API server does.
//
// This package holds the builder, the verbs and the store; the rest of
// the engine is in internal packages: internal/scope (which kinds are
// namespaced, their resources, status subresources and generations),
// internal/objmap (the stored form and patches on it),
// internal/fieldowner (field owners and the simplified server-side
// apply) and internal/fanout (watches and the history they start from).
//
// Not modelled: bookmarks and watch-list streaming, admission, defaulting and validation, garbage
// collection of dependents, and the API server's per-kind field selectors.
package fake
