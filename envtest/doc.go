// Package envtest runs a real control plane, etcd and kube-apiserver, on
// loopback for tests and demos.
//
// The binaries are built from the Go module proxy by `make tools` (the
// module in tools/controlplane) into a cache directory outside the clone:
// $KUBELOOP_TOOLS_DIR/<version>/ when the variable is set, else
// ~/.cache/kubeloop/tools/<version>/. Environment.BinaryAssetsDirectory
// overrides both.
//
// A test package starts one Environment in TestMain and shares it:
//
//	func TestMain(m *testing.M) {
//		env := &envtest.Environment{CRDDirectoryPaths: []string{"testdata/crds"}}
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
//   - No kube-controller-manager runs: Deployments create no ReplicaSets,
//     owner references are not garbage collected, namespaces never finish
//     terminating.
package envtest
