package controller

import "github.com/kubeloop/kubeloop/reconcile"

// FairByNamespace is an Options.FairnessKey that makes each namespace a
// tenant: the controller's queue hands out waiting Requests round-robin
// across namespaces, so a namespace that creates 10,000 objects at once
// delays another namespace's Request by at most one Request per namespace
// with Requests waiting, instead of by all 10,000.
//
// With W workers, a Request of a namespace that has nothing else waiting
// starts once the W reconciles in flight when it arrived have returned
// and at most one Request of each other waiting namespace has been handed
// out before it. Requests of cluster-scoped objects (namespace "") form a
// tenant of their own.
//
// Fairness applies within a priority: initial-list and resync Requests
// (handler.LowPriority) are still served after Requests of normal
// priority (until they have waited the queue's AgeAfter), whatever their
// namespace.
func FairByNamespace(req reconcile.Request) string { return req.Namespace }

// FairByCluster is an Options.FairnessKey that makes each cluster of a
// fleet a tenant (Request.Cluster; the manager's own cluster, "", is one
// tenant): a cluster that floods the queue delays a quiet cluster's
// Request by at most one Request per other cluster with Requests waiting,
// the bound of FairByNamespace. With W workers and T clusters with
// Requests waiting, at most W + T - 1 reconciles start between a quiet
// cluster's Request arriving and its own reconcile starting.
func FairByCluster(req reconcile.Request) string { return req.Cluster }
