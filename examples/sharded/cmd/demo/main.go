// Command demo shows the sharded example operator at work: it starts a
// local control plane, runs 3 replicas of the operator as separate
// processes (this program run again as a replica), creates -objects
// ConfigMaps, waits until every one is assigned to a shard and reconciled
// by it, prints the distribution (assigned, cached and reconciled per
// replica), and stops everything it started.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/examples/sharded"
	"github.com/kubeloop/kubeloop/sharding"
)

// replicaEnv carries a replica's sharded.ReplicaOptions as JSON: the
// program then runs as that replica.
const replicaEnv = "KUBELOOP_SHARDED_DEMO_REPLICA"

const namespace = "sharded-demo"

func main() {
	if spec := os.Getenv(replicaEnv); spec != "" {
		os.Exit(runReplica(spec))
	}
	objects := flag.Int("objects", 3000, "ConfigMaps to create")
	replicas := flag.Int("replicas", 3, "replicas (shards) to run")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *objects, *replicas); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

func runReplica(spec string) int {
	var o sharded.ReplicaOptions
	if err := json.Unmarshal([]byte(spec), &o); err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := sharded.RunReplica(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 1
	}
	return 0
}

var start = time.Now()

func step(format string, args ...any) {
	fmt.Printf("[%5.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
}

// replica is one running replica process.
type replica struct {
	shard   string
	metrics int
	cmd     *exec.Cmd
	done    chan error
}

func run(ctx context.Context, objects, replicas int) error {
	step("Starting a local control plane: etcd %s and kube-apiserver %s on loopback", envtest.EtcdVersion, envtest.KubeAPIServerVersion)
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		return err
	}
	defer func() {
		step("Stopping the local control plane")
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop:", err)
		}
	}()
	dir, err := os.MkdirTemp("", "kubeloop-sharded-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	kubeconfig, err := writeKubeconfig(cfg, dir)
	if err != nil {
		return err
	}
	certDir, caFile, err := sharded.WriteCerts(dir)
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}

	self, err := os.Executable()
	if err != nil {
		return err
	}
	var running []*replica
	defer func() {
		for _, r := range running {
			_ = r.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, r := range running {
			select {
			case err := <-r.done:
				if err != nil {
					fmt.Fprintf(os.Stderr, "replica %s: %v\n", r.shard, err)
				}
			case <-time.After(30 * time.Second):
				_ = r.cmd.Process.Kill()
				<-r.done
				fmt.Fprintf(os.Stderr, "replica %s: killed, it had not stopped 30 s after SIGTERM\n", r.shard)
			}
		}
		if len(running) > 0 {
			step("Stopped the %d replicas", len(running))
		}
	}()
	step("Starting %d replicas of the sharded operator, separate processes (logs in %s)", replicas, dir)
	for i := range replicas {
		r, err := startReplica(self, dir, string(rune('a'+i)), sharded.ReplicaOptions{
			Kubeconfig: kubeconfig, CertDir: certDir, CAFile: caFile, Work: 5 * time.Millisecond,
		})
		if err != nil {
			return err
		}
		running = append(running, r)
	}
	if err := waitFor(ctx, 60*time.Second, "the shard Leases", func() (bool, error) {
		var l coordinationv1.LeaseList
		err := c.List(ctx, &l, client.InNamespace("default"), client.MatchingLabels{sharding.RingLabel: sharded.Ring})
		return err == nil && len(l.Items) == replicas, nil
	}); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // every replica's view of the ring, and the webhook configuration
	step("Ring %q formed: %d shards, each holding its Lease", sharded.Ring, replicas)

	step("Creating %d ConfigMaps in namespace %s (the webhook assigns each at admission)", objects, namespace)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	created := time.Now()
	if err := createConfigMaps(ctx, c, objects); err != nil {
		return err
	}
	shardKey := sharding.ShardLabel(sharded.Ring)
	var by map[string]int
	if err := waitFor(ctx, 3*time.Minute, "every ConfigMap reconciled by its shard", func() (bool, error) {
		var l corev1.ConfigMapList
		if err := c.List(ctx, &l, client.InNamespace(namespace)); err != nil {
			return false, err
		}
		by = map[string]int{}
		done := 0
		for _, cm := range l.Items {
			s := cm.Labels[shardKey]
			by[s]++
			if s != "" && cm.Data["observed"] == cm.Data["desired"] && cm.Annotations["sharded.kubeloop.dev/by"] == s {
				done++
			}
		}
		return done == objects, nil
	}); err != nil {
		return err
	}
	step("All %d ConfigMaps assigned and reconciled %s after the first create", objects, time.Since(created).Round(10*time.Millisecond))
	fmt.Printf("\n          %-6s %9s %9s\n", "shard", "assigned", "cached")
	shards := make([]string, 0, len(by))
	for s := range by {
		shards = append(shards, s)
	}
	sort.Strings(shards)
	for _, s := range shards {
		cached := "-"
		for _, r := range running {
			if r.shard == s {
				n, err := r.cached()
				if err != nil {
					return err
				}
				cached = strconv.Itoa(n)
			}
		}
		fmt.Printf("          %-6s %9d %9s\n", s, by[s], cached)
	}
	fmt.Println("\n          Each replica's cache holds only the ConfigMaps assigned to it (a label selector on its watch).")
	return nil
}

func startReplica(self, dir, shard string, o sharded.ReplicaOptions) (*replica, error) {
	var err error
	r := &replica{shard: shard, done: make(chan error, 1)}
	if r.metrics, err = freePort(); err != nil {
		return nil, err
	}
	if o.WebhookPort, err = freePort(); err != nil {
		return nil, err
	}
	o.Shard = shard
	o.MetricsAddr = "127.0.0.1:" + strconv.Itoa(r.metrics)
	spec, _ := json.Marshal(o)
	logf, err := os.Create(filepath.Join(dir, "replica-"+shard+".log"))
	if err != nil {
		return nil, err
	}
	r.cmd = exec.Command(self)
	r.cmd.Env = append(os.Environ(), replicaEnv+"="+string(spec))
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	if err := r.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { r.done <- r.cmd.Wait(); logf.Close() }()
	return r, nil
}

// cached asks the replica how many ConfigMaps of the demo namespace its
// cache holds.
func (r *replica) cached() (int, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/cached?namespace=%s", r.metrics, namespace))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func createConfigMaps(ctx context.Context, c client.Client, n int) error {
	const writers = 16
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := w; i < n; i += writers {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("cm-%04d", i)},
					Data: map[string]string{"desired": "v1"}}
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

func waitFor(ctx context.Context, within time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(within)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s", within, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func writeKubeconfig(cfg *rest.Config, dir string) (string, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, InsecureSkipTLSVerify: cfg.Insecure}
	kc.AuthInfos["local"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "local"}
	kc.CurrentContext = "local"
	path := filepath.Join(dir, "kubeconfig")
	return path, clientcmd.WriteToFile(*kc, path)
}
