// Package multicluster runs one operator across a fleet of clusters that
// join and leave while it runs.
//
// A Provider discovers clusters and engages each one through a Sink with a
// context that ends when the cluster leaves. The Fleet is the Sink: for
// each engaged cluster it builds a Cluster, a light object made of a cache,
// a client that reads from that cache and writes to the cluster's API
// server, a REST mapper and an HTTP client (no servers, no leader
// election, no event broadcaster). Providers for kubeconfig Secrets,
// files, cluster-api and ClusterProfile are in multicluster/providers.
//
// With a manager, give the provider in manager.Options.Clusters and choose
// the clusters of each watch in the builder:
//
//	mgr, _ := manager.New(cfg, manager.Options{Clusters: provider})
//	builder.ControllerManagedBy(mgr).
//		For(&corev1.ConfigMap{}, builder.OnFleet).       // every cluster of the fleet
//		Owns(&corev1.Secret{}, builder.OnFleet).
//		Watches(&v1.Policy{}, h).                         // the manager's own cluster
//		Complete(r)
//
//	func (r *R) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
//		cl, err := r.mgr.GetCluster(ctx, req.Cluster) // "" is the manager's own cluster
//		if err != nil {
//			return reconcile.Result{}, err // the cluster left
//		}
//		var cm corev1.ConfigMap
//		err = cl.GetClient().Get(ctx, req.NamespacedName, &cm)
//		...
//	}
//
// A watch without an On* option is of the manager's own cluster, so
// single-cluster code does not change; builder.OnClusters(match) picks
// clusters by name ("" is the manager's own). Request.Cluster names the
// cluster of a Request; Requests of a cluster's sources carry its name
// (handlers that map, such as EnqueueRequestForOwner or a map function,
// keep it; a map function finds the event's cluster with
// reconcile.ClusterFromContext). Fleet.IndexField adds a field index to
// every cluster, present and future.
//
// Lifecycle of a cluster:
//   - Engage builds the Cluster and returns; everything else runs in the
//     cluster's own goroutine, under a context that ends when the
//     provider's context for it ends or the fleet stops. That goroutine
//     ends once the cluster has synced: an idle cluster runs only its
//     informers' goroutines (one per kind) and its connections' (HTTP/2:
//     one per connection and one per open watch; HTTP/1.1: two per
//     connection), and its leaving is a context.AfterFunc.
//   - The fleet's field indexes are added and every controller that
//     watches the fleet is engaged (controller.EngageCluster): its
//     sources get the cluster's informers and register their handlers.
//     Only then does the cluster's cache start, so the initial list
//     reaches every handler. A controller added later is handed the
//     informers' stores as initial adds: no initial-list event is lost
//     whichever comes first.
//   - A step that fails (the cluster is unreachable, a kind is not served
//     there) is retried with backoff, 500 ms doubling to 30 s, while the
//     cluster stays engaged.
//   - When the cluster leaves, its sources stop (their handler
//     registrations end; nothing more is added), its Requests still
//     queued are dropped when a worker takes them and a failed reconcile
//     of it is not retried, its rate limiter history goes, its cache and
//     informers stop, its idle connections close and its goroutines exit
//     before the cluster is forgotten. Its metric series go with it.
//
// Guarantees:
//   - A cluster that is slow or unreachable delays only itself: its
//     discovery, informers and retries run in its goroutine; controllers
//     do not wait for its sources to sync; the manager's readiness shows
//     it only in the "clusters" check, which names each cluster that has
//     not synced (`cluster "east": caches have not synced yet ...`).
//   - Backoff is per cluster: a controller built by the builder with fleet
//     watches and no RateLimiter has a controller.PerClusterRateLimiter,
//     so one cluster's failures do not spend another's retry budget.
//   - controller.FairByCluster makes each cluster a tenant of the queue:
//     with W workers and T clusters with Requests waiting, a quiet
//     cluster's Request waits for at most W + T - 1 reconciles.
//   - An idle engaged cluster with one kind costs about 110 KiB of heap
//     and 3 goroutines on plain HTTP, 220 KiB and 3 on TLS with HTTP/2
//     (bench/multicluster BenchmarkEngage and BenchmarkRealEngage); a
//     cluster that left leaves nothing behind but what
//     golang.org/x/net/http2 keeps of a closed connection (about 70 KiB,
//     for its 30 s read-idle health-check timer; then it is collected).
//   - Single-cluster cost is unchanged: Request grows by one string; the
//     queue door of a local watch compares one string per add, and a
//     worker one string per Request.
//   - Without sharding every replica runs the whole fleet (its caches
//     stay warm); controllers run where they lead, as for the manager's
//     own cluster. With sharding (below) each cluster is engaged and
//     reconciled on one replica only.
//
// Metrics (on the manager's registry): kubeloop_multicluster_cluster_synced
// {cluster} (0 or 1, per engaged cluster), kubeloop_multicluster_
// engagements_total and kubeloop_multicluster_disengagements_total; with
// sharding also kubeloop_multicluster_sharded_held_clusters{shard},
// _placed_clusters{shard} (above held while a previous owner drains) and
// _drains_total{shard}.
//
// Across replicas: with both manager.Options.Sharding and
// Options.Clusters (a ring with no sharded kinds is fine), the clusters,
// not objects, are split among the replicas by Sharded, which stands
// between the Provider and the fleet. Every replica discovers every
// cluster (names and connection details only) and engages only those
// placed on its shard: Place, bounded-load rendezvous hashing over the
// live shards of the ring (sharding.Ring.Members), a pure function every
// replica computes alike. The builder gates each controller with fleet
// watches (Sharded.Reconciler) and runs it on every replica, leader or
// not. The manager's own cluster ("") is placed too, so its Requests in
// such a controller are reconciled by one replica.
//
//	mgr, _ := manager.New(cfg, manager.Options{
//		Clusters: provider,
//		Sharding: sharding.Options{Ring: "my-operator"},
//	})
//	builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}, builder.OnFleet).Complete(r) // unchanged
//
// Guarantees with sharding:
//   - No cluster is reconciled by two live replicas at once. A replica
//     that no longer owns a cluster drains it first (no new reconcile is
//     admitted, the contexts of those in flight end and they are waited
//     for, its engagement ends and is waited for), then publishes the
//     hash of the view it operates under in its own shard Lease (the
//     annotation sharding.kubeloop.dev/view, carried by its next renewal).
//     A replica engages a cluster placed on it only once its own Lease
//     shows its current view and no other live shard's Lease shows a view
//     that gives that shard the cluster.
//   - A joining replica gets its clusters without waiting out a Lease:
//     after the owners' drains and one renewal each (TestShardedClusters:
//     about half a second with a RetryPeriod of 500 ms).
//   - Lease writes do not grow with the clusters: the view is one short
//     value, written by the renewals the ring makes anyway.
//   - A replica whose Lease expired or was released is no longer a
//     member: its clusters move at once. Its own reconciles stopped
//     before (the ring's hold ends RenewDeadline after the last renewal;
//     reconciles are admitted under the hold and fenced by it,
//     client.WithFence), and a replica whose ring does not admit work
//     (Lease lost, a rejoin's quarantine, stopping) holds nothing.
//   - Balance: no shard holds more than LoadFactor (1.1) times the mean
//     (once there are a few clusters per shard); a shard joining moves
//     little more than its share.
//
// What it does not do: a Request mapped by a local watch to a cluster
// placed on another replica is dropped here (that replica's watches see
// the same event); a cluster set that changes faster than a RetryPeriod
// delays new engagements until it settles (every change is a new view).
// A controller cannot both reconcile a sharded kind and watch the sharded
// fleet.
package multicluster
