// Package multicluster runs one operator across a fleet of clusters that
// join and leave while it runs.
//
// A Provider discovers clusters and engages each one through a Sink with a
// context that ends when the cluster leaves. The design of the fleet (the
// light per-cluster object, the manager's Options.Clusters, the builder's
// per-watch choice of clusters, sharding of clusters across replicas) is
// described below as it lands.
package multicluster
