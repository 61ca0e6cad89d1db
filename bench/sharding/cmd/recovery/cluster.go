package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/examples/sharded"
	"github.com/kubeloop/kubeloop/sharding"
)

const (
	objectNS = "recovery" // the sharded ConfigMaps
	leaseNS  = "default"  // the shard, sharder and leader Leases
)

// cluster is one control plane and the replicas running against it.
type cluster struct {
	cfg        config
	env        *envtest.Environment
	rest       *rest.Config
	c          client.Client
	cs         kubernetes.Interface
	dir        string
	kubeconfig string
	certDir    string
	caFile     string
	self       string
	reps       map[string]*replica
}

// replica is one OS process of the example operator.
type replica struct {
	shard   string
	cmd     *exec.Cmd
	done    chan error
	witness string
	log     string
	metrics int
	pprof   string
	started time.Time
	killed  time.Time
}

func newCluster(cfg config) (*cluster, error) {
	cl := &cluster{cfg: cfg, env: &envtest.Environment{}, reps: map[string]*replica{}}
	var err error
	if cl.rest, err = cl.env.Start(); err != nil {
		return nil, err
	}
	cl.rest.QPS = -1
	if cl.dir, err = os.MkdirTemp("", "kubeloop-recovery-"); err != nil {
		return cl, err
	}
	if cl.c, err = client.New(cl.rest, client.Options{}); err != nil {
		return cl, err
	}
	if cl.cs, err = kubernetes.NewForConfig(cl.rest); err != nil {
		return cl, err
	}
	if cl.kubeconfig, err = writeKubeconfig(cl.rest, cl.dir); err != nil {
		return cl, err
	}
	if cl.certDir, cl.caFile, err = sharded.WriteCerts(cl.dir); err != nil {
		return cl, err
	}
	if cl.self, err = os.Executable(); err != nil {
		return cl, err
	}
	err = cl.c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: objectNS}})
	return cl, err
}

// stop stops every replica still running (SIGTERM, then SIGKILL after
// 20 s) and the control plane.
func (cl *cluster) stop() {
	for _, r := range cl.reps {
		if r.killed.IsZero() && r.cmd.ProcessState == nil {
			_ = r.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, r := range cl.reps {
		if !r.killed.IsZero() {
			continue // kill waited for it
		}
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.done
		}
	}
	if cl.env != nil {
		_ = cl.env.Stop()
	}
	if !cl.cfg.keep && cl.dir != "" {
		_ = os.RemoveAll(cl.dir)
	}
}

func (cl *cluster) start(shard string) (*replica, error) {
	r := &replica{shard: shard, done: make(chan error, 1),
		witness: filepath.Join(cl.dir, "witness-"+shard), log: filepath.Join(cl.dir, "log-"+shard)}
	var err error
	if r.metrics, err = freePort(); err != nil {
		return nil, err
	}
	hook, err := freePort()
	if err != nil {
		return nil, err
	}
	o := sharded.ReplicaOptions{
		Kubeconfig: cl.kubeconfig, LeaseNamespace: leaseNS, Shard: shard, CertDir: cl.certDir, CAFile: cl.caFile,
		WebhookPort: hook, MetricsAddr: "127.0.0.1:" + strconv.Itoa(r.metrics), Witness: r.witness,
		Work: cl.cfg.work, Workers: cl.cfg.workers, LeaseDuration: cl.cfg.lease,
	}
	if cl.cfg.pprof {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		o.PprofAddr = "127.0.0.1:" + strconv.Itoa(p)
		r.pprof = o.PprofAddr
		fmt.Printf("   replica %s: pprof on %s\n", shard, o.PprofAddr)
	}
	js, _ := json.Marshal(replicaSpec{Options: o, Log: r.log})
	r.cmd = exec.Command(cl.self)
	r.cmd.Env = append(os.Environ(), replicaEnv+"="+string(js))
	errf, err := os.Create(r.log + ".stderr")
	if err != nil {
		return nil, err
	}
	r.cmd.Stdout, r.cmd.Stderr = errf, errf
	if err := r.cmd.Start(); err != nil {
		errf.Close()
		return nil, err
	}
	r.started = time.Now()
	go func() { r.done <- r.cmd.Wait(); errf.Close() }()
	cl.reps[shard] = r
	return r, nil
}

// kill sends SIGKILL to r and waits for the process to end.
func (r *replica) kill() error {
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	r.killed = time.Now()
	<-r.done
	return nil
}

// cached asks r how many ConfigMaps of objectNS its cache holds.
func (r *replica) cached() (int, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/cached?namespace=%s", r.metrics, objectNS))
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

// holders maps the holder identities of the ring's shard Leases to their
// shards.
func (cl *cluster) holders(ctx context.Context) (map[string]string, error) {
	var l coordinationv1.LeaseList
	if err := cl.c.List(ctx, &l, client.InNamespace(leaseNS), client.MatchingLabels{sharding.RingLabel: sharded.Ring}); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, ls := range l.Items {
		if h := ptr.Deref(ls.Spec.HolderIdentity, ""); h != "" {
			out[h] = ls.Labels[sharding.ShardNameLabel]
		}
	}
	return out, nil
}

// sharder returns the shard whose replica holds the sharder Lease ("":
// none).
func (cl *cluster) sharder(ctx context.Context) (string, error) {
	l := &coordinationv1.Lease{}
	if err := cl.c.Get(ctx, client.ObjectKey{Namespace: leaseNS, Name: sharded.Ring + "-sharder"}, l); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	hs, err := cl.holders(ctx)
	return hs[ptr.Deref(l.Spec.HolderIdentity, "")], err
}

// waitRing waits until n shards hold their Leases and one runs the
// sharder, then for the replicas' views and the webhook configuration.
func (cl *cluster) waitRing(ctx context.Context, n int) error {
	err := waitFor(ctx, 60*time.Second, fmt.Sprintf("%d shards and a sharder", n), func() (bool, error) {
		hs, err := cl.holders(ctx)
		if err != nil {
			return false, err
		}
		s, err := cl.sharder(ctx)
		return len(hs) == n && s != "", err
	})
	if err != nil {
		return err
	}
	time.Sleep(cl.cfg.lease / 2)
	return nil
}

// createObjects creates the ConfigMaps cm-0000... with desired=v1, 16 at
// a time.
func (cl *cluster) createObjects(ctx context.Context) error {
	const writers = 16
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := w; i < cl.cfg.objects; i += writers {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: objectNS, Name: fmt.Sprintf("cm-%04d", i)},
					Data: map[string]string{"desired": "v1"}}
				if err := cl.c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
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
		case <-time.After(50 * time.Millisecond):
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
