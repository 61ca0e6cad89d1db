package manager_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/manager"
)

var (
	testEnv    *envtest.Environment
	restConfig *rest.Config
)

// Fast election timings for tests against the real API server.
const (
	leaseDuration = 3 * time.Second
	renewDeadline = 2 * time.Second
	retryPeriod   = 250 * time.Millisecond
)

func TestMain(m *testing.M) {
	testEnv = &envtest.Environment{Authorization: "RBAC"}
	testenv.Main(m, testenv.Options{
		Env:   testEnv,
		Setup: func(cfg *rest.Config) error { restConfig = cfg; return nil },
	})
}

// testLogger writes to stderr when KUBELOOP_TEST_LOG is set, else nowhere.
func testLogger() logr.Logger {
	if os.Getenv("KUBELOOP_TEST_LOG") == "" {
		return logr.FromSlogHandler(slog.NewTextHandler(io.Discard, nil))
	}
	return logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.Level(-4)}))
}

func newManager(t *testing.T, cfg *rest.Config, opts manager.Options) *manager.Manager {
	t.Helper()
	if opts.Logger.GetSink() == nil {
		opts.Logger = testLogger()
	}
	m, err := manager.New(cfg, opts)
	require.NoError(t, err)
	return m
}

// unique returns prefix with a random suffix, so that repeated runs
// (-count) against the same control plane share no lease or object.
func unique(prefix string) string {
	return prefix + "-" + string(uuid.NewUUID())[:8]
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

// stop cancels the manager and returns Start's result.
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

// wait returns Start's result without cancelling.
func (r *running) wait(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case err := <-r.done:
		return err
	case <-time.After(within):
		t.Fatalf("Start did not return within %s", within)
		return nil
	}
}

// log is a concurrency-safe list of events.
type log struct {
	mu     sync.Mutex
	events []string
}

func (l *log) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, fmt.Sprintf(format, args...))
}

func (l *log) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// blocking is a runnable that logs its start and stop and runs until its
// context ends.
type blocking struct {
	name     string
	log      *log
	started  chan struct{}
	once     sync.Once
	onStart  func()
	onCancel func()
}

func newBlocking(name string, l *log) *blocking {
	return &blocking{name: name, log: l, started: make(chan struct{})}
}

func (b *blocking) Start(ctx context.Context) error {
	if b.onStart != nil {
		b.onStart()
	}
	b.log.add("start %s", b.name)
	b.once.Do(func() { close(b.started) })
	<-ctx.Done()
	if b.onCancel != nil {
		b.onCancel()
	}
	b.log.add("stop %s", b.name)
	return nil
}

// leaderAware wraps a blocking runnable with NeedLeaderElection.
type leaderAware struct {
	*blocking
	need bool
}

func (l leaderAware) NeedLeaderElection() bool { return l.need }

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func containsLine(body, prefix string) bool {
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func waitClosed(t *testing.T, ch <-chan struct{}, within time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(within):
		t.Fatalf("%s: not within %s", what, within)
	}
}
