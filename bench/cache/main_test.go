// Package cache_bench compares kubeloop's cache with controller-runtime's,
// each with its library's defaults, both fed by the same fake API server
// (a separate process on loopback, see package fakeapiserver).
//
//	GOMAXPROCS=2 go test -run '^$' -bench 'BenchmarkCacheSync' -benchtime 1x -count 5
//	GOMAXPROCS=2 go test -run '^$' -bench 'BenchmarkCacheRead' -benchmem -count 5
//	benchstat -col /impl ...
//
// Flags -configmaps, -pods and -secrets size the fake cluster.
package cache_bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/go-logr/logr"

	"github.com/kubeloop/kubeloop/bench/fakeapiserver"
)

var (
	nConfigMaps = flag.Int("configmaps", 100000, "ConfigMaps in the fake cluster")
	nPods       = flag.Int("pods", 10000, "Pods in the fake cluster")
	nSecrets    = flag.Int("secrets", 10000, "Secrets in the fake cluster")
	reverse     = flag.Bool("reverse", false, "run the implementations in reverse order (hack/bench.sh alternates, so neither always goes first)")

	server *fakeapiserver.Process
)

func TestMain(m *testing.M) {
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	if !benchmarking() {
		os.Exit(m.Run())
	}
	var err error
	server, err = fakeapiserver.Launch(context.Background(), fakeapiserver.Config{ConfigMaps: *nConfigMaps, Pods: *nPods, Secrets: *nSecrets})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	server.Stop()
	os.Exit(code)
}

// benchmarking reports whether -test.bench selects anything; the fake
// server is only started for benchmarks.
func benchmarking() bool {
	f := flag.Lookup("test.bench")
	return f != nil && f.Value.String() != ""
}
