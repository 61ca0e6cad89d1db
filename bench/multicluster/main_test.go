// Package multicluster_bench measures kubeloop's multicluster fleet (issue
// 30) against the fake fleet server (bench/cmd/fakefleet, a child process:
// a hub whose kubeconfig Secrets point at member clusters under
// /clusters/<name>/, each with -configmaps ConfigMaps), and a few clusters
// on a real control plane. The operator is the kubeconfig Secrets
// provider, a multicluster.Fleet and one controller watching ConfigMaps on
// every cluster (one kind), -workers workers, FairByCluster, whose
// reconciler reads the ConfigMap from the cluster's cache.
//
//   - BenchmarkEngage/clusters=N (10, 100, 1,000): N Secrets created back
//     to back; engage latency from just before a Secret's create request
//     to the first reconcile of its cluster (p50, p99), and the time until
//     all reconciled. Then, idle for a second: heap (after GC) and
//     goroutines per engaged cluster over the fleet with none; then every
//     Secret deleted: what is left once every cluster has left.
//   - BenchmarkColdStart/clusters=1000: the Secrets exist before the
//     operator starts; the time until every cluster has synced and
//     reconciled.
//   - BenchmarkCycles/cycles=1000: clusters engaged and disengaged in
//     waves of -wave (each engagement waits for its first reconcile, each
//     leave for the cluster to be forgotten); heap and goroutines after
//     the cycles over those after a warm-up of 2 waves (ratio, 1 = back to
//     baseline).
//   - BenchmarkBlackhole/clusters=100: -blackhole-clusters clusters,
//     single events fired round robin over them, 2 ms apart, in phases of
//     -events/3: three without the fault alternating with three with it,
//     where one cluster is blackholed (its open watch breaks, its new
//     requests get no answer; restored between pairs). The
//     event-to-reconcile p99 of the other clusters with the fault over
//     that without it (p99-ratio), and whether the readiness check showed
//     the blackholed cluster (blackhole-unready).
//   - BenchmarkRealEngage/clusters=N (10, 50; -real): the same as
//     BenchmarkEngage on one real control plane (kubeloop's envtest): its
//     own namespace holds the Secrets, each a kubeconfig for the plane
//     itself, so N clusters are N names for one API server, each with its
//     own transport (HTTP/2 over TLS).
//
// After the clusters left, BenchmarkEngage and BenchmarkRealEngage also
// report what is left (heap-left-KiB, goroutines-left, the fraction of
// Clusters and transports the collector took); with -late-wait D they
// measure the heap again D later (golang.org/x/net/http2 keeps a closed
// connection, and its transport, until its 30 s read-idle timer fires).
// KUBELOOP_MC_PROFILE=<prefix> writes goroutine and heap profiles at the
// start, when idle and after the clusters left (<prefix>.base.heap, ...;
// compare with pprof -diff_base, GODEBUG=memprofilerate=1 for exact
// figures).
//
// make bench-multicluster (hack/bench-multicluster.sh) runs them all and
// writes BENCHMARKS-multicluster.md through mcreport. Run one benchmark per
// process (heap and goroutine figures are the process's):
//
//	GOMAXPROCS=2 go test -run '^$' -bench 'BenchmarkEngage/clusters=100$' -benchtime 1x ./multicluster/
package multicluster_bench

import (
	"flag"
	"os"
	"testing"
)

var (
	configMaps        = flag.Int("configmaps", 1, "ConfigMaps of each fake member cluster")
	workers           = flag.Int("workers", 4, "reconcile workers")
	wave              = flag.Int("wave", 10, "clusters engaged at once in BenchmarkCycles")
	nEvents           = flag.Int("events", 3000, "events fired in BenchmarkBlackhole")
	blackholeClusters = flag.Int("blackhole-clusters", 100, "clusters of BenchmarkBlackhole")
	lateWait          = flag.Duration("late-wait", 0, "BenchmarkEngage and BenchmarkRealEngage: also measure the heap left this long after every cluster left")
	realPlanes        = flag.Bool("real", false, "run BenchmarkRealEngage on a real control plane (make tools builds it)")
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(m.Run())
}
