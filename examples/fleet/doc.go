// Package fleet is an operator that reconciles one kind across a fleet of
// clusters: every ConfigMap labelled fleet.kubeloop.dev/stamp=true, in the
// manager's own cluster and in each cluster of its fleet, gets
// data.cluster (the name of the cluster that holds it, "hub" for the
// manager's own) and data.stampedBy. The clusters are registered as
// kubeconfig Secrets in a namespace of the manager's cluster
// (multicluster/providers/kubeconfig); writing such a Secret adds a
// cluster while the operator runs, deleting it removes the cluster.
//
// It shows the multicluster API end to end: manager.Options.Clusters,
// builder.OnClusters for the watch, Request.Cluster in Reconcile,
// mgr.GetCluster(ctx, req.Cluster).GetClient() for the reads and writes,
// controller.FairByCluster for the queue. `make demo-fleet` runs it
// against three local control planes (cmd/demo).
package fleet
