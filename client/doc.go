// Package client reads and writes Kubernetes objects: typed objects
// registered in a runtime.Scheme, *unstructured.Unstructured for any kind
// without Go types, and *metav1.PartialObjectMetadata for metadata only.
//
// The method set and option types are controller-runtime's, so code written
// against controller-runtime's client compiles against this one with an
// import change (see MIGRATING.md for the few differences).
//
//	c, err := client.New(cfg, client.Options{FieldOwner: "my-operator"})
//	var d appsv1.Deployment
//	err = c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d)
//	before := d.DeepCopy()
//	d.Spec.Replicas = ptr.To[int32](3)
//	err = c.Patch(ctx, &d, client.MergeFrom(before))
//	err = c.Apply(ctx, appsv1ac.Deployment("web", "default").WithSpec(...), client.ForceOwnership)
//
// Guarantees:
//   - Errors name the verb and the object ("get apps/v1, Kind=Deployment
//     default/web: ..."); the API status error stays reachable with
//     errors.As and apierrors.IsNotFound and friends.
//   - Bad input is an error, never a panic: a nil object (ErrNilObject), a
//     type the scheme does not know (apiutil.ErrUnknownType), a missing name
//     (ErrNameRequired) or namespace (ErrNamespaceRequired), an invalid
//     selector, a patch computed from an object of another type.
//   - Built-in types travel as protobuf; custom resources as JSON.
//     Metadata-only objects use the API server's metadata protocol, so the
//     rest of the object never crosses the wire.
//   - Kinds are resolved lazily, one API group at a time; a kind the mapper
//     does not know triggers one refresh of its group, so a
//     CustomResourceDefinition installed after the client was built works.
//   - Client-side rate limiting is off unless the rest.Config sets QPS or a
//     RateLimiter.
//   - Read your own writes: a client built with Options.Cache reads from the
//     cache, and after a write through it succeeds (Create, Update, Patch,
//     Apply, Delete, Status() and SubResource() updates and patches), a Get
//     of that object answers as the API server did after the write, or
//     newer: never an older resourceVersion. What the server holds follows
//     the write: a Delete of an object with finalizers (or a grace period)
//     leaves it terminating, so the Get returns it with its
//     deletionTimestamp, not NotFound; an Update that removes the last
//     finalizer of a terminating object deletes it, so the Get answers
//     NotFound, not the object from before. A Get that would break this
//     polls the cache for up to CacheOptions.ReadYourOwnWritesTimeout (2 s
//     by default), then reads from the API server. With
//     CacheOptions.Progress (the manager sets it to its cache) it waits for
//     the cache's next change instead of polling, and never waits when the
//     cache has applied every change past the write (a delete by someone
//     else then answers NotFound at once), nor when the kind's informer is
//     failing (Healthy names it): it then reads from the API server at once;
//     an object written outside the cache's scope (its label or field
//     selector, its namespaces) is not waited for: the Get answers as for
//     any object outside that scope (NotFound, or ErrNamespaceNotCached);
//     read such objects through the manager's API reader. A client given a
//     Reader alone compares resourceVersions only. Resource versions
//     are compared as integers; when one is not an integer the Get reads
//     from the API server at once. Writes are remembered per kind,
//     namespace and name until a Get sees the cache caught up, or for at
//     most a minute. GetShared keeps the same guarantee. Not covered: List
//     (it may return older objects), DeleteAllOf, dry-run writes, and
//     writes made by other clients or processes.
//   - A Get that answers NotFound, through the cache or not, leaves the
//     caller's object untouched.
//   - The same checks and errors on every path: the cache, the live client
//     and the fake refuse an empty name (ErrNameRequired), a namespaced
//     kind without a namespace (ErrNamespaceRequired) or with an invalid one
//     (ErrNamespaceInvalid); their errors read
//     "<verb> <group/version, Kind=kind> <namespace>/<name>: <cause>".
//   - A namespace on a cluster-scoped kind is ignored, never an error, as
//     the API server does: a Get key {Namespace: "x", Name: "n"} of a
//     Namespace or a ClusterRole finds "n"; Create, Update, Patch, Apply,
//     Delete and subresource writes of an object whose metadata.namespace
//     is set go to the cluster-scoped object, and the object comes back
//     from the write without the namespace, as the server answers it
//     (Delete leaves it as it was); List and DeleteAllOf ignore InNamespace.
//     The same holds in the cached client, NewNamespacedClient,
//     NewDryRunClient and the fake.
//   - Reads without copies: Get with UnsafeDisableDeepCopy fills the
//     caller's object with the cached object's fields (maps and slices
//     shared); GetShared returns the cached object itself, with no copy at
//     all. Either must be treated as read-only.
//   - Status().Apply and SubResource(name).Apply send server-side apply to a
//     subresource (the SubResourceApplyOptions' SubResourceBody, a Scale
//     configuration for "scale"); the cached client remembers them for
//     read-your-own-writes like the other subresource writes.
//   - Fenced writes: in a context given a Fence with WithFence (the
//     manager does it for leader-only runnables, the sharding ring for
//     gated reconciles), every write of the live client, and so of the
//     cached client and the wrappers, which delegate to it, asks the fence
//     just before its request is sent, by the local monotonic clock. A
//     fence that refuses (its lease is no longer held, or its hold ended)
//     fails the write with an error wrapping ErrLeaseLost that names the
//     object and the lease ("update v1, Kind=ConfigMap default/web:
//     fenced: lease ops/my-operator: lease lost: ..."); the request is not
//     sent. An admitted request runs with its context bounded by the time
//     the hold remains, so one that waits for an answer when the hold
//     ends is cancelled, and its error wraps ErrLeaseLost too. Reads are
//     never fenced; without a fence a write costs one ctx.Value lookup.
//     What stays possible: a request already sent when the hold ends may
//     still be applied by the API server (the bound cancels the waiting,
//     not the server's work), and a process paused between the check and
//     the send (a stopped process, a long GC pause) sends a request the
//     check admitted. The lease timings leave a margin for both
//     (LeaseDuration - RenewDeadline: others take over no earlier), and
//     writes should carry a resourceVersion precondition so that one that
//     arrives after another holder's change fails with a conflict: Update
//     sends the object's resourceVersion; for Patch use
//     MergeFromWithOptions(obj, MergeFromWithOptimisticLock{}) or a JSON
//     patch that tests the resourceVersion. The fake client does not
//     fence.
//   - Wrappers compose over any Client, the fake's too: NewNamespacedClient
//     (fills the namespace of namespaced kinds, refuses another with
//     ErrNamespaceMismatch), WithFieldOwner (a default field manager for
//     every write; a per-call FieldOwner wins), NewDryRunClient (every
//     write is DryRunAll). WithWatch is the interface of a client that also
//     watches: NewWithWatch returns one, and *fake.Client is one.
//   - The client's view of a cache is explicit: CacheOptions.Reader reads,
//     CacheOptions.Progress reports how far it has applied changes,
//     CacheOptions.Shared hands out cached objects without copies
//     (GetShared). The cached client asserts nothing of the Reader.
//
// This package holds the interfaces, the option types and the
// constructors; the machinery behind them lives in client/internal: live
// (REST requests, in the API server's option types), ryow (the
// read-your-own-writes tracker and the cached read routing), fence (the
// write fence), scoped (NewNamespacedClient's namespace logic), patch
// (MergeFrom's patch computation) and tracehttp (request spans).
package client
