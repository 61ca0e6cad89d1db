// Package sharding scales one operator out across replicas: every replica
// is a shard of a ring, caches and reconciles only the objects assigned to
// it, and the Kubernetes API is the only coordination layer (Leases for
// membership, labels for assignment, a mutating webhook for assignment at
// admission). Turn it on with manager.Options.Sharding:
//
//	mgr, err := manager.New(cfg, manager.Options{
//		Sharding: sharding.Options{
//			Ring:    "my-operator",
//			Objects: []client.Object{&v1.Widget{}}, // the kinds of your controllers' For
//			Webhook: sharding.WebhookOptions{Service: &admissionregistrationv1.ServiceReference{
//				Namespace: "my-operator-system", Name: "my-operator-webhook"}, CABundle: ca},
//		},
//	})
//	err = builder.ControllerManagedBy(mgr).For(&v1.Widget{}).Complete(r) // unchanged
//
// Guarantees:
//   - Membership: each replica holds its own shard Lease
//     (<ring>-shard-<shard>, labelled sharding.kubeloop.dev/ring=<ring>),
//     renewed every RetryPeriod with the lease core leaderelection uses
//     (leaseDurationSeconds is LeaseDuration rounded up). A replica that
//     has not renewed for RenewDeadline since its last renewal was sent
//     stops reconciling sharded objects (its reconcilers' contexts end)
//     before anyone may take the Lease over or count the shard gone:
//     other replicas wait the stored duration on their own clock from
//     when they saw the Lease last change, so clock offsets between
//     replicas do not matter. When the ring's client can watch (the
//     manager's can), every replica watches the ring's Leases: it sees a
//     renewal when it is stored, judges a shard gone the moment the
//     stored duration has passed since (a timer, not the next read), and
//     a candidate for the sharder tries again the moment the sharder's
//     observed hold ends; a killed replica's objects are so reassigned,
//     and a killed sharder replaced, about LeaseDuration after its last
//     renewal. Without a watch the Leases are read every RetryPeriod,
//     which adds up to two RetryPeriods.
//   - Fenced writes: a gated reconcile's context carries the fence of the
//     shard's hold (client.WithFence), so its writes through the live or
//     the manager's client fail with an error wrapping ErrLeaseLost
//     (client.ErrLeaseLost, the same sentinel) naming the object and the
//     shard's Lease once the hold is no longer valid by the local
//     monotonic clock, and each admitted request is cancelled when the
//     hold ends. A reconcile frozen mid-flight (a stopped process) that
//     resumes after another shard took its object over therefore sends
//     nothing. What stays possible: a request already on the wire when
//     the hold ends may still be applied, and so may one sent by a process
//     paused between the check and the send; LeaseDuration -
//     RenewDeadline is the margin for both, and writes should carry a
//     resourceVersion precondition (Update does; use
//     client.MergeFromWithOptions(obj, client.MergeFromWithOptimisticLock{})
//     for patches) so that a late one fails with a conflict. The sharder's
//     patches are fenced by its own Lease.
//   - A ring that bends: a shard that loses its Lease (an overloaded or
//     unreachable API server) stops admitting, fences its in-flight
//     reconciles, keeps its caches, and rejoins without Start returning:
//     it acquires its Lease again after a random delay of up to
//     1.2*RetryPeriod (replicas cut together do not come back in
//     lockstep), starts its membership reader and sharder campaign again,
//     and admits reconciles RenewDeadline after the re-acquisition. While
//     it was out the sharder may have moved its objects to live shards
//     without a drain; such a move must reach the API server within
//     RenewDeadline of the read that judged the shard gone (the sharder
//     reads the Lease again once half of that passed), so none lands while
//     the rejoined shard reconciles (short of a patch still on the wire,
//     as for fenced writes), and the gate confirms each key's
//     assignment with a live read after a rejoin, so that an object that
//     left the shard's cache is not taken for deleted. A new process that
//     takes over the Lease an earlier one with the same shard name wrote
//     (expired or released; a fixed Shard, say a StatefulSet's pod name)
//     is treated as rejoining too. Each rejoin is a new term with its own
//     fence. Options.ExitOnLeaseLoss restores the exit:
//     Start returns an error wrapping ErrLeaseLost, and the manager stops.
//   - Partitioning: a consistent-hash ring with VirtualNodes points per
//     live shard; the key is group/kind/namespace/name, and an object with
//     a controller ownerReference hashes as its owner, so children land on
//     their parent's shard.
//   - Assignment: the label shard.sharding.kubeloop.dev/<ring>=<shard>. A
//     mutating webhook served by every replica labels unassigned objects at
//     CREATE and UPDATE (failurePolicy Ignore, a short timeout); the
//     replica elected among the ring runs the sharder, which keeps the
//     MutatingWebhookConfiguration up to date and sweeps (a paged,
//     metadata-only list, served from the API server's watch cache) to
//     assign what the webhook missed. The sharder never watches the
//     sharded objects: apart from one page during a sweep, its memory does
//     not grow with their number.
//   - Shard side: the manager's cache of a sharded kind carries the
//     selector <shard label>=<this shard>, so a replica lists, watches and
//     stores only its share. The builder puts the reconciler of a sharded
//     For kind behind the ring's gate and runs that controller on every
//     replica, leader election or not; Ring.Reconciler does the same for a
//     controller built without the builder (it never gates twice).
//   - Moves: when a shard leaves (its Lease released or expired) its
//     objects are reassigned at once. When a shard joins, the sharder marks
//     the objects that move draining (drain.sharding.kubeloop.dev/<ring>);
//     the old shard's gate lets any reconcile in flight finish, then
//     acknowledges by removing both labels, and only then is the object
//     assigned to the new shard. A sweep that finds a shard gone and
//     another joined requests every drain before it moves the gone
//     shard's objects, so that the acknowledgments do not queue behind
//     the reconciles of the moved objects. No object is reconciled by two
//     shards at the same time.
//   - Observability: kubeloop_sharding_* metrics (shards alive, objects per
//     shard, moves, drain latency, sweep duration, lease held, sharder
//     leading, shard lease losses, rejoins and the time from a loss to
//     admitting again), the readiness check "shard" (failing while the
//     Lease is not held), logs with the keys "ring", "shard" and, around
//     a loss, "term".
//
// # Server-side mode
//
// Options.Mode = ServerSide uses the API server's shardSelector
// (Kubernetes 1.37, alpha, the ShardedListAndWatch feature gate) instead
// of labels: there is no webhook, no label, no sweep and no sharder. The
// 64-bit FNV-1a hash space of Options.Key (ShardByUID, metadata.uid, or
// ShardByNamespace, metadata.namespace) is cut into 127 segments, and the
// live shards' names decide, by Maglev's table population, which shard
// owns which (every replica computes the same; a shard owns 1/n of the
// segments to within one; a join or leave moves about 1/n). Each shard's
// cache lists and watches its own segments with a shardSelector. Its
// guarantees, beside membership, fenced writes and rejoin, which work as
// above:
//   - Detection: Start first lists each sharded kind with an invalid
//     shardSelector. A server that parses the field refuses it; one
//     without the gate silently drops the field (verified on
//     kube-apiserver 1.37.2) and would give every replica every object,
//     so Start returns an error wrapping ErrServerSideUnsupported that
//     names the kind and the gate. There is no fallback to Labels mode:
//     that mode needs a webhook and RBAC this one does not, and a silent
//     change of mode would hide a misconfigured cluster.
//   - Moves keep the drain guarantee: a shard that loses segments stops
//     admitting reconciles of their objects, waits for those in flight,
//     lists without them (its cache drops the objects; their NotFound is
//     not passed on as a deletion) and only then writes its Lease's
//     RangesAnnotation without them. A shard gains a segment only once no
//     live Lease of another shard lists it (a Lease expired or released by
//     the rules above does not count): it claims the segment in its own
//     Lease, reads the Leases again, and starts (admits, then lists) only
//     if still no other one lists it; of two claims at once at least one
//     sees the other, and the greater shard name withdraws. No object is
//     reconciled by two shards at the same time. After a rejoin a shard
//     starts from no segment.
//   - The annotation is 39 bytes whatever the number of objects. Each
//     step of a move writes it at once, changing nothing else on the Lease
//     (its spec, so every other replica's judgment of the hold, stays);
//     the renewals carry it too, and never conflict with those writes.
//     A shard waiting for a segment reads the ring's Leases every
//     RetryPeriod/4.
//   - Cache: the shard's one informer per kind lists with the selector of
//     its segments; a change ends its watch and it lists again (from the
//     watch cache, at its last resourceVersion), which drops and adds the
//     objects that moved (BENCHMARKS-sharding.md compares it with Labels
//     mode). A shard holding no segment lists the single hash 0 (no
//     selector matches nothing), which the gate filters.
//   - Children follow their owner only with ShardByNamespace: an owner and
//     its children share a namespace, so a hash and a shard, and
//     Options.Controlled kinds are cached with the same selector. By uid a
//     child hashes apart from its owner, so Options.Controlled is refused
//     with ShardByUID: leave the children unsharded (each replica caches
//     them whole, as any kind of Owns) or shard by namespace. By
//     namespace the spread is only as even as the namespaces' sizes.
//   - Before a drop, a shard by uid lists the kind's typed objects from
//     its cache (the reader given to Run) to remember which
//     keys leave, so that their NotFound is not passed on as a deletion.
//     A controller that caches the kind only as metadata gets a typed
//     informer of it started lazily (logged and counted by the cache).
//   - Metrics, beside the ring's: kubeloop_sharding_segments (the
//     segments this shard admits) and
//     kubeloop_sharding_segment_moves_total{direction="in"|"out"}; the
//     logs say "taking hash ranges" and "giving up hash ranges".
//   - A ring runs in one mode: replicas of Labels and ServerSide mode in
//     one ring would each reconcile by their own rules. Move a ring to
//     ServerSide mode once the old replicas are gone, and delete the
//     MutatingWebhookConfiguration their sharder kept (nothing serves or
//     removes it in ServerSide mode); the shard labels left on objects
//     are ignored.
//   - It needs RBAC to list the sharded kinds (the probe, the caches'
//     watch), and Leases as above; no webhook, no patch of the objects.
//
// Clusters as keys: with Options.Clusters a ring may have no sharded
// kinds and places the clusters of a fleet instead (multicluster.Sharded,
// wired by the manager when both Options.Sharding and Options.Clusters
// are set). The seam is small: Members reads the live shards and the view
// each published, PublishView publishes this shard's view as an
// annotation of its own Lease (ViewAnnotation; carried by the next
// renewal, so the Lease writes stay one per RetryPeriod), and Admit
// admits work under the shard's hold as the gate admits reconciles:
// fenced, ending with the term, and waited for by Start before it
// releases the Lease.
//
// # Parts
//
// Ring is a façade over five parts, each a type of its own in an
// internal package, built together by New (the manager then calls
// ConfigureCache, which changes only the cache options it is given, and
// runs the ring with Run and the cache the gate reads from):
//   - membership (internal/membership): the holders of this replica's
//     shard Lease, one per term, its observations of every shard Lease and
//     the view of the live shards they make, kept by a reader that
//     watches the Leases;
//   - gate (internal/gate): the admission state in front of the
//     reconcilers: the current term, the reconciles in flight, the fence
//     of each, the drain handover and the confirmation after a rejoin;
//   - sharder (internal/sharder): the campaign for the sharder Lease and
//     the sweeps; each object's move is decided by a pure function of its
//     labels, its shard on the ring, the state of its current shard and
//     of its owner (assign, reassign, drain, child or none), and the
//     sweep only makes the reads the decision asks for, sends the patch,
//     counts it and retries a conflict;
//   - assign (internal/assign): the assignment webhook and the
//     MutatingWebhookConfiguration the sharder keeps for it;
//   - ServerSide mode's hash segments (serverside*.go in this package).
//
// Start (or Run) joins them: it acquires the shard Lease, opens the gate
// for the term, runs the membership reader and the sharder's campaign
// (or ServerSide mode's handshake) for as long as the term lasts, and
// rejoins or stops as described above.
//
// What it needs: a webhook server certificate (the manager's webhook
// server), RBAC to get, list, create, update and delete Leases in
// Options.Namespace, to get, create and update
// MutatingWebhookConfigurations, and to get, list, watch and patch the
// sharded kinds (watch for the shards' caches).
package sharding
