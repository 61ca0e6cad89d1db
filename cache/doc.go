// Package cache keeps an in-memory, indexed, eventually consistent copy of
// the cluster's objects and serves reads from it. Its informers list and
// watch as client-go's Reflector does (the same requests and
// resourceVersions, relists after 410 Gone, bookmarks; client-go's
// Reflector itself runs a streaming list, InitialListStreaming). What it
// does not take from client-go is the retry policy (see Guarantees) and
// the rest of the SharedIndexInformer:
//
//   - No FIFO and no fan-out goroutines. The goroutine that reads a
//     built-in kind's watch decodes each event, applies it to the store and
//     calls the event handlers in line, instead of handing it to the
//     reflector's goroutine, which queues it in a FIFO popped by a third
//     goroutine that hands it to a goroutine and a growing buffer per
//     handler (four hops and about six allocations per event). Other
//     kinds' watches are decoded by client-go's watch goroutine, one hop.
//   - Its own store. Objects are kept in one compact hash table per
//     namespace (a 64-byte group of four slots, names copied into one
//     byte slice), rather than under a "namespace/name" string built for
//     each in a Go map; a Get on a large cache waits on two small, dense
//     reads instead of three scattered ones. The namespace index is the
//     per-namespace table itself; other indexes (Informer.AddIndexers)
//     file objects by value, as client-go's do.
//
// Built-in kinds are read as protobuf, and their watch events and LIST
// responses are decoded with metadata.managedFields skipped in the bytes
// rather than decoded and then dropped.
//
// Each informer is one pipeline of named parts, which the cache builds in
// one place (pipeline.go; the parts are cache/internal/informer's
// Pipeline): the list-watch of the kind in one namespace, whose watch
// decoder, for a built-in kind without a user transform, looks up the
// stored version of each event's object and takes its label and
// annotation maps when they are equal; the informer's health, to which
// every list and watch request reports (Healthy); the gate that paces
// requests after failures, and the cache's one prober that releases the
// gates early (see Guarantees); then, for every change, the transform,
// the store, the progress (the resourceVersion applied, by which the
// manager's client reads its own writes) and the event handlers.
//
// A cache holds one informer per kind and object shape (typed Go structs,
// *unstructured.Unstructured, and *metav1.PartialObjectMetadata read
// through the metadata client), so typed and unstructured reads of one kind
// never collide. With namespaces configured (Options.DefaultNamespaces,
// ByObject.Namespaces: controller-runtime's map of namespace to Config), a
// namespaced kind has one informer per namespace, each with that
// namespace's label and field selectors and transform, behind a single
// Informer; the key AllNamespaces adds one informer for every namespace
// not listed.
//
//	c, err := cache.New(cfg, cache.Options{DefaultNamespaces: map[string]cache.Config{"team-a": {}}})
//	// ...
//	_ = c.IndexField(ctx, &corev1.Pod{}, "spec.nodeName", func(o client.Object) []string {
//		return []string{o.(*corev1.Pod).Spec.NodeName}
//	})
//	go c.Start(ctx)
//	if !c.WaitForCacheSync(ctx) {
//		return c.Healthy() // names each kind that cannot list or watch, and why
//	}
//	var pods corev1.PodList
//	err = c.List(ctx, &pods, client.InNamespace("team-a"), client.MatchingFields{"spec.nodeName": "n1"})
//
// Guarantees:
//   - Reads return deep copies; client.UnsafeDisableDeepCopy (per read,
//     per kind, or by default) returns the cached objects' contents without
//     copying, which must then not be mutated, and client.GetShared (the
//     cache is a client.SharedReader) returns the cached object itself,
//     the cheapest read there is. Objects keep their resourceVersion and
//     carry their apiVersion and kind.
//   - Options.DetectMutations (or KUBELOOP_CACHE_MUTATION_DETECTOR=true,
//     or client-go's KUBE_CACHE_MUTATION_DETECTOR=true) finds a caller
//     that wrote into an object it shares with the cache: each stored
//     object is deep-copied and compared with its copy when it is replaced
//     or deleted and every second; a change panics (or goes to
//     OnMutation) naming the kind, the object and the first changed field.
//     For tests and debugging: it doubles the cache's memory.
//   - metadata.managedFields is stripped before storing (ByObject
//     KeepManagedFields keeps it), and namespaces, label keys and values,
//     annotation keys and owner references are shared between objects, as
//     are the strings a workload's Pods repeat (node, images, container
//     names, enumerations), to cut memory. Without a user transform
//     (which may modify objects in place), objects whose labels or
//     annotations are equal share one map, and the Pods of one workload
//     share their equal sub-structures (resources, environment, probes,
//     tolerations, volume sources, affinity). A deep copy is unaffected;
//     a no-copy or GetShared read, which must never be modified, shares
//     that memory with other cached objects.
//   - List answers namespace, label selectors, and exact-match field
//     selectors on fields indexed with IndexField (and on metadata.name and
//     metadata.namespace); any other field selector is an error wrapping
//     ErrUnsupportedSelector, never a silent full scan. Field indexes hold
//     every value cluster-wide and per namespace, so MatchingFields with
//     InNamespace is one lookup. The items come in no particular order, as
//     from controller-runtime's cache; a large List copies them in the
//     order of their addresses in memory, which on a cache of 100k
//     ConfigMaps took a quarter less time than the stores' hash order.
//   - A read of a kind nobody watches starts its informer, logs it at info
//     level, counts it (InformerCache.LazyInformerStarts) and waits for it
//     to sync. With Options.ReaderFailOnMissingInformer it fails instead
//     with an error wrapping ErrResourceNotCached that names the kind.
//   - A kind whose list or watch fails (RBAC forbidden, not served, API
//     server unreachable) is reported by Healthy with its cause until a
//     list succeeds or a watch opens again. So is a kind whose requests get
//     no answer at all three times in a row: connections accepted and then
//     closed or reset (a load balancer without a backend, an API server
//     restarting), which client-go's REST client retries for ten seconds
//     without telling anyone, and after which its watch looks like one that
//     simply ended. client-go sends those retries a second apart, so
//     Healthy (and the manager's /readyz) turns red about 2 s after such
//     failures begin, and green again as soon as a request is answered and
//     a list succeeds or a watch opens. So is a kind one of whose requests
//     has waited 30 s for its answer (a server or proxy that accepts the
//     connection and never answers: nothing fails, the request waits), named
//     with the request, until it is answered or gives up. A watch the API
//     server ends (its timeout) or an expired resourceVersion is routine
//     and never counts. WaitForCacheSync and reads never wait past their
//     context; the error of a read that gave up carries the last
//     list-watch failure.
//   - Recovery after an outage is bounded: every informer lists or watches
//     again within about 2 s of the API server answering again, and the
//     cache holds the changes made meanwhile within about 3 s, however
//     long the outage lasted (measured: at most 1.1 s after cuts of 1 s to
//     90 s, through a blackhole, reset or closed connections and 503s, with
//     one LIST per informer or none). After a failed list or watch an
//     informer waits 250 ms doubling to 30 s, each wait uniform in [d/2, d]
//     and at least the Retry-After the server asked for (a second for a
//     429 without one); when the failure says the server is unreachable or
//     sick (no answer, a 5xx, a watch that ended within a second having
//     delivered nothing), one prober per cache sends GET /readyz on the
//     cache's HTTP client while an informer so waits (every 250-500 ms for
//     the first 5 s, every 0.5-1 s after), and the first probe (or list or
//     watch of any informer) that succeeds after one failed releases them
//     all, spread over 100 ms per informer (at most 1 s) so that they
//     relist one after another, with their backoff reset. Answers that
//     refuse (403, 404, 429) wait out the backoff. client-go's own policy
//     (800 ms doubling to 30 s, jittered to 60 s, reset after 2 minutes
//     without a failure) waited 44-52 s after a 20 s outage.
//   - Start blocks until its context ends; informers created later start
//     at once; every goroutine has exited when Start returns.
//     RemoveInformer stops one kind's informers, waits for their
//     goroutines and drops the store.
//   - Event handlers added through GetInformer receive OnAdd with
//     isInInitialList true for the objects of the initial list (a handler
//     added later first gets every stored object that way), then every
//     change, each exactly once and in order. They run in line and must not
//     block: the controllers' handlers only enqueue a request.
//   - InformerCache.Sizes reports what the cache holds per kind, shape and
//     namespace: the exact number of objects and an estimate of their
//     size as JSON from a bounded sample, read when called (the manager
//     serves it as kubeloop_cache_objects and kubeloop_cache_bytes and at
//     /debug/cache); the event path does no work for it.
//   - The initial list is a LIST request by default (Options.InitialList;
//     InitialListStreaming asks for a streaming list instead).
package cache
