package sharding_bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding"
)

// Timings of both modes in BenchmarkShardingModes: the same Lease
// timings, and a drain check as often as the server-side mode's rounds.
const (
	modeLease = 6 * time.Second
	modeRenew = 4 * time.Second
	modeRetry = 500 * time.Millisecond
)

// BenchmarkShardingModes compares sharding's Labels mode with its
// ServerSide mode on the real control plane, each over its own -objects
// ConfigMaps (unassigned at first), 3 then 4 sharded managers in this
// process (one worker each, no reconcile work):
//   - start: from starting 3 managers until every object is cached by
//     exactly one of them, by the shard its mode gives it, and was
//     reconciled by that shard (Labels mode: the sharder's sweep labels
//     every object first); s and the API server's CPU seconds
//     (utime+stime of kube-apiserver, /proc/<pid>/stat);
//   - move: the same after a fourth manager starts (scale 3 -> 4): every
//     moved object has left its old shard's cache and was reconciled by
//     its new shard;
//   - idle: the API server's CPU over 10 s of the 4 shards doing nothing;
//   - heap: the live heap (after two GCs) of the process with the 4
//     managers minus the one before they started, divided by 4: the mean
//     heap per replica, in process.
func BenchmarkShardingModes(b *testing.B) {
	pid, err := apiserverPID()
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []sharding.Mode{sharding.Labels, sharding.ServerSide} {
		b.Run("mode="+mode.String(), func(b *testing.B) {
			for b.Loop() {
				res, err := modesRun(b, mode, pid)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(res.start.Seconds(), "start-s")
				b.ReportMetric(res.startCPU, "start-apiserver-cpu-s")
				b.ReportMetric(res.move.Seconds(), "move-s")
				b.ReportMetric(res.moveCPU, "move-apiserver-cpu-s")
				b.ReportMetric(res.idleCPU/10, "idle-apiserver-cpu-s/s")
				b.ReportMetric(float64(res.heap), "heap-B/replica")
			}
		})
	}
}

type modesResult struct {
	start, move                time.Duration
	startCPU, moveCPU, idleCPU float64
	heap                       uint64
}

var modesRunN int

func modesRun(b *testing.B, mode sharding.Mode, pid int) (modesResult, error) {
	ctx := context.Background()
	modesRunN++
	ringName := fmt.Sprintf("m%d-%s", modesRunN, mode)
	ns := ringName
	if err := createUnassigned(ctx, ns, *nObjects); err != nil {
		return modesResult{}, err
	}
	defer func() {
		_ = liveClient().Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}()
	rec := &lastBy{by: map[string]string{}}
	runtime.GC()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	var res modesResult
	var reps []*modeReplica
	defer func() {
		for _, r := range reps {
			r.stop()
		}
	}()
	cpu0, err := cpuSeconds(pid)
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	for _, s := range shardNames(3) {
		r, err := startModeReplica(mode, ringName, ns, s, rec)
		if err != nil {
			return res, err
		}
		reps = append(reps, r)
	}
	if err := awaitSplit(mode, ringName, ns, reps, rec); err != nil {
		return res, fmt.Errorf("3 shards: %w", err)
	}
	res.start = time.Since(t0)
	cpu1, _ := cpuSeconds(pid)
	res.startCPU = cpu1 - cpu0

	t1 := time.Now()
	r, err := startModeReplica(mode, ringName, ns, "s3", rec)
	if err != nil {
		return res, err
	}
	reps = append(reps, r)
	if err := awaitSplit(mode, ringName, ns, reps, rec); err != nil {
		return res, fmt.Errorf("4 shards: %w", err)
	}
	res.move = time.Since(t1)
	cpu2, _ := cpuSeconds(pid)
	res.moveCPU = cpu2 - cpu1

	time.Sleep(10 * time.Second)
	cpu3, _ := cpuSeconds(pid)
	res.idleCPU = cpu3 - cpu2

	runtime.GC()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if after.HeapAlloc > before.HeapAlloc {
		res.heap = (after.HeapAlloc - before.HeapAlloc) / 4
	}
	return res, nil
}

// lastBy records the shard of each object's last reconcile.
type lastBy struct {
	mu sync.Mutex
	by map[string]string
}

func (l *lastBy) reconciler(shard string) reconcile.Reconciler {
	return reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		l.mu.Lock()
		l.by[req.Name] = shard
		l.mu.Unlock()
		return reconcile.Result{}, nil
	})
}

func (l *lastBy) of(name string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.by[name]
}

type modeReplica struct {
	shard string
	mgr   *manager.Manager
	stop  func()
}

func startModeReplica(mode sharding.Mode, ringName, ns, shard string, rec *lastBy) (*modeReplica, error) {
	so := sharding.Options{
		Ring: ringName, Objects: []client.Object{&corev1.ConfigMap{}}, Namespace: leaseNS, Shard: shard, Mode: mode,
		LeaseDuration: modeLease, RenewDeadline: modeRenew, RetryPeriod: modeRetry,
		Webhook: sharding.WebhookOptions{Disabled: true},
	}
	if mode == sharding.Labels {
		so.DrainCheckInterval = modeRetry
	}
	mgr, err := manager.New(cfg, manager.Options{
		Logger:   discard(),
		Cache:    cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Sharding: so,
	})
	if err != nil {
		return nil, err
	}
	if err := builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).Complete(rec.reconciler(shard)); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(ctx) }()
	return &modeReplica{shard: shard, mgr: mgr, stop: func() { cancel(); <-done }}, nil
}

// awaitSplit waits until every object of ns is cached by exactly one
// replica, the shard its mode assigns it to, which reconciled it last.
// Labels mode: the object's label names the replica, it is not draining,
// and the hash ring of the replicas gives it to that shard. ServerSide
// mode: each replica admits its share of the 127 segments (Maglev gives
// each at least floor(127/n)), all of them between them.
func awaitSplit(mode sharding.Mode, ringName, ns string, reps []*modeReplica, rec *lastBy) error {
	var names []string
	for _, r := range reps {
		names = append(names, r.shard)
	}
	hr := sharding.NewHashRing(names, 0)
	deadline := time.Now().Add(5 * time.Minute)
	var why string
	for time.Now().Before(deadline) {
		why = splitProblem(mode, ringName, ns, reps, rec, hr)
		if why == "" {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New(why)
}

func splitProblem(mode sharding.Mode, ringName, ns string, reps []*modeReplica, rec *lastBy, hr *sharding.HashRing) string {
	ctx := context.Background()
	total, segments := 0, 0
	for _, r := range reps {
		var l corev1.ConfigMapList
		if err := r.mgr.GetCache().List(ctx, &l, client.InNamespace(ns)); err != nil {
			return fmt.Sprintf("%s: %v", r.shard, err)
		}
		for i := range l.Items {
			cm := &l.Items[i]
			if last := rec.of(cm.Name); last != r.shard {
				return fmt.Sprintf("%s cached by %s, last reconciled by %q", cm.Name, r.shard, last)
			}
			if mode == sharding.Labels {
				if cm.Labels[sharding.DrainLabel(ringName)] != "" {
					return cm.Name + " draining"
				}
				if want := hr.Shard(sharding.Key(cmGK, cm)); want != r.shard {
					return fmt.Sprintf("%s on %s, not yet on %s", cm.Name, r.shard, want)
				}
			}
		}
		total += len(l.Items)
		if mode == sharding.ServerSide {
			n := countSegments(r.mgr.Sharding().Ranges())
			if n < 127/len(reps) {
				return fmt.Sprintf("%s admits %d segments, not yet its share", r.shard, n)
			}
			segments += n
		}
	}
	if total != *nObjects {
		return fmt.Sprintf("%d of %d objects cached", total, *nObjects)
	}
	if mode == sharding.ServerSide && segments != 127 {
		return fmt.Sprintf("%d of 127 segments admitted", segments)
	}
	return ""
}

// countSegments counts the segments of Ring.Ranges' runs ("0-41,84-126").
func countSegments(runs string) int {
	if runs == "" || runs == "none" {
		return 0
	}
	n := 0
	for part := range strings.SplitSeq(runs, ",") {
		from, to, ok := strings.Cut(part, "-")
		if !ok {
			n++
			continue
		}
		a, _ := strconv.Atoi(from)
		z, _ := strconv.Atoi(to)
		n += z - a + 1
	}
	return n
}

// createUnassigned creates n ConfigMaps without labels in a new namespace.
func createUnassigned(ctx context.Context, ns string, n int) error {
	c := liveClient()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	data := strings.Repeat("x", *payload)
	const writers = 16
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := w; i < n; i += writers {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%05d", i)},
					Data: map[string]string{"payload": data}}
				if err := c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// apiserverPID finds the kube-apiserver of cfg by its --secure-port.
func apiserverPID() (int, error) {
	_, port, ok := strings.Cut(strings.TrimPrefix(cfg.Host, "https://"), ":")
	if !ok {
		return 0, fmt.Errorf("no port in %s", cfg.Host)
	}
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return 0, err
	}
	for _, d := range dirs {
		data, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		args := strings.Split(string(data), "\x00")
		if len(args) == 0 || !strings.HasSuffix(args[0], "kube-apiserver") {
			continue
		}
		for _, a := range args {
			if a == "--secure-port="+port {
				return strconv.Atoi(filepath.Base(filepath.Dir(d)))
			}
		}
	}
	return 0, fmt.Errorf("no kube-apiserver with --secure-port=%s", port)
}

// cpuSeconds returns the user and system CPU time of pid (clock ticks of
// 1/100 s, Linux's USER_HZ).
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command (which may hold spaces) in parentheses.
	_, rest, ok := strings.Cut(string(data), ") ")
	if !ok {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return float64(utime+stime) / 100, nil
}
