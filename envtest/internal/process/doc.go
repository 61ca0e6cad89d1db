// Package process runs one control-plane process (etcd or kube-apiserver)
// for envtest: it starts the binary, keeps the last lines it printed for
// errors, polls a readiness check and kills it.
//
// Guarantees:
//   - A started process runs in its own process group and gets SIGKILL
//     when the test process dies (parent-death signal), so a panicking
//     test leaves no orphan.
//   - Stop kills the whole group and waits for the process to exit, at
//     most the timeout given; it is safe on a process never started or
//     already gone.
//   - WaitReady returns nil once the check passes, or an error that says
//     whether the process exited or the context ended, with the last 40
//     lines it printed.
//   - FreePort returns a loopback port that was free a moment ago; the
//     caller retries on another when AddressInUse says it was taken.
package process
