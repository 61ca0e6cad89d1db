// Package e2e_bench runs one controller per child process against the fake
// API server (a separate process on loopback) and measures, per stack
// (kubeloop, controller-runtime, client-go):
//
//   - cold start: time and CPU until every ConfigMap (-objects, 100k) has
//     been reconciled, peak RSS, heap after GC;
//   - steady state: -events MODIFIED events (100k) over -event-objects
//     ConfigMaps (10k), pushed as fast as the server can write: client CPU
//     per event and events per second until every object reached its last
//     version, and the process's heap allocations per event (allocs/event,
//     B/event: runtime.MemStats over the phase);
//   - latency: -latency single events (1,000), 2 ms apart, from the fake
//     server's sending of the watch event to the moment the reconcile that
//     sees the new version completes (p50, p99). Both ends are read on
//     CLOCK_MONOTONIC, which the server and the child share. fire-p50-us is
//     the earlier measure, from sending the trigger request: it adds the
//     request's way to the server, about half of ping-us (a plain
//     request's round trip, reported for scale).
//
// BenchmarkColdStart runs the cold start phase alone (the scaling series,
// at -objects 10k, 100k and 1M in hack/bench.sh) and reports the costs per
// object. With -floor, BenchmarkE2E also runs stacks.Floor, a plain
// WatchList consumer that is the reference for what the wire and the
// decode cost (impl=floor, not a peer), and stacks.WireWorker and
// stacks.Wire, which read the same watch and decode nothing, with and
// without handing each object to a worker (impl=wire-worker, impl=wire:
// what the wire alone costs).
//
// The reconcilers read the object through each library's usual read path
// (kubeloop and controller-runtime: the manager's cached client, which deep
// copies; client-go: the lister) and do nothing else.
//
//	GOMAXPROCS=2 go test -run '^$' -bench BenchmarkE2E -benchtime 1x -count 5
//
// Profiles of the child: KUBELOOP_E2E_CPUPROFILE=<prefix> (CPU, per phase;
// KUBELOOP_E2E_PROFILE_HZ sets the rate), KUBELOOP_E2E_MEMPROFILE=<prefix>
// (allocations at the start and end of the steady phase, for
// pprof -diff_base), KUBELOOP_E2E_TRACE=<prefix> (execution trace of the
// latency phase).
package e2e_bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/kubeloop/kubeloop/bench/fakeapiserver"
)

var (
	nObjects      = flag.Int("objects", 100000, "ConfigMaps in the fake cluster (cold start)")
	nEvents       = flag.Int("events", 100000, "MODIFIED events in the steady-state phase")
	nEventObjects = flag.Int("event-objects", 10000, "ConfigMaps the steady-state events modify")
	nLatency      = flag.Int("latency", 1000, "single events in the latency phase")
	workers       = flag.Int("workers", 2, "reconcile workers of every stack")
	reverse       = flag.Bool("reverse", false, "run the stacks in reverse order (hack/bench.sh alternates, so none always goes first)")
	traced        = flag.Bool("traced", false, "BenchmarkE2E also runs the kubeloop stack with tracing on (impl=kubeloop-hook: a Tracer that does nothing; impl=kubeloop-otel: the OpenTelemetry SDK; see stacks.Traced)")
	floor         = flag.Bool("floor", false, "BenchmarkE2E also runs the reference consumers stacks.Floor, stacks.WireWorker and stacks.Wire (impl=floor, wire-worker, wire)")

	server *fakeapiserver.Process
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run())
	}
	if url := os.Getenv(serverURLEnv); url != "" {
		// A server started by the caller (hack/bench.sh keeps one per size
		// of the scaling series across rounds, as encoding 1M objects
		// takes minutes): it must hold exactly -objects ConfigMaps.
		server = fakeapiserver.Connect(url)
		st, err := server.Stats()
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s=%s: %v\n", serverURLEnv, url, err)
			os.Exit(1)
		}
		if st.ConfigMaps != *nObjects {
			fmt.Fprintf(os.Stderr, "%s=%s holds %d ConfigMaps, not -objects %d\n", serverURLEnv, url, st.ConfigMaps, *nObjects)
			os.Exit(1)
		}
		os.Exit(m.Run())
	}
	var err error
	server, err = fakeapiserver.Launch(context.Background(), fakeapiserver.Config{ConfigMaps: *nObjects})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	server.Stop()
	os.Exit(code)
}

// serverURLEnv names a running fake API server to use instead of
// launching one.
const serverURLEnv = "KUBELOOP_E2E_SERVER"
