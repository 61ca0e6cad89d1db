// Package envtest runs a real control plane, etcd and kube-apiserver, on
// loopback for tests and demos.
//
// The binaries are built from the Go module proxy by `make tools` (the
// module in tools/controlplane) into a cache directory outside the clone:
// $KUBELOOP_TOOLS_DIR/<version>/ when the variable is set, else
// ~/.cache/kubeloop/tools/<version>/. Environment.BinaryAssetsDirectory
// overrides both, and so does $KUBEBUILDER_ASSETS when it names a
// directory holding etcd and kube-apiserver (what setup-envtest prints).
//
// A test package starts one Environment in TestMain and shares it:
//
//	func TestMain(m *testing.M) {
//		env := &envtest.Environment{
//			CRDDirectoryPaths:     []string{"testdata/crds"},
//			WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: []string{"testdata/webhook"}},
//		}
//		cfg, err := env.Start()
//		if err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//		restConfig = cfg
//		code := m.Run()
//		if err := env.Stop(); err != nil {
//			fmt.Fprintln(os.Stderr, err)
//		}
//		os.Exit(code)
//	}
//
// Guarantees:
//   - etcd and kube-apiserver listen on free loopback ports only; a port
//     taken between choosing and binding is retried on another.
//   - Clients authenticate with certificates from a CA made for this
//     Environment; the returned config is in system:masters. AddUser issues
//     further identities, for least-privilege tests with Authorization "RBAC".
//   - Start either returns a ready control plane (readyz ok, the default
//     namespace present, every CRD established and served) or an error that
//     says what failed, with the last lines each process printed.
//   - Stop kills both processes, waits for them and removes every temporary
//     file. The processes also die with the test process (parent-death
//     signal), so a panicking test leaves no orphan.
//   - StopAPIServer/StartAPIServer and StopEtcd/StartEtcd simulate outages:
//     each process restarts on its old port with its old data.
//   - CRDDirectoryPaths that do not exist are skipped, unless
//     ErrorIfCRDPathMissing; manifests are read before any process starts.
//   - WebhookInstallOptions install the Mutating- and
//     ValidatingWebhookConfigurations of a directory such as kubebuilder's
//     config/webhook, pointed at https://LocalServingHost:LocalServingPort
//     with a CA bundle; the serving pair is in LocalServingCertDir
//     (tls.crt, tls.key) for the test's webhook server.
//   - UseExistingCluster (or USE_EXISTING_CLUSTER=true) starts nothing and
//     works on the cluster of ExistingClusterConfig or the current
//     kubeconfig; Stop deletes the CRDs and webhook configurations Start
//     created there, never ones that existed before.
//   - No kube-controller-manager runs: Deployments create no ReplicaSets,
//     owner references are not garbage collected, namespaces never finish
//     terminating.
package envtest
