package multicluster_bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding"
)

// replicaEnv names the environment variable that makes this test binary
// one replica of BenchmarkShardedClusters (a child process): its value is
// a replicaConfig in JSON.
const replicaEnv = "KUBELOOP_SHARDED_REPLICA"

// replicaConfig is what a replica process runs.
type replicaConfig struct {
	Name       string        // the shard
	Ring       string        // the ring
	Kubeconfig string        // the hub's (a real control plane: the Leases)
	Fleet      string        // the fake fleet's base URL; cluster c is at <Fleet>/clusters/<c>
	Clusters   []string      // the clusters every replica discovers
	Lease      time.Duration // LeaseDuration; RenewDeadline and RetryPeriod in the defaults' proportions
	Requeue    time.Duration // each reconcile requeues its ConfigMap after this: a steady load
}

// timings returns the ring's LeaseDuration, RenewDeadline and RetryPeriod.
func (c replicaConfig) timings() (time.Duration, time.Duration, time.Duration) {
	return c.Lease, c.Lease * 2 / 3, c.Lease * 2 / 15
}

// TestShardedReplicaProcess is a replica of BenchmarkShardedClusters when
// run as its child (replicaEnv set): a manager with Options.Sharding and
// Options.Clusters, and one builder controller For ConfigMaps OnFleet,
// that reports on stdout every reconcile ("S|E <cluster> <replica>
// <unix ns>") and the clusters it holds whenever they change ("H
// <replica> <unix ns> <c1,c2,...>"), until its stdin closes. Run as a
// plain test it checks the report lines' round trip.
func TestShardedReplicaProcess(t *testing.T) {
	raw := os.Getenv(replicaEnv)
	if raw == "" {
		var ev event
		require.True(t, ev.parse(fmt.Sprintf("S c001 r1 %d", int64(42))))
		assert.Equal(t, event{kind: 'S', cluster: "c001", replica: "r1", at: time.Unix(0, 42)}, ev)
		require.True(t, ev.parse("H r2 7 c001,c002"))
		assert.Equal(t, []string{"c001", "c002"}, ev.held)
		require.True(t, ev.parse("H r2 7 "))
		assert.Empty(t, ev.held)
		assert.False(t, ev.parse("PASS"))
		return
	}
	var cfg replicaConfig
	require.NoError(t, json.Unmarshal([]byte(raw), &cfg))
	require.NoError(t, runReplica(cfg, os.Stdin, os.Stdout))
}

// runReplica runs the replica of cfg until in closes.
func runReplica(cfg replicaConfig, in io.Reader, out io.Writer) error {
	data, err := os.ReadFile(cfg.Kubeconfig)
	if err != nil {
		return err
	}
	hub, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	emit := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(out, format+"\n", args...) // unbuffered: a killed replica loses nothing it reported
		mu.Unlock()
	}
	provider := multicluster.ProviderFunc(func(ctx context.Context, s multicluster.Sink) error {
		for _, c := range cfg.Clusters {
			if err := s.Engage(ctx, c, &rest.Config{Host: cfg.Fleet + "/clusters/" + c, QPS: -1}); err != nil {
				return err
			}
		}
		<-ctx.Done()
		return nil
	})
	ld, rd, rp := cfg.timings()
	mgr, err := manager.New(hub, manager.Options{Logger: quiet, Clusters: provider,
		Sharding: sharding.Options{Ring: cfg.Ring, Shard: cfg.Name, Namespace: "default",
			LeaseDuration: ld, RenewDeadline: rd, RetryPeriod: rp},
		Metrics: manager.MetricsOptions{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		return err
	}
	err = builder.ControllerManagedBy(mgr).Named("sharded").For(&corev1.ConfigMap{}, builder.OnFleet).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			emit("S %s %s %d", req.Cluster, cfg.Name, time.Now().UnixNano())
			defer func() { emit("E %s %s %d", req.Cluster, cfg.Name, time.Now().UnixNano()) }()
			cl, err := mgr.GetCluster(ctx, req.Cluster)
			if err != nil {
				return reconcile.Result{}, nil
			}
			var cm corev1.ConfigMap
			if err := cl.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
				return reconcile.Result{}, nil
			}
			time.Sleep(time.Millisecond)
			return reconcile.Result{RequeueAfter: cfg.Requeue}, nil // a steady load: an overlap would show
		}))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, bufio.NewReader(in))
		cancel()
	}()
	go func() {
		var last []string
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			held := mgr.GetShardedFleet().Held()
			if !slices.Equal(held, last) {
				emit("H %s %d %s", cfg.Name, time.Now().UnixNano(), strings.Join(held, ","))
				last = held
			}
		}
	}()
	return mgr.Start(ctx)
}

// event is one line a replica reports.
type event struct {
	kind             byte // 'S', 'E' or 'H'
	cluster, replica string
	at               time.Time
	held             []string
}

// parse reads line into e; it reports whether line is an event.
func (e *event) parse(line string) bool {
	f := strings.SplitN(line, " ", 4)
	var ns int64
	switch {
	case len(f) == 4 && f[0] == "S" || len(f) == 4 && f[0] == "E":
		if _, err := fmt.Sscan(f[3], &ns); err != nil {
			return false
		}
		*e = event{kind: f[0][0], cluster: f[1], replica: f[2], at: time.Unix(0, ns)}
	case len(f) == 4 && f[0] == "H":
		if _, err := fmt.Sscan(f[2], &ns); err != nil {
			return false
		}
		*e = event{kind: 'H', replica: f[1], at: time.Unix(0, ns)}
		if f[3] != "" {
			e.held = strings.Split(f[3], ",")
		}
	default:
		return false
	}
	return true
}
