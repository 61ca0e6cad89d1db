package sharded_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/examples/sharded"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/sharding"
)

const (
	objects  = 3000
	testNS   = "sharded"
	leaseDur = 4 * time.Second
)

var (
	c                    client.Client
	dir, bin, kubeconfig string
	certDir, caFile      string
	shardKey             = sharding.ShardLabel(sharded.Ring)
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{
		Env: &envtest.Environment{},
		Setup: func(cfg *rest.Config) error {
			var err error
			if c, err = client.New(cfg, client.Options{}); err != nil {
				return err
			}
			if dir, err = os.MkdirTemp("", "kubeloop-sharded-"); err != nil {
				return err
			}
			bin = filepath.Join(dir, "sharded")
			out, err := exec.Command("go", "build", "-o", bin, "github.com/kubeloop/kubeloop/examples/sharded/cmd/sharded").CombinedOutput()
			if err != nil {
				return fmt.Errorf("build: %v: %s", err, out)
			}
			if kubeconfig, err = writeKubeconfig(cfg, dir); err != nil {
				return err
			}
			if certDir, caFile, err = sharded.WriteCerts(dir); err != nil {
				return err
			}
			return c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNS}})
		},
		Teardown: func() error {
			if dir == "" {
				return nil
			}
			return os.RemoveAll(dir)
		},
	})
}

func writeKubeconfig(cfg *rest.Config, dir string) (string, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["t"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, InsecureSkipTLSVerify: cfg.Insecure}
	kc.AuthInfos["t"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["t"] = &clientcmdapi.Context{Cluster: "t", AuthInfo: "t"}
	kc.CurrentContext = "t"
	path := filepath.Join(dir, "kubeconfig")
	return path, clientcmd.WriteToFile(*kc, path)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// replica is one OS process of the example operator.
type replica struct {
	shard   string
	cmd     *exec.Cmd
	metrics int
	witness string
	done    chan error
	killed  time.Time
}

// startReplica starts the replica shard; args are extra flags, which
// override the defaults (the last value of a flag wins).
func startReplica(t *testing.T, shard string, args ...string) *replica {
	t.Helper()
	r := &replica{shard: shard, metrics: freePort(t), witness: filepath.Join(dir, "witness-"+shard), done: make(chan error, 1)}
	logf, err := os.Create(filepath.Join(dir, "log-"+shard))
	require.NoError(t, err)
	r.cmd = exec.Command(bin, "-kubeconfig", kubeconfig, "-shard", shard, "-cert-dir", certDir, "-ca-file", caFile,
		"-webhook-port", strconv.Itoa(freePort(t)), "-metrics-bind-address", "127.0.0.1:"+strconv.Itoa(r.metrics),
		"-witness", r.witness, "-work", "2ms", "-lease-duration", leaseDur.String(), "-lease-namespace", "default")
	r.cmd.Args = append(r.cmd.Args, args...)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	require.NoError(t, r.cmd.Start())
	go func() { r.done <- r.cmd.Wait(); logf.Close() }()
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			_ = r.cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

func (r *replica) cached(t *testing.T) int {
	t.Helper()
	return r.cachedIn(t, testNS)
}

// cachedIn is the number of ConfigMaps of namespace ns in r's cache.
func (r *replica) cachedIn(t *testing.T, ns string) int {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/cached?namespace="+ns, r.metrics))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err, string(b))
	return n
}

func listAll(t *testing.T) []corev1.ConfigMap { return listIn(t, testNS) }

func listIn(t *testing.T, ns string) []corev1.ConfigMap {
	t.Helper()
	var l corev1.ConfigMapList
	require.NoError(t, c.List(context.Background(), &l, client.InNamespace(ns)))
	return l.Items
}

// converged reports whether every object is assigned to a shard of
// shards, reconciled by it, and observed == desired.
func converged(t *testing.T, shards []string) (bool, map[string]string) {
	return convergedIn(t, testNS, objects, shards)
}

// convergedIn is converged for the n objects of namespace ns.
func convergedIn(t *testing.T, ns string, n int, shards []string) (bool, map[string]string) {
	items := listIn(t, ns)
	by := map[string]string{}
	ok := len(items) == n
	for _, cm := range items {
		s := cm.Labels[shardKey]
		by[cm.Name] = s
		if !slices.Contains(shards, s) || cm.Data["observed"] != cm.Data["desired"] || cm.Annotations["sharded.kubeloop.dev/by"] != s {
			ok = false
		}
	}
	return ok, by
}

func waitConverged(t *testing.T, shards []string, within time.Duration) (map[string]string, time.Duration) {
	t.Helper()
	return waitConvergedIn(t, testNS, objects, shards, within)
}

// waitConvergedIn is waitConverged for the n objects of namespace ns.
func waitConvergedIn(t *testing.T, ns string, n int, shards []string, within time.Duration) (map[string]string, time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		ok, by := convergedIn(t, ns, n, shards)
		if ok {
			return by, time.Since(start)
		}
		if time.Since(start) > within {
			counts := map[string]int{}
			for _, s := range by {
				counts[s]++
			}
			t.Fatalf("not converged on %v within %s: %v", shards, within, counts)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func setDesired(t *testing.T, names []string, v string) {
	t.Helper()
	setDesiredIn(t, testNS, names, v)
}

// setDesiredIn is setDesired for objects of namespace ns.
func setDesiredIn(t *testing.T, ns string, names []string, v string) {
	t.Helper()
	var wg sync.WaitGroup
	ch := make(chan string)
	for range 16 {
		wg.Go(func() {
			for name := range ch {
				for {
					cm := &corev1.ConfigMap{}
					require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cm))
					cm.Data["desired"] = v
					if err := c.Update(context.Background(), cm); err == nil {
						break
					}
				}
			}
		})
	}
	for _, n := range names {
		ch <- n
	}
	close(ch)
	wg.Wait()
}

// interval is one reconcile of one key by one shard.
type interval struct {
	shard      string
	start, end int64
}

// checkWitness reads every witness and fails on two shards reconciling
// one key at once. A start without an end (a killed process) lasts until
// the kill.
func checkWitness(t *testing.T, replicas []*replica) int {
	t.Helper()
	byKey := map[string][]interval{}
	total := 0
	for _, r := range replicas {
		f, err := os.Open(r.witness)
		require.NoError(t, err)
		open := map[string]int64{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) != 4 {
				continue // a line cut by kill -9
			}
			ts, _ := strconv.ParseInt(fs[3], 10, 64)
			switch fs[0] {
			case "S":
				open[fs[2]] = ts
			case "E":
				byKey[fs[2]] = append(byKey[fs[2]], interval{r.shard, open[fs[2]], ts})
				delete(open, fs[2])
				total++
			}
		}
		f.Close()
		end := time.Now().UnixNano()
		if !r.killed.IsZero() {
			end = r.killed.UnixNano()
		}
		for k, s := range open {
			byKey[k] = append(byKey[k], interval{r.shard, s, end})
		}
	}
	overlaps := 0
	for k, ivs := range byKey {
		slices.SortFunc(ivs, func(a, b interval) int { return int(a.start - b.start) })
		for i := 1; i < len(ivs); i++ {
			for j := 0; j < i; j++ {
				if ivs[j].shard != ivs[i].shard && ivs[i].start < ivs[j].end {
					overlaps++
					t.Errorf("%s reconciled by %s and %s at once: %v %v", k, ivs[j].shard, ivs[i].shard, ivs[j], ivs[i])
				}
			}
		}
	}
	assert.Zero(t, overlaps)
	return total
}

func TestShardedReplicas(t *testing.T) {
	a, b, cc := startReplica(t, "a"), startReplica(t, "b"), startReplica(t, "c")
	replicas := []*replica{a, b, cc}
	three := []string{"a", "b", "c"}

	// Wait for the three shards before creating objects, so the webhook
	// assigns them at admission.
	require.Eventually(t, func() bool {
		var l metav1.PartialObjectMetadataList
		l.SetGroupVersionKind(schemaLeaseList)
		if c.List(context.Background(), &l, client.InNamespace("default"), client.MatchingLabels{sharding.RingLabel: sharded.Ring}) != nil {
			return false
		}
		return len(l.Items) == 3
	}, 30*time.Second, 100*time.Millisecond)
	time.Sleep(2 * time.Second) // the views and the webhook configuration

	names := make([]string, objects)
	created := time.Now()
	{
		var wg sync.WaitGroup
		ch := make(chan int)
		for range 16 {
			wg.Go(func() {
				for i := range ch {
					require.NoError(t, c.Create(context.Background(), &corev1.ConfigMap{
						ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: names[i]},
						Data:       map[string]string{"desired": "v1"}}))
				}
			})
		}
		for i := range names {
			names[i] = fmt.Sprintf("cm-%04d", i)
			ch <- i
		}
		close(ch)
		wg.Wait()
	}
	by3, took := waitConverged(t, three, 90*time.Second)
	t.Logf("3 replicas: %d objects assigned and reconciled %s after the first create", objects, time.Since(created).Round(time.Millisecond))
	_ = took
	ring3 := sharding.NewHashRing(three, 0)
	perShard := map[string]int{}
	for name, s := range by3 {
		perShard[s]++
		assert.Equal(t, ring3.Shard(sharding.Key(cmGK, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: name}})), s, name)
	}
	for _, r := range replicas {
		assert.Equal(t, perShard[r.shard], r.cached(t), "replica %s caches only its share", r.shard)
		t.Logf("replica %s: %d objects in its cache", r.shard, r.cached(t))
	}

	// Scale out to 4 while every object changes.
	d := startReplica(t, "d")
	replicas = append(replicas, d)
	four := []string{"a", "b", "c", "d"}
	setDesired(t, names, "v2")
	by4, took := waitConverged(t, four, 90*time.Second)
	moved := 0
	for n := range by4 {
		if by4[n] != by3[n] {
			moved++
			assert.Equal(t, "d", by4[n], "objects move only to the new shard")
		}
	}
	t.Logf("3 -> 4: %d of %d objects moved (%.1f%%), converged %s after the last update", moved, objects, 100*float64(moved)/objects, took.Round(time.Millisecond))
	assert.InDelta(t, 0.25, float64(moved)/objects, 0.1)
	assert.Equal(t, perShardOf(by4)["d"], d.cached(t))

	// kill -9 b: its objects go to the others within the lease duration
	// plus a bounded time.
	var ofB []string
	for n, s := range by4 {
		if s == "b" {
			ofB = append(ofB, n)
		}
	}
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGKILL))
	b.killed = time.Now()
	<-b.done
	reassigned := waitLeft(t, "b", leaseDur+20*time.Second)
	t.Logf("kill -9: b's objects reassigned %s after the kill (lease duration %s)", reassigned.Round(time.Millisecond), leaseDur)
	assert.GreaterOrEqual(t, reassigned, leaseDur-time.Second, "a killed shard's objects wait for its Lease to expire")
	setDesired(t, ofB, "v3")
	_, _ = waitConverged(t, []string{"a", "c", "d"}, leaseDur+30*time.Second)
	t.Logf("kill -9: %d objects of b reassigned and reconciled %s after the kill (lease duration %s)", len(ofB), time.Since(b.killed).Round(time.Millisecond), leaseDur)
	assert.Less(t, time.Since(b.killed), leaseDur+20*time.Second)

	// Graceful stop of c: handover without waiting for expiry.
	require.NoError(t, cc.cmd.Process.Signal(syscall.SIGTERM))
	stopAt := time.Now()
	require.NoError(t, <-cc.done, "c exits cleanly")
	exited := time.Since(stopAt)
	l := &coordinationv1.Lease{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: sharded.Ring + "-shard-c"}, l)
	if err == nil {
		assert.Empty(t, ptr.Deref(l.Spec.HolderIdentity, ""), "c released its Lease: no one waits for it to expire")
	} else {
		assert.True(t, apierrors.IsNotFound(err), "released and already deleted by the sharder: %v", err)
	}
	left := waitLeft(t, "c", 30*time.Second)
	t.Logf("graceful stop: c exited %s after SIGTERM, its objects reassigned %s after SIGTERM", exited.Round(time.Millisecond), (exited + left).Round(time.Millisecond))
	_, _ = waitConverged(t, []string{"a", "d"}, 30*time.Second)
	took = time.Since(stopAt)
	t.Logf("graceful stop: c's objects reassigned and reconciled %s after SIGTERM", took.Round(time.Millisecond))

	reconciles := checkWitness(t, replicas)
	t.Logf("witness: %d reconciles, no overlap", reconciles)
	for _, r := range []*replica{a, d} {
		require.NoError(t, r.cmd.Process.Signal(syscall.SIGTERM))
		assert.NoError(t, <-r.done)
	}
}

func perShardOf(by map[string]string) map[string]int {
	out := map[string]int{}
	for _, s := range by {
		out[s]++
	}
	return out
}

var (
	schemaLeaseList = coordinationv1.SchemeGroupVersion.WithKind("LeaseList")
	cmGK            = schema.GroupKind{Kind: "ConfigMap"}
)

// waitLeft waits until no object is assigned to shard and returns how long
// that took.
func waitLeft(t *testing.T, shard string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < within {
		n := 0
		for _, cm := range listAll(t) {
			if cm.Labels[shardKey] == shard {
				n++
			}
		}
		if n == 0 {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("objects still on shard %s after %s", shard, within)
	return 0
}
