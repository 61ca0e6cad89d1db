package sharding_bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding"
)

// replicaCounts are the ring sizes compared.
var replicaCounts = []int{1, 2, 4}

// benchRings are the rings of the throughput and heap benchmarks: tp<N>
// over N shards; every ConfigMap carries each ring's label.
func benchRings() []ring {
	var out []ring
	for _, n := range replicaCounts {
		out = append(out, ring{name: fmt.Sprintf("tp%d", n), shards: shardNames(n)})
	}
	return out
}

var prepareOnce sync.Once

// prepare creates the ConfigMaps and parks the sharder of every ring
// (including "empty", whose shard is assigned nothing).
func prepare(b *testing.B) {
	b.Helper()
	var err error
	prepareOnce.Do(func() {
		ctx := context.Background()
		if err = ensureConfigMaps(ctx, *nObjects, benchRings()); err != nil {
			return
		}
		for _, r := range append(benchRings(), ring{name: "empty"}) {
			if err = parkSharder(ctx, r.name); err != nil {
				return
			}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
}

func discard() logr.Logger { return logr.FromSlogHandler(slog.NewTextHandler(io.Discard, nil)) }

// shardOptions returns the manager options of shard in ringName: its cache
// holds ConfigMaps of objectsNS with this shard's label only.
func shardOptions(ringName, shard string) manager.Options {
	return manager.Options{
		Logger: discard(),
		Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{objectsNS: {}}},
		Sharding: sharding.Options{
			Ring:      ringName,
			Objects:   []client.Object{&corev1.ConfigMap{}},
			Namespace: leaseNS,
			Shard:     shard,
			// Objects are assigned already and the sharder is parked.
			Webhook: sharding.WebhookOptions{Disabled: true},
		},
	}
}

// BenchmarkShardedThroughput: N sharded managers in this process, one
// worker each, a reconciler that reads the ConfigMap from the cache and
// waits -work; the time from starting the managers until every one of the
// -objects ConfigMaps has been reconciled once, by the shard its label
// names. Run with -benchtime 1x.
func BenchmarkShardedThroughput(b *testing.B) {
	prepare(b)
	// One untimed run first, so that the first measured ring size does
	// not pay for this process's and the API server's warm-up.
	if _, err := throughputRun("tp4", 4); err != nil {
		b.Fatal(err)
	}
	for _, n := range replicaCounts {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			var total time.Duration
			runs := 0
			for b.Loop() {
				d, err := throughputRun(fmt.Sprintf("tp%d", n), n)
				if err != nil {
					b.Fatal(err)
				}
				total += d
				runs++
			}
			b.ReportMetric(total.Seconds()/float64(runs), "s/all-reconciled")
			b.ReportMetric(float64(*nObjects*runs)/total.Seconds(), "objects/s")
		})
	}
}

// tally records which shard reconciled each object, and closes done once
// every one of want objects has been reconciled.
type tally struct {
	mu    sync.Mutex
	by    map[string]string
	want  int
	wrong []string
	done  chan struct{}
}

func (t *tally) reconciler(c client.Client, shardKey, shard string) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, req.NamespacedName, cm); err != nil {
			if apierrors.IsNotFound(err) {
				return reconcile.Result{}, nil
			}
			return reconcile.Result{}, err
		}
		if *work > 0 {
			time.Sleep(*work)
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if cm.Labels[shardKey] != shard {
			t.wrong = append(t.wrong, fmt.Sprintf("%s (of %s) by %s", req.Name, cm.Labels[shardKey], shard))
		}
		if _, seen := t.by[req.Name]; !seen {
			t.by[req.Name] = shard
			if len(t.by) == t.want {
				close(t.done)
			}
		}
		return reconcile.Result{}, nil
	})
}

func throughputRun(ringName string, n int) (time.Duration, error) {
	t := &tally{by: map[string]string{}, want: *nObjects, done: make(chan struct{})}
	var mgrs []*manager.Manager
	for _, shard := range shardNames(n) {
		mgr, err := manager.New(cfg, shardOptions(ringName, shard))
		if err != nil {
			return 0, err
		}
		r := t.reconciler(mgr.GetClient(), sharding.ShardLabel(ringName), shard)
		if err := builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
			WithOptions(controller.Options{MaxConcurrentReconciles: 1}).Complete(r); err != nil {
			return 0, err
		}
		mgrs = append(mgrs, mgr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, n)
	start := time.Now()
	for _, mgr := range mgrs {
		go func() { errc <- mgr.Start(ctx) }()
	}
	var took time.Duration
	var err error
	select {
	case <-t.done:
		took = time.Since(start)
	case <-time.After(5 * time.Minute):
		t.mu.Lock()
		err = fmt.Errorf("%d of %d objects reconciled after 5 minutes", len(t.by), t.want)
		t.mu.Unlock()
	}
	cancel()
	for range mgrs {
		err = errors.Join(err, <-errc)
	}
	if len(t.wrong) > 0 {
		err = errors.Join(err, fmt.Errorf("%d objects reconciled by a shard they are not assigned to, e.g. %s", len(t.wrong), t.wrong[0]))
	}
	return took, err
}
