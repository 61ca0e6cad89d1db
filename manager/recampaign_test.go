package manager_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/leaderelection"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// witness records, per manager, when its leader-only work ran: the terms
// of a leader-only runnable and every reconcile of its controller.
type witness struct {
	mu         sync.Mutex
	terms      []interval
	reconciles []reconciled
	started    chan string
}

type reconciled struct {
	who, name string
	at        time.Time
}

func newWitness() *witness { return &witness{started: make(chan string, 16)} }

// runnable is a leader-only runnable that records one term per Start.
func (w *witness) runnable(who string) manager.Runnable {
	return manager.RunnableFunc(func(ctx context.Context) error {
		w.mu.Lock()
		i := len(w.terms)
		w.terms = append(w.terms, interval{who: who, start: time.Now()})
		w.mu.Unlock()
		w.started <- who
		<-ctx.Done()
		w.mu.Lock()
		w.terms[i].end = time.Now()
		w.mu.Unlock()
		return nil
	})
}

func (w *witness) reconciler(who string) reconcile.Func {
	return func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		w.mu.Lock()
		w.reconciles = append(w.reconciles, reconciled{who: who, name: req.Name, at: time.Now()})
		w.mu.Unlock()
		return reconcile.Result{}, nil
	}
}

func (w *witness) next(t *testing.T, within time.Duration) (string, time.Time) {
	t.Helper()
	select {
	case who := <-w.started:
		return who, time.Now()
	case <-time.After(within):
		t.Fatalf("no leader-only runnable started within %s", within)
		return "", time.Time{}
	}
}

// reconciledBy reports whether who reconciled name at or after since.
func (w *witness) reconciledBy(who, name string, since time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.ContainsFunc(w.reconciles, func(r reconciled) bool {
		return r.who == who && r.name == name && !r.at.Before(since)
	})
}

func (w *witness) snapshot() ([]interval, []reconciled) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.terms), slices.Clone(w.reconciles)
}

// lists counts the LIST requests of ConfigMaps in ns that p forwarded
// since since.
func lists(p *faultproxy.Proxy, ns string, since time.Time) int {
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	return p.Count(since, func(r faultproxy.Record) bool {
		return r.Method == "GET" && !r.Watch && r.Path == path
	})
}

// The leader's connection to the API server is cut; the standby takes
// over; the connection comes back and the deposed leader, which kept
// running with warm caches, campaigns again; once the standby stops it
// leads again within LeaseDuration+RenewDeadline (5 s here; with the
// standby's release it takes about one RetryPeriod), its controller
// reconciles again (every object, as initial adds, and new ones), and its
// informers list nothing again. Leader-only work never overlaps.
func TestRecampaignAfterNetworkCut(t *testing.T) {
	ctx := context.Background()
	admin := newManager(t, restConfig, manager.Options{})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "recampaign-"}}
	require.NoError(t, admin.GetClient().Create(ctx, ns))
	for i := range 3 {
		require.NoError(t, admin.GetClient().Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: fmt.Sprintf("pre-%d", i)}}))
	}

	lease := unique("recampaign")
	w := newWitness()
	build := func(who string, mgr *manager.Manager) *manager.Manager {
		require.NoError(t, mgr.Add(w.runnable(who)))
		require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("witness").Complete(w.reconciler(who)))
		return mgr
	}
	opts := func(who string) manager.Options {
		o := electionOptions(lease, who == "b")
		o.LeaderElectionIdentity = who
		o.LeaderElectionRecampaign = who == "a"
		o.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{ns.Name: {}}}
		o.GracefulShutdownTimeout = 10 * time.Second
		return o
	}

	pa, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = pa.Close() })
	began := time.Now()
	a := build("a", newManager(t, pa.Config(), opts("a")))
	runA := start(a)
	who, _ := w.next(t, 30*time.Second)
	require.Equal(t, "a", who)
	require.Eventually(t, func() bool { return w.reconciledBy("a", "pre-0", began) }, 30*time.Second, 20*time.Millisecond)
	require.Positive(t, lists(pa, ns.Name, began), "the first start lists the ConfigMaps (the count sees lists)")
	assert.Equal(t, 1.0, masterStatus(t, a))

	b := build("b", newManager(t, restConfig, opts("b")))
	runB := start(b)

	// Cut a's connection: every byte stops, both ways.
	cut := time.Now()
	pa.Blackhole(true)
	who, tookOver := w.next(t, 3*(leaseDuration+renewDeadline))
	require.Equal(t, "b", who, "the standby takes over from the cut leader")
	t.Logf("b took over %s after the cut", tookOver.Sub(cut).Round(time.Millisecond))
	select {
	case err := <-runA.done:
		t.Fatalf("a's manager stopped instead of campaigning again: %v", err)
	default:
	}
	assert.Zero(t, masterStatus(t, a), "a is not leading between its terms")

	// Restore a's connection and wait until its informer is live again
	// (any relist the cut itself caused happens before this point).
	pa.Blackhole(false)
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "probe"}}
	require.NoError(t, admin.GetClient().Create(ctx, probe))
	require.Eventually(t, func() bool {
		return a.GetCache().Get(ctx, types.NamespacedName{Namespace: ns.Name, Name: "probe"}, &corev1.ConfigMap{}) == nil
	}, 30*time.Second, 20*time.Millisecond, "a's cache follows the API server again")
	restored := time.Now()
	time.Sleep(4 * retryPeriod) // a campaigns as a standby for a few rounds
	select {
	case who := <-w.started:
		t.Fatalf("%s started leading while b holds the lease", who)
	default:
	}

	// Stop the standby (it releases the lease): a leads again.
	require.NoError(t, runB.stop(t))
	stopped := time.Now()
	who, again := w.next(t, leaseDuration+renewDeadline)
	require.Equal(t, "a", who, "a leads again")
	t.Logf("a led again %s after b stopped", again.Sub(stopped).Round(time.Millisecond))
	assert.Equal(t, 1.0, masterStatus(t, a))

	// Its controller runs again: every object is reconciled again (handed
	// over from the informer's store) and new ones too. The controller
	// starts beside the runnable, so its first reconciles may come before
	// this goroutine reads the runnable's start: count from b's stop (a
	// did not lead between its terms; the overlap check below says so).
	require.NoError(t, admin.GetClient().Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "after"}}))
	for _, name := range []string{"pre-0", "pre-1", "pre-2", "probe", "after"} {
		require.Eventually(t, func() bool { return w.reconciledBy("a", name, stopped) }, 30*time.Second, 20*time.Millisecond, "a reconciles %s in its second term", name)
	}
	assert.Zero(t, lists(pa, ns.Name, restored), "no relist of the ConfigMaps on re-election")

	require.NoError(t, runA.stop(t))

	terms, recs := w.snapshot()
	slices.SortFunc(terms, func(x, y interval) int { return x.start.Compare(y.start) })
	var order []string
	for i, iv := range terms {
		order = append(order, iv.who)
		if i > 0 {
			prev := terms[i-1]
			t.Logf("%s led %s..%s; %s started %s later", prev.who, prev.start.Format("05.000"), prev.end.Format("05.000"), iv.who, iv.start.Sub(prev.end).Round(time.Millisecond))
			assert.False(t, iv.start.Before(prev.end), "%s started leading while %s still led", iv.who, prev.who)
		}
	}
	assert.Equal(t, []string{"a", "b", "a"}, order)
	// No reconcile of one manager falls inside another's term.
	for _, r := range recs {
		for _, iv := range terms {
			if iv.who != r.who && !r.at.Before(iv.start) && !r.at.After(iv.end) {
				t.Errorf("%s reconciled %s at %s, during %s's term", r.who, r.name, r.at.Format("05.000"), iv.who)
			}
		}
	}
}

// Alone, a manager whose connection is cut loses the lease, stops its
// leader-only work, and once the connection is back takes its own lease
// again (same identity) within LeaseDuration+RenewDeadline of the restore.
func TestRecampaignAloneTakesItsLeaseBack(t *testing.T) {
	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	opts := electionOptions(unique("recampaign-alone"), false)
	opts.LeaderElectionRecampaign = true
	mgr := newManager(t, p.Config(), opts)
	w := newWitness()
	require.NoError(t, mgr.Add(w.runnable("a")))
	run := start(mgr)
	w.next(t, 30*time.Second)

	p.Blackhole(true)
	require.Eventually(t, func() bool {
		terms, _ := w.snapshot()
		return !terms[0].end.IsZero()
	}, 3*(leaseDuration+renewDeadline), 20*time.Millisecond, "the cut leader stops its leader-only work")
	// A runnable added between terms starts with the next term.
	late := make(chan struct{})
	require.NoError(t, mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		close(late)
		<-ctx.Done()
		return nil
	})))
	p.Blackhole(false)
	restored := time.Now()
	w.next(t, leaseDuration+renewDeadline)
	t.Logf("led again %s after the restore", time.Since(restored).Round(time.Millisecond))
	waitClosed(t, late, 30*time.Second, "the runnable added between terms starts")
	assert.Equal(t, 1.0, masterStatus(t, mgr))
	require.NoError(t, run.stop(t))
}

// A leader-only runnable that does not return within
// GracefulShutdownTimeout after the lease is lost keeps the manager from
// campaigning again: Start returns the lost lease and names it.
func TestRecampaignStuckRunnableStopsTheManager(t *testing.T) {
	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	opts := electionOptions(unique("recampaign-stuck"), false)
	opts.LeaderElectionRecampaign = true
	opts.GracefulShutdownTimeout = time.Second
	mgr := newManager(t, p.Config(), opts)
	elected, release := make(chan struct{}), make(chan struct{})
	returned := make(chan struct{})
	require.NoError(t, mgr.Add(stuck{elected: elected, release: release, returned: returned}))
	run := start(mgr)
	waitClosed(t, elected, 30*time.Second, "elected")

	p.Blackhole(true)
	err = run.wait(t, 3*(leaseDuration+renewDeadline))
	p.Blackhole(false)
	close(release)
	<-returned
	require.Error(t, err)
	assert.True(t, errors.Is(err, leaderelection.ErrLeaderElectionLost), "%v", err)
	assert.True(t, strings.Contains(err.Error(), "still running after 1s, not campaigning again: [manager_test.stuck]"), "%v", err)
}

// stuck is a leader-only runnable that ignores its context until release
// is closed.
type stuck struct{ elected, release, returned chan struct{} }

func (s stuck) Start(context.Context) error {
	defer close(s.returned)
	close(s.elected)
	<-s.release
	return nil
}
