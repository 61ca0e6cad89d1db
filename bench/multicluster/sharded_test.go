package multicluster_bench

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/bench/fakeapiserver"
	"github.com/kubeloop/kubeloop/envtest"
)

var (
	shardedClusters = flag.Int("sharded-clusters", 300, "clusters of BenchmarkShardedClusters")
	shardedLease    = flag.Duration("sharded-lease", 4*time.Second, "BenchmarkShardedClusters: the ring's LeaseDuration (RenewDeadline 2/3 of it, RetryPeriod 2/15)")
	shardedRequeue  = flag.Duration("sharded-requeue", 500*time.Millisecond, "BenchmarkShardedClusters: each reconcile requeues its cluster's ConfigMap after this")
)

// BenchmarkShardedClusters: 3 replicas, each a child process (this test
// binary as TestShardedReplicaProcess: a manager with Options.Sharding and
// Options.Clusters), share -sharded-clusters clusters of the fake fleet
// (a child process, bench/cmd/fakefleet; one ConfigMap each, reconciled
// again every -sharded-requeue) with their shard Leases on a real control
// plane (envtest). This process is the witness: it reads every reconcile's
// start and end and each replica's held clusters from the replicas'
// stdout. It reports:
//   - largest/mean: the largest share of 3 over the mean, once the
//     replicas hold every cluster between them (target <= 1.1);
//   - moved-frac: the clusters that changed replica when a fourth joined
//     (target <= 0.30), and join-s: from its start until the four hold
//     every cluster between them;
//   - failover-s: from a SIGKILL of the replica with the most clusters
//     until a survivor reconciled each of them (target <= LeaseDuration +
//     5 s);
//   - overlaps: pairs of reconciles of one cluster by two replicas whose
//     intervals overlap (target 0; a killed replica's unfinished reconcile
//     ends at the kill).
func BenchmarkShardedClusters(b *testing.B) {
	for range b.N {
		runSharded(b)
	}
}

func runSharded(b *testing.B) {
	ctx := context.Background()
	env := &envtest.Environment{}
	_, err := env.Start()
	require.NoError(b, err)
	defer func() { require.NoError(b, env.Stop()) }()
	dir := b.TempDir()
	kubeconfig := filepath.Join(dir, "hub.kubeconfig")
	require.NoError(b, os.WriteFile(kubeconfig, env.KubeConfig, 0o600))
	fleet, err := fakeapiserver.LaunchFleet(ctx, fakeapiserver.FleetConfig{ConfigMaps: 1})
	require.NoError(b, err)
	defer fleet.Stop()

	clusters := make([]string, *shardedClusters)
	for i := range clusters {
		clusters[i] = fmt.Sprintf("c%03d", i)
	}
	w := &shardWitness{held: map[string][]string{}, open: map[string]map[string]time.Time{}}
	cfg := replicaConfig{Ring: fmt.Sprintf("bench-%d", time.Now().UnixNano()%1_000_000), Kubeconfig: kubeconfig,
		Fleet: fleet.URL, Clusters: clusters, Lease: *shardedLease, Requeue: *shardedRequeue}
	var procs []*replicaProc
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	start := func(name string) *replicaProc {
		c := cfg
		c.Name = name
		p := startReplicaProc(b, c, w)
		procs = append(procs, p)
		return p
	}
	names := []string{"r1", "r2", "r3"}
	t0 := time.Now()
	for _, n := range names {
		start(n)
	}
	w.waitPartition(b, names, clusters, 3*time.Minute)
	b.Logf("3 replicas hold every cluster %s after they started", time.Since(t0).Round(time.Millisecond))
	three := w.holders()
	largest := 0
	for _, n := range names {
		largest = max(largest, len(w.heldBy(n)))
	}
	mean := float64(len(clusters)) / 3
	b.ReportMetric(float64(largest)/mean, "largest/mean")
	b.Logf("shares of 3: %d %d %d (mean %.1f)", len(w.heldBy("r1")), len(w.heldBy("r2")), len(w.heldBy("r3")), mean)

	t1 := time.Now()
	start("r4")
	names = append(names, "r4")
	w.waitPartition(b, names, clusters, 3*time.Minute)
	join := time.Since(t1)
	four := w.holders()
	moved := 0
	for _, c := range clusters {
		if three[c] != four[c] {
			moved++
		}
	}
	b.ReportMetric(float64(moved)/float64(len(clusters)), "moved-frac")
	b.ReportMetric(join.Seconds(), "join-s")
	b.Logf("3->4: %d of %d clusters moved; the four hold every cluster %s after r4 started", moved, len(clusters), join.Round(time.Millisecond))

	victim := names[0]
	for _, n := range names {
		if len(w.heldBy(n)) > len(w.heldBy(victim)) {
			victim = n
		}
	}
	lost := w.heldBy(victim)
	var vp *replicaProc
	for _, p := range procs {
		if p.name == victim {
			vp = p
		}
	}
	killed := vp.kill(w)
	survivors := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == victim })
	failover := w.waitTakenOver(b, lost, victim, killed, 3*time.Minute)
	b.ReportMetric(failover.Seconds(), "failover-s")
	b.Logf("kill -9 of %s (%d clusters): every one reconciled by a survivor %s later (LeaseDuration %s)",
		victim, len(lost), failover.Round(time.Millisecond), cfg.Lease)
	w.waitPartition(b, survivors, clusters, 3*time.Minute)

	for _, p := range procs {
		p.stop()
	}
	ov := w.overlaps()
	b.ReportMetric(float64(len(ov)), "overlaps")
	b.ReportMetric(float64(w.reconciles()), "reconciles")
	for i, o := range ov {
		if i == 10 {
			break
		}
		b.Log("overlap:", o)
	}
}

// replicaProc is one replica child process.
type replicaProc struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}
	once  sync.Once
}

func startReplicaProc(b *testing.B, cfg replicaConfig, w *shardWitness) *replicaProc {
	b.Helper()
	raw, err := json.Marshal(cfg)
	require.NoError(b, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestShardedReplicaProcess$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), replicaEnv+"="+string(raw), "GOMAXPROCS=2")
	cmd.Stderr = io.Discard
	stdin, err := cmd.StdinPipe()
	require.NoError(b, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	p := &replicaProc{name: cfg.Name, cmd: cmd, stdin: stdin, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		for sc.Scan() {
			var ev event
			if ev.parse(sc.Text()) {
				w.record(ev)
			}
		}
		_ = cmd.Wait()
	}()
	return p
}

// stop closes the replica's stdin (it stops as a manager does) and waits,
// killing it after 30 s.
func (p *replicaProc) stop() {
	p.once.Do(func() { _ = p.stdin.Close() })
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// kill sends SIGKILL and returns when; the witness ends the replica's
// unfinished reconciles then.
func (p *replicaProc) kill(w *shardWitness) time.Time {
	at := time.Now()
	_ = p.cmd.Process.Kill()
	<-p.done
	w.killed(p.name, at)
	p.once.Do(func() {})
	return at
}

// shardWitness is the process outside the replicas that records what
// they report.
type shardWitness struct {
	mu   sync.Mutex
	held map[string][]string             // replica -> clusters held, as last reported
	open map[string]map[string]time.Time // cluster -> replica -> start of the reconcile running
	runs []shardRun
}

type shardRun struct {
	cluster, replica string
	start, end       time.Time
}

func (w *shardWitness) record(ev event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev.kind {
	case 'H':
		w.held[ev.replica] = ev.held
	case 'S':
		if w.open[ev.cluster] == nil {
			w.open[ev.cluster] = map[string]time.Time{}
		}
		w.open[ev.cluster][ev.replica] = ev.at
	case 'E':
		if s, ok := w.open[ev.cluster][ev.replica]; ok {
			w.runs = append(w.runs, shardRun{ev.cluster, ev.replica, s, ev.at})
			delete(w.open[ev.cluster], ev.replica)
		}
	}
}

// killed ends replica's unfinished reconciles at at and forgets what it
// held.
func (w *shardWitness) killed(replica string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c, m := range w.open {
		if s, ok := m[replica]; ok {
			w.runs = append(w.runs, shardRun{c, replica, s, at})
			delete(m, replica)
		}
	}
	delete(w.held, replica)
}

func (w *shardWitness) heldBy(replica string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.held[replica])
}

// holders returns each cluster's replica, as reported last.
func (w *shardWitness) holders() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]string{}
	for r, cs := range w.held {
		for _, c := range cs {
			out[c] = r
		}
	}
	return out
}

// waitPartition waits until replicas report holding every cluster, each
// on exactly one of them, and nothing held by another.
func (w *shardWitness) waitPartition(b *testing.B, replicas, clusters []string, limit time.Duration) {
	b.Helper()
	deadline := time.Now().Add(limit)
	for {
		w.mu.Lock()
		seen := map[string]int{}
		total := 0
		for r, cs := range w.held {
			for _, c := range cs {
				seen[c]++
				total++
			}
			if !slices.Contains(replicas, r) && len(cs) > 0 {
				total = -1
			}
		}
		w.mu.Unlock()
		ok := total == len(clusters) && len(seen) == len(clusters)
		for _, r := range replicas {
			ok = ok && len(w.heldBy(r)) > 0
		}
		if ok {
			return
		}
		require.True(b, time.Now().Before(deadline), "replicas %v hold the %d clusters between them within %s (%d held, %d distinct)",
			replicas, len(clusters), limit, total, len(seen))
		time.Sleep(10 * time.Millisecond)
	}
}

// waitTakenOver waits until every cluster of lost has a reconcile by
// another replica than victim that started after killed; it returns the
// longest such wait.
func (w *shardWitness) waitTakenOver(b *testing.B, lost []string, victim string, killed time.Time, limit time.Duration) time.Duration {
	b.Helper()
	deadline := time.Now().Add(limit)
	for {
		w.mu.Lock()
		var worst time.Duration
		missing := 0
		for _, c := range lost {
			var first time.Time
			for _, r := range w.runs {
				if r.cluster == c && r.replica != victim && r.start.After(killed) && (first.IsZero() || r.start.Before(first)) {
					first = r.start
				}
			}
			for r, s := range w.open[c] {
				if r != victim && s.After(killed) && (first.IsZero() || s.Before(first)) {
					first = s
				}
			}
			if first.IsZero() {
				missing++
				continue
			}
			worst = max(worst, first.Sub(killed))
		}
		w.mu.Unlock()
		if missing == 0 {
			return worst
		}
		require.True(b, time.Now().Before(deadline), "%d of %d clusters of %s reconciled by a survivor within %s", missing, len(lost), victim, limit)
		time.Sleep(10 * time.Millisecond)
	}
}

// overlaps returns the pairs of reconciles of one cluster by two replicas
// whose intervals overlap.
func (w *shardWitness) overlaps() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	by := map[string][]shardRun{}
	for _, r := range w.runs {
		by[r.cluster] = append(by[r.cluster], r)
	}
	var out []string
	for c, runs := range by {
		sort.Slice(runs, func(i, j int) bool { return runs[i].start.Before(runs[j].start) })
		for i := range runs {
			for j := i + 1; j < len(runs) && runs[j].start.Before(runs[i].end); j++ {
				if runs[j].replica != runs[i].replica {
					out = append(out, fmt.Sprintf("cluster %s: %s %s..%s and %s %s..%s", c,
						runs[i].replica, runs[i].start.Format(time.StampMicro), runs[i].end.Format(time.StampMicro),
						runs[j].replica, runs[j].start.Format(time.StampMicro), runs[j].end.Format(time.StampMicro)))
				}
			}
		}
	}
	return out
}

func (w *shardWitness) reconciles() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.runs)
}
