// Package kubeconfig is a multicluster.Provider whose clusters are
// kubeconfigs held in Secrets: the common pattern of a fleet whose
// members are registered by writing a Secret into a namespace of the
// manager's cluster.
//
//	p, err := kubeconfig.New(mgrConfig, kubeconfig.Options{Namespace: "fleet"})
//	// manager.Options{Clusters: p} runs it; a Secret
//	//   metadata: {name: eu-1, namespace: fleet, labels: {multicluster.kubeloop.dev/kubeconfig: "true"}}
//	//   data: {kubeconfig: <bytes>}
//	// engages cluster "eu-1".
//
// The provider watches the Secrets of Options.Namespace that match
// Options.Selector (on the server, so the cache holds no other Secret) and
// engages one cluster per Secret, from the kubeconfig under
// Options.DataKey (its current-context, or its only context). The
// cluster's name is the Secret's name, or the value of
// Options.NameLabel or Options.NameAnnotation.
//
// Guarantees:
//   - A matching Secret is engaged once its kubeconfig is readable; a
//     change of the kubeconfig's bytes cancels the old engagement's
//     context and engages the cluster again with the new config; a
//     change of anything else (other keys, labels, annotations) engages
//     nothing. A Secret deleted, or whose labels no longer match the
//     selector, is disengaged, and so is one whose cluster name changes
//     (the new name is engaged).
//   - A Secret that cannot be used (no DataKey, bytes that are not a
//     kubeconfig, a context without a server, no name label, local
//     credentials) is logged once, naming namespace/name and what is
//     wrong, and not engaged (an engagement of its cluster from earlier
//     bytes ends); it is engaged as soon as it is fixed. No Secret ever
//     stops the provider.
//   - Unless Options.AllowLocalCredentials, a kubeconfig that runs an exec
//     plugin or auth provider, or names a local file (a certificate path,
//     tokenFile), is such a Secret: whoever may write Secrets in the
//     namespace could otherwise run commands in, or read files of, the
//     operator's pod.
//   - Two Secrets naming one cluster: the one first by namespace/name is
//     engaged, the other logged.
//   - One watch, on Secrets, for the whole fleet; nothing per cluster.
//     Only the kubeconfig of each Secret is kept in memory (its other
//     data is dropped before caching).
//     While the watch cannot list (RBAC, an unreachable API server) the
//     provider keeps its clusters engaged, logs why every 15 seconds and
//     catches up when it can list again.
//   - Run returns nil when its context ends, after its goroutines have
//     exited; every engagement's context has ended by then.
package kubeconfig
