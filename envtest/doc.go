// Package envtest runs a real control plane, etcd and kube-apiserver, on
// loopback for tests and demos.
//
// The binaries are built from the Go module proxy by `make tools` (the
// module in tools/controlplane) into a cache directory outside the clone:
// $KUBELOOP_TOOLS_DIR/<version>/ when the variable is set, else
// ~/.cache/kubeloop/tools/<version>/. Binaries that setup-envtest fetched
// work as well: Start searches, in controller-runtime's order,
// ControlPlane.APIServer.Path / ControlPlane.Etcd.Path, $TEST_ASSET_ETCD /
// $TEST_ASSET_KUBE_APISERVER, $KUBEBUILDER_ASSETS, BinaryAssetsDirectory,
// then the `make tools` cache, setup-envtest's default directory and
// /usr/local/kubebuilder/bin. A directory may hold the binaries or
// setup-envtest's <version>-<os>-<arch> subfolders (the newest complete one
// wins); one that does not exist is passed over. Nothing is downloaded
// (DownloadBinaryAssets is accepted and only changes the error's hint).
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
//   - kube-apiserver runs with --feature-gates=ShardedListAndWatch=true
//     (the shardSelector of sharding's server-side mode). A
//     Configure().Set("feature-gates", ...) replaces it; Append keeps it
//     (the API server merges repeated --feature-gates flags).
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
//   - When no place holds the binaries, Start's error (ErrBinaryMissing)
//     lists every place searched and what each lacked.
//   - UseExistingCluster (or USE_EXISTING_CLUSTER=true) starts nothing and
//     works on the cluster of Environment.Config or the current
//     kubeconfig; Stop deletes the CRDs and webhook configurations Start
//     created there, never ones that existed before.
//   - No kube-controller-manager runs: Deployments create no ReplicaSets,
//     owner references are not garbage collected, namespaces never finish
//     terminating.
package envtest
