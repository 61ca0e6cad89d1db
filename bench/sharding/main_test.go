// Package sharding_bench measures kubeloop's sharding against a real
// control plane (kubeloop's envtest: etcd and kube-apiserver on loopback,
// built by `make tools`); issue 17's targets are in BENCHMARKS.md.
//
//   - BenchmarkShardedThroughput/replicas=N (1, 2, 4): N sharded managers
//     in this process, one worker each, a reconciler that reads the object
//     from the cache and waits -work (5 ms); the time from starting the
//     managers until each of -objects (3,000) pre-created ConfigMaps has
//     been reconciled once (s/op, objects/s).
//   - BenchmarkShardedHeap/replicas=N (0 objects, then 1, 2, 4 replicas):
//     every replica is a separate OS process (this test binary run as a
//     child) that syncs its cache, reconciles its share, and reports
//     runtime.MemStats.HeapAlloc after two forced GCs (heap-B/replica,
//     mean and max over the replicas) and the objects its cache holds.
//     replicas=empty is one replica whose share is empty: the constant
//     part of a replica's heap.
//   - BenchmarkSharderHeap/objects=K (1,000 then 20,000): one process
//     builds the ring's Ring (as the sharder's replica does) and sweeps K assigned
//     ConfigMaps; a sampler forces a GC every 10 ms during the sweep and
//     reports the largest and the median HeapAlloc right after those GCs
//     (sweeping for at least 3 s, so that both sizes are sampled alike).
//     BenchmarkSharderHeap/list=rv0|page shows why the sweep pages: the
//     live heap held by one LIST response of 20,000 objects' metadata
//     with resourceVersion "0" (the API server ignores limit then)
//     against one page of 500.
//   - BenchmarkShardingModes/mode=labels|server-side: Labels mode against
//     ServerSide mode (the API server's shardSelector) over -objects
//     unassigned ConfigMaps: time and kube-apiserver CPU to start 3
//     shards and to move after a scale 3 -> 4, idle CPU, heap per
//     replica (modes_test.go).
//
// The objects of the throughput and heap benchmarks are created already
// assigned (one label per ring, as the assignment webhook would have set
// it at admission), and each ring's sharder Lease is held by a placeholder
// holder, so no replica runs the sharder: these benchmarks measure the
// shards' side only. The sharder's cost is BenchmarkSharderHeap's.
//
// Run one benchmark per process (each creates its own objects on a fresh
// control plane), with GOMAXPROCS=2:
//
//	go test -run '^$' -bench 'BenchmarkShardedThroughput' -benchtime 1x -count 3 ./sharding/
package sharding_bench

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
)

var (
	nObjects = flag.Int("objects", 3000, "ConfigMaps of the throughput and heap benchmarks")
	work     = flag.Duration("work", 5*time.Millisecond, "how long each reconcile of the throughput benchmark waits")
	payload  = flag.Int("payload", 1024, "bytes of data in each ConfigMap")

	env     *envtest.Environment
	cfg     *rest.Config
	cfgPath string // connInfo as JSON, for the children
)

// connInfo is what a child process needs to reach the API server.
type connInfo struct {
	Host                      string
	CAData, CertData, KeyData []byte
}

func (c connInfo) config() *rest.Config {
	return &rest.Config{
		Host:            c.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.CAData, CertData: c.CertData, KeyData: c.KeyData},
		QPS:             -1,
	}
}

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run()) // no benchmark asked for: no control plane
	}
	code := 1
	if err := setup(); err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
	} else {
		code = m.Run()
	}
	if env != nil {
		_ = env.Stop()
	}
	if cfgPath != "" {
		_ = os.RemoveAll(filepath.Dir(cfgPath))
	}
	os.Exit(code)
}

func setup() error {
	env = &envtest.Environment{}
	t0 := time.Now()
	var err error
	if cfg, err = env.Start(); err != nil {
		return err
	}
	cfg.QPS = -1
	fmt.Fprintf(os.Stderr, "control plane up in %v\n", time.Since(t0).Round(time.Millisecond))
	dir, err := os.MkdirTemp("", "kubeloop-bench-sharding-")
	if err != nil {
		return err
	}
	cfgPath = filepath.Join(dir, "conn.json")
	js, _ := json.Marshal(connInfo{Host: cfg.Host, CAData: cfg.CAData, CertData: cfg.CertData, KeyData: cfg.KeyData})
	return os.WriteFile(cfgPath, js, 0o600)
}
