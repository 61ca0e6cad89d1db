// Package real_bench runs the end-to-end comparison of bench/e2e against a
// real control plane (kubeloop's envtest: etcd and kube-apiserver on
// loopback) instead of the fake API server, one child process per stack
// (kubeloop, controller-runtime, client-go) and round:
//
//   - cold start: -objects ConfigMaps (5,000) are created before any stack
//     starts; time and process CPU until every one has been reconciled;
//   - steady state: the parent patches -event-objects ConfigMaps (1,000)
//     -events times (5,000) in all, 8 writers, each object's patches in
//     order; the child's CPU per event and events per second until every
//     object's last patch has been reconciled (the API server's write rate
//     bounds events/s);
//   - latency: -latency single patches (100), 2 ms apart, from just before
//     the PATCH request to the reconcile that reads the patched object
//     (p50, p99; the PATCH round trip, write-us, overlaps both).
//
// Every patch writes a new, increasing data["gen"], so the child knows which
// version each object must reach without knowing resourceVersions in
// advance.
//
// BenchmarkRealFailover measures kubeloop's leader failover with fast
// timings (LeaseDuration 4 s, RenewDeadline 3 s, RetryPeriod 0.5 s): from
// cancelling the leader's manager until the standby's Elected() closes, with
// LeaderElectionReleaseOnCancel (case=release) and without it (case=crash).
//
//	GOMAXPROCS=2 go test -run '^$' -bench . -benchtime 1x -count 3
package real_bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
)

const namespace = "bench"

var (
	nObjects      = flag.Int("objects", 5000, "ConfigMaps created before the stacks start (cold start)")
	nEvents       = flag.Int("events", 5000, "patches in the steady-state phase")
	nEventObjects = flag.Int("event-objects", 1000, "ConfigMaps the steady-state patches modify")
	nLatency      = flag.Int("latency", 100, "single patches in the latency phase")
	workers       = flag.Int("workers", 2, "reconcile workers of every stack")
	writers       = flag.Int("writers", 8, "concurrent writers of the steady-state patches")
	reverse       = flag.Bool("reverse", false, "run the stacks in reverse order")
	floor         = flag.Bool("floor", false, "BenchmarkRealE2E also runs the reference consumer stacks.Floor (impl=floor)")

	env       *envtest.Environment
	cfg       *rest.Config
	cfgPath   string
	clientset *kubernetes.Clientset
	// gen is the highest data["gen"] written so far; each child's patches
	// start above it.
	gen int64
)

// connInfo is what a child needs to reach the API server.
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
		os.Exit(m.Run())
	}
	code, err := setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		code = 1
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

func setup() (int, error) {
	env = &envtest.Environment{}
	var err error
	t0 := time.Now()
	if cfg, err = env.Start(); err != nil {
		return 1, err
	}
	fmt.Fprintf(os.Stderr, "control plane up in %v\n", time.Since(t0).Round(time.Millisecond))
	dir, err := os.MkdirTemp("", "kubeloop-bench-real-")
	if err != nil {
		return 1, err
	}
	cfgPath = filepath.Join(dir, "conn.json")
	js, _ := json.Marshal(connInfo{Host: cfg.Host, CAData: cfg.CAData, CertData: cfg.CertData, KeyData: cfg.KeyData})
	if err := os.WriteFile(cfgPath, js, 0o600); err != nil {
		return 1, err
	}
	if clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return 1, err
	}
	if *nEventObjects > *nObjects || *nLatency > *nObjects {
		return 1, fmt.Errorf("-event-objects and -latency must not exceed -objects")
	}
	t0 = time.Now()
	if err := seed(context.Background(), *nObjects); err != nil {
		return 1, err
	}
	fmt.Fprintf(os.Stderr, "created %d ConfigMaps in %v\n", *nObjects, time.Since(t0).Round(time.Millisecond))
	return 0, nil
}

// seed creates the namespace and n ConfigMaps config-<i> with gen 0.
func seed(ctx context.Context, n int) error {
	_, err := clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	const par = 16
	var wg sync.WaitGroup
	errs := make(chan error, par)
	for w := range par {
		wg.Go(func() {
			for i := w; i < n; i += par {
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("config-%d", i), Namespace: namespace,
						Labels: map[string]string{"app": "bench"}},
					Data: map[string]string{"gen": "0", "payload": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
				}
				if _, err := clientset.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
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
