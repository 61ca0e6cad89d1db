package reliability_test

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/manager"
)

var (
	testEnv    *envtest.Environment
	restConfig *rest.Config
	admin      kubernetes.Interface
)

func TestMain(m *testing.M) {
	// A dead HTTP/2 connection is detected after ReadIdleTimeout +
	// PingTimeout (30 s + 15 s by default); 1 s + 1 s keeps the half-open
	// and paused-leader cases short. client-go reads these when it builds a
	// transport, so they are set before any is built.
	os.Setenv("HTTP2_READ_IDLE_TIMEOUT_SECONDS", "1")
	os.Setenv("HTTP2_PING_TIMEOUT_SECONDS", "1")
	testEnv = &envtest.Environment{}
	testenv.Main(m, testenv.Options{
		Env: testEnv,
		Setup: func(cfg *rest.Config) error {
			restConfig = cfg
			admin = kubernetes.NewForConfigOrDie(cfg)
			return nil
		},
	})
}

// quiet is a logger that drops everything; KUBELOOP_TEST_LOG=1 prints it.
func quiet() logr.Logger {
	if os.Getenv("KUBELOOP_TEST_LOG") != "" {
		return funcr.New(func(p, a string) { fmt.Fprintln(os.Stderr, p, a) }, funcr.Options{Verbosity: 1})
	}
	return funcr.New(func(string, string) {}, funcr.Options{})
}

func unique(prefix string) string { return prefix + "-" + string(uuid.NewUUID())[:8] }

func newNamespace(t *testing.T) string {
	t.Helper()
	ns, err := admin.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rel-"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return ns.Name
}

// newManager builds a manager whose cache watches only ns.
func newManager(t *testing.T, cfg *rest.Config, ns string, opts manager.Options) *manager.Manager {
	t.Helper()
	if opts.Logger.GetSink() == nil {
		opts.Logger = quiet()
	}
	if ns != "" && opts.Cache.DefaultNamespaces == nil {
		opts.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}
	}
	m, err := manager.New(cfg, opts)
	require.NoError(t, err)
	return m
}

// running is a started manager.
type running struct {
	mgr    *manager.Manager
	cancel context.CancelFunc
	done   chan error
}

func start(mgr *manager.Manager) *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{mgr: mgr, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- mgr.Start(ctx) }()
	return r
}

// waitStarted waits until the manager's cache has synced, so that an
// oracle's "nothing changed yet" cannot pass before anything ran. A manager
// that does not get there within the hang bound fails the test with every
// goroutine's stack, for diagnosis.
func (r *running) waitStarted(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), convergeWithin)
	defer cancel()
	if r.mgr.GetCache().WaitForCacheSync(ctx) {
		return
	}
	select {
	case err := <-r.done:
		r.done <- err
		t.Fatalf("the manager's Start returned before its cache synced: %v", err)
	default:
	}
	var stacks strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
	t.Fatalf("the manager's cache did not sync within %s; goroutines:\n%s", convergeWithin, stacks.String())
}

// stop cancels the manager and returns Start's result. 60 s is a hang
// bound, far above the 30 s graceful shutdown default.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("Start did not return within 60s of cancel")
		return nil
	}
}

// configMaps creates n ConfigMaps cm-0..cm-(n-1) in ns with counter 0.
func configMaps(t *testing.T, ns string, n int) []string {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = "cm-" + strconv.Itoa(i)
		_, err := admin.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: names[i]}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	return names
}

// bump raises the counter of ns/name to n, retrying conflicts; a counter
// already at n or above is left alone, so counters never go down on the
// server.
func bump(ctx context.Context, cs kubernetes.Interface, ns, name string, n int) error {
	for {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		if cur, _ := strconv.Atoi(cm.Data["n"]); cur >= n {
			return nil
		}
		cm.Data["n"] = strconv.Itoa(n)
		_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			return err
		}
	}
}

// serverState returns name -> (counter, resourceVersion) as the API server
// has it.
func serverState(t *testing.T, ns string) map[string][2]string {
	t.Helper()
	list, err := admin.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	out := map[string][2]string{}
	for _, cm := range list.Items {
		if cm.Name == "kube-root-ca.crt" {
			continue
		}
		out[cm.Name] = [2]string{cm.Data["n"], cm.ResourceVersion}
	}
	return out
}

// tryCacheState is cacheState for use inside Eventually conditions, which
// run on another goroutine and must not call require.
func tryCacheState(mgr *manager.Manager, ns string) (map[string][2]string, error) {
	var list corev1.ConfigMapList
	if err := mgr.GetCache().List(context.Background(), &list); err != nil {
		return nil, err
	}
	out := map[string][2]string{}
	for _, cm := range list.Items {
		if cm.Namespace != ns || cm.Name == "kube-root-ca.crt" {
			continue
		}
		out[cm.Name] = [2]string{cm.Data["n"], cm.ResourceVersion}
	}
	return out, nil
}
