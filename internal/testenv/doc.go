// Package testenv is the one TestMain of the module's test packages: it
// starts the package's shared control plane (an envtest.Environment, with
// its CRDs, Authorization mode and API server flags), runs the tests, stops
// the control plane and checks that no goroutine was left behind.
//
//	var env *envtest.Environment
//
//	func TestMain(m *testing.M) {
//		env = &envtest.Environment{Authorization: "RBAC", CRDDirectoryPaths: []string{"testdata/crds"}}
//		testenv.Main(m, testenv.Options{Env: env})
//	}
//
// A package without a control plane calls testenv.Main(m, testenv.Options{})
// for the leak check alone.
//
// Guarantees:
//   - The control plane is Env as configured; an *envtest.Environment
//     runs kube-apiserver with ShardedListAndWatch on (envtest's default,
//     for sharding's ServerSide mode).
//   - Setup runs after the control plane is ready and before the tests;
//     Teardown runs after the tests, and also when Setup failed, before the
//     control plane stops.
//   - The process exits non-zero when the control plane does not start,
//     Setup, Teardown or Stop fails, a test fails, or, after an otherwise
//     green run, goroutines are left once the control plane (and with it
//     every connection to it) is gone.
//   - The leak check ignores only goroutines that outlive tests by design:
//     idle persistent HTTP connections that client-go's transport cache
//     keeps for the life of the process, and klog's flush daemon (the
//     SharedLeakIgnores). Options.IgnoreLeaks adds a package's own.
//
// It is imported only by tests and examples' tests (deps_test.go puts it
// in the top, test-only layer).
package testenv
