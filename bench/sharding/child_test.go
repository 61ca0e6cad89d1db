package sharding_bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/sharding"
)

// childEnv carries a childSpec as JSON: the test binary then runs as one
// measured process instead of the benchmarks.
const childEnv = "KUBELOOP_SHARDING_BENCH_CHILD"

// childSpec says what a child process measures.
type childSpec struct {
	Conn string // path of connInfo
	// Mode: "replica" (a sharded manager that syncs and reconciles its
	// share), "sweep" (the sharder's Ring.Sweep, Sweeps times), "list"
	// (one LIST of every ConfigMap's metadata held in memory; ListRV0:
	// resourceVersion "0", else a page of 500).
	Mode    string
	Ring    string
	Shard   string
	Sweeps  int
	ListRV0 bool
}

// childResult is what a child reports on stdout, as JSON.
type childResult struct {
	HeapAlloc uint64 // after two forced GCs, at the end (replica) or before the sweeps (sweep, list)
	PeakLive  uint64 // sweep: the largest HeapAlloc right after a forced GC during the sweeps; list: with the list held
	// MedianLive and Samples: sweep: the median of those HeapAllocs, and
	// their number.
	MedianLive uint64
	Samples    int
	Cached     int // replica: objects in its cache
	Listed     int // sweep: objects per sweep; list: items in the response
	Seconds    float64
}

// runChild runs the measurement the spec in childEnv names and writes the
// result; it returns the exit code.
func runChild() int {
	var spec childSpec
	if err := json.Unmarshal([]byte(os.Getenv(childEnv)), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	raw, err := os.ReadFile(spec.Conn)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	var ci connInfo
	if err := json.Unmarshal(raw, &ci); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	cfg = ci.config()
	var res childResult
	switch spec.Mode {
	case "replica":
		res, err = childReplica(spec)
	case "sweep":
		res, err = childSweep(spec)
	case "list":
		res, err = childList(spec)
	default:
		err = fmt.Errorf("unknown mode %q", spec.Mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
	return 0
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// childReplica runs one sharded manager with a controller For
// ConfigMaps, waits until its cache has synced and every cached object has
// been reconciled, and measures the live heap.
func childReplica(spec childSpec) (childResult, error) {
	mgr, err := manager.New(cfg, shardOptions(spec.Ring, spec.Shard))
	if err != nil {
		return childResult{}, err
	}
	*work = 0 // no waiting: the heap is measured once every object was reconciled
	t := &tally{by: map[string]string{}, want: -1, done: make(chan struct{})}
	r := t.reconciler(mgr.GetClient(), sharding.ShardLabel(spec.Ring), spec.Shard)
	if err := builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).Complete(r); err != nil {
		return childResult{}, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	start := time.Now()
	go func() { errc <- mgr.Start(ctx) }()
	defer func() { cancel(); <-errc }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return childResult{}, errors.New("cache did not sync")
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var l corev1.ConfigMapList
		if err := mgr.GetCache().List(ctx, &l); err != nil {
			return childResult{}, err
		}
		t.mu.Lock()
		n := len(t.by)
		t.mu.Unlock()
		if n == len(l.Items) {
			break
		}
		if time.Now().After(deadline) {
			return childResult{}, fmt.Errorf("%d of %d cached objects reconciled after 3 minutes", n, len(l.Items))
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(start)
	var l corev1.ConfigMapList
	if err := mgr.GetCache().List(ctx, &l); err != nil {
		return childResult{}, err
	}
	cached := len(l.Items)
	l.Items = nil
	if len(t.wrong) > 0 {
		return childResult{}, fmt.Errorf("%d objects of other shards reconciled, e.g. %s", len(t.wrong), t.wrong[0])
	}
	return childResult{HeapAlloc: liveHeap(), Cached: cached, Seconds: took.Seconds()}, nil
}

// childSweep builds the ring's sharder side (sharding.New with a live
// client, as the manager does; its shard Lease is held by a placeholder so
// the view has one live shard, and the Ring is not started: no sweep runs
// but ours) and sweeps spec.Sweeps times while a sampler forces a GC
// every 10 ms and keeps the largest live heap.
func childSweep(spec childSpec) (childResult, error) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return childResult{}, err
	}
	ring, err := sharding.New(c, sharding.Options{
		Ring: spec.Ring, Objects: []client.Object{&corev1.ConfigMap{}}, Namespace: leaseNS, Shard: spec.Shard,
		Webhook: sharding.WebhookOptions{Disabled: true}, Metrics: prometheus.NewRegistry(),
	})
	if err != nil {
		return childResult{}, err
	}
	ctx := context.Background()
	if _, err := ring.Sweep(ctx); err != nil { // warm up: connections, mapper
		return childResult{}, err
	}
	res := childResult{HeapAlloc: liveHeap()}
	stop := make(chan struct{})
	var samples []uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			samples = append(samples, ms.HeapAlloc)
		}
	})
	// Sweep for at least spec.Sweeps sweeps and sweepTime, so that small
	// and large sweeps are sampled about as often: the largest of more
	// samples is larger by chance alone.
	start := time.Now()
	sweeps := 0
	var err2 error
	for sweeps < spec.Sweeps || time.Since(start) < sweepTime {
		sr, err := ring.Sweep(ctx)
		if err != nil {
			err2 = err
			break
		}
		res.Listed = sr.Objects
		if sr.Assigned+sr.Reassigned+sr.Drains > 0 {
			err2 = fmt.Errorf("the sweep moved objects (%+v): they should all be assigned", sr)
			break
		}
		sweeps++
	}
	res.Seconds = time.Since(start).Seconds() / float64(max(sweeps, 1))
	close(stop)
	wg.Wait()
	if err2 != nil {
		return childResult{}, err2
	}
	slices.Sort(samples)
	if len(samples) > 0 {
		res.PeakLive = samples[len(samples)-1]
		res.MedianLive = samples[len(samples)/2]
	}
	res.Samples = len(samples)
	return res, nil
}

// sweepTime is the least time childSweep sweeps for.
const sweepTime = 3 * time.Second

// childList holds one LIST response of ConfigMap metadata and measures
// the live heap with it.
func childList(spec childSpec) (childResult, error) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return childResult{}, err
	}
	ctx := context.Background()
	list := func() (*metav1.PartialObjectMetadataList, error) {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
		opts := []client.ListOption{client.Limit(sharding.DefaultSweepPageSize)}
		if spec.ListRV0 {
			opts = append(opts, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "0"}})
		}
		return l, c.List(ctx, l, opts...)
	}
	if _, err := list(); err != nil { // warm up
		return childResult{}, err
	}
	res := childResult{HeapAlloc: liveHeap()}
	l, err := list()
	if err != nil {
		return childResult{}, err
	}
	res.PeakLive = liveHeap()
	res.Listed = len(l.Items)
	runtime.KeepAlive(l)
	return res, nil
}

// startChild runs the test binary as a child with spec; wait returns its
// result.
func startChild(spec childSpec) (wait func() (childResult, error), err error) {
	spec.Conn = cfgPath
	js, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(js))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() (childResult, error) {
		var res childResult
		sc := bufio.NewScanner(out)
		var decodeErr error = errors.New("no result")
		for sc.Scan() {
			if err := json.Unmarshal(sc.Bytes(), &res); err == nil {
				decodeErr = nil
			}
		}
		if err := cmd.Wait(); err != nil {
			return res, fmt.Errorf("child %s %s: %w", spec.Mode, spec.Shard, err)
		}
		return res, decodeErr
	}, nil
}
