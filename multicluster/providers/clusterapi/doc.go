// Package clusterapi is a multicluster.Provider whose clusters are
// cluster-api's: Cluster objects (cluster.x-k8s.io, v1beta1 or v1beta2)
// of the management cluster and the "<cluster>-kubeconfig" Secret beside
// each. It reads them as unstructured objects and plain Secrets, so it
// needs no cluster-api dependency.
//
//	p, err := clusterapi.New(mgmtConfig, clusterapi.Options{Namespace: "fleet"})
//	// a provisioned Cluster fleet/eu-1 and its Secret fleet/eu-1-kubeconfig
//	// (data key "value") engage cluster "fleet/eu-1".
//
// A Cluster is engaged, under the name "<namespace>/<name>", when
//   - it is not being deleted (no deletionTimestamp),
//   - its Secret "<name>-kubeconfig" in its namespace has the kubeconfig
//     under data key "value" (cluster-api's format), and
//   - unless Options.EngageUnprovisioned, it reports a working control
//     plane: status.phase "Provisioned", or status.controlPlaneReady
//     (v1beta1), or status.initialization.controlPlaneInitialized
//     (v1beta2), or a True condition ControlPlaneInitialized,
//     ControlPlaneAvailable or ControlPlaneReady in status.conditions
//     (Options.Ready replaces this check).
//
// Guarantees:
//   - A Cluster that stops meeting the conditions (deleted, deletion
//     started, Secret gone) is disengaged; a change of its kubeconfig's
//     bytes (cluster-api rotates them) cancels the old engagement's
//     context and engages the cluster again. A Cluster that stops
//     reporting readiness after it had it stays engaged only while it
//     still reports one of the signals: status.phase going back to
//     "Provisioning" disengages it.
//   - A kubeconfig Secret that cannot be used is logged once, naming
//     namespace/name and what is wrong, and not engaged until fixed; the
//     provider never stops for one. A kubeconfig that runs an exec plugin
//     or names a local file is refused unless
//     Options.AllowLocalCredentials (cluster-api writes self-contained
//     ones).
//   - Two watches for the whole fleet: Clusters (their spec dropped
//     before caching), and Secrets matching Options.SecretSelector
//     (default: those with the label cluster.x-k8s.io/cluster-name, which
//     cluster-api puts on the Secrets it writes), whose data is dropped
//     before caching unless the name ends in "-kubeconfig", and then all
//     but "value". Nothing is watched per cluster.
//   - The Cluster version read is Options.Version, or the API server's
//     preferred version of cluster.x-k8s.io, found at Run; while that
//     group is not served (cluster-api not installed yet) Run logs it and
//     asks again every 10 seconds.
//   - Run returns nil when its context ends; every engagement's context
//     has ended by then.
package clusterapi
