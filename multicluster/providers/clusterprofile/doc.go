// Package clusterprofile is a multicluster.Provider whose clusters are
// SIG-multicluster's ClusterProfiles (the Cluster Inventory API,
// multicluster.x-k8s.io/v1alpha1, KEP-4322), read as unstructured objects,
// so it needs no cluster-inventory-api dependency.
//
//	p, err := clusterprofile.New(hubConfig, clusterprofile.Options{
//		AccessProviders: []clusterprofile.AccessProvider{{
//			Name: "google",
//			Exec: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "/plugins/gcp-auth"},
//		}},
//	})
//	// ClusterProfile fleet/eu-1 engages cluster "fleet/eu-1".
//
// # What a ClusterProfile yields, and what is supported
//
// A ClusterProfile names its cluster; a cluster manager (Open Cluster
// Management, Fleet, Karmada, ...) writes in its status how to reach it.
// The provider supports the two forms in use, tried in this order:
//
//  1. Access providers: status.accessProviders (and the deprecated
//     status.credentialProviders, with accessProviders winning on a name
//     in both), each {name, cluster}, where cluster is a kubeconfig
//     cluster entry (clientcmd v1: server, certificate-authority-data,
//     tls-server-name, insecure-skip-tls-verify, proxy-url,
//     disable-compression, extensions). Options.AccessProviders lists the
//     names this operator can obtain credentials for, in order of
//     preference; the first one the profile offers is used. Credentials
//     come either from an exec plugin (AccessProvider.Exec, the
//     cluster-inventory-api's provider file, KEP-5339), or from
//     AccessProvider.Credentials, a function that completes the
//     rest.Config (a token, a client certificate, a WrapTransport): the
//     dependency-free hook for in-process credentials. For an exec plugin,
//     the cluster entry's extension "client.authentication.k8s.io/exec" is
//     passed to the plugin as its cluster config (ProvideClusterInfo), and
//     the KEP-5339 extensions
//     "clusterprofiles.multicluster.x-k8s.io/exec/additional-args" (a list
//     of strings) and ".../additional-envs" (a map of strings) are applied
//     as AccessProvider.ProfileArgs and ProfileEnv say (ignored by
//     default). A cluster entry's certificate-authority file path is
//     refused: the profile is written by someone else, the path would be
//     the operator's.
//  2. A kubeconfig Secret written by the cluster manager (the deprecated
//     "Secret" form of multicluster-runtime's provider), when
//     Options.SecretConsumer is set: the one Secret in the profile's
//     namespace labelled x-k8s.io/cluster-inventory-consumer=<consumer>
//     and x-k8s.io/cluster-profile=<profile name>, with the kubeconfig
//     under data key "Config" (read as the kubeconfig provider reads one,
//     local credentials refused unless Options.AllowLocalCredentials).
//
// Not supported: the v1alpha2 API, and exec plugins found through a
// provider file at run time (load it yourself and fill
// Options.AccessProviders).
//
// Health does not gate engagement unless Options.Ready says so
// (ControlPlaneHealthy is multicluster-runtime's default gate): a cluster
// whose health flaps would be disengaged and engaged again, its queued
// work dropped, where without the gate its reconcilers see its errors and
// back off.
//
// Guarantees:
//   - A ClusterProfile is engaged under "<namespace>/<name>" while it
//     exists, is not being deleted, passes Options.Ready (when set) and
//     yields a config as above; a change
//     of what it yields (the chosen access provider's cluster entry, or
//     the Secret's kubeconfig bytes) cancels the old engagement's context
//     and engages it again; a change elsewhere (properties, conditions)
//     engages nothing.
//   - A profile that yields nothing (no access provider this operator
//     knows, two matching Secrets, a kubeconfig that does not parse) is
//     logged once, naming namespace/name and what is wrong, and not
//     engaged until fixed; the provider never stops for one.
//   - One watch on ClusterProfiles and, with SecretConsumer, one on the
//     Secrets with that consumer label (whose data other than "Config" is
//     dropped before caching), for the whole fleet.
//   - Run returns nil when its context ends; every engagement's context
//     has ended by then.
package clusterprofile
