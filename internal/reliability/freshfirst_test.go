package reliability_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// reconcileLog records, per ConfigMap, when a reconcile first saw its
// counter at a given value, and in which order.
type reconcileLog struct {
	mu    sync.Mutex
	seq   int
	first map[string]seen // "name@n" -> the first reconcile that saw it
}

type seen struct {
	at  time.Time
	seq int
}

func (l *reconcileLog) record(name, n string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	if _, ok := l.first[name+"@"+n]; !ok {
		l.first[name+"@"+n] = seen{at: time.Now(), seq: l.seq}
	}
}

func (l *reconcileLog) get(name, n string) (seen, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.first[name+"@"+n]
	return s, ok
}

// count returns how many of names have been seen at n, and the latest
// sequence number among them.
func (l *reconcileLog) count(names []string, n string) (int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, last := 0, 0
	for _, name := range names {
		if s, ok := l.first[name+"@"+n]; ok {
			c++
			last = max(last, s.seq)
		}
	}
	return c, last
}

// TestFreshChangeOvertakesTheCatchUp: 1,000 ConfigMaps change while the
// manager is cut off (connections reset for 3 s); when it is back its
// informer learns of 1,000 changes, catch-up, which the controller (4
// workers, 5 ms a reconcile) queues at low priority: from the replay of
// its resumed watch, or from a relist when the resumed watch is refused
// with 410 Gone (as after a longer cut, or an API server restart). A
// change made once the informer is back comes as a watch event at normal
// priority and is reconciled before the backlog has drained. Order is
// asserted; the latency is logged.
func TestFreshChangeOvertakesTheCatchUp(t *testing.T) {
	t.Run("resumed watch", func(t *testing.T) { freshFirst(t, false) })
	t.Run("relist", func(t *testing.T) { freshFirst(t, true) })
}

// freshFirst runs TestFreshChangeOvertakesTheCatchUp, through a relist if
// relist is set.
func freshFirst(t *testing.T, relist bool) {
	const backlog = 1000
	ctx := context.Background()
	ns := newNamespace(t)
	names := make([]string, backlog)
	for i := range names {
		names[i] = "b-" + strconv.Itoa(i)
	}
	parallel(t, append([]string{"fresh"}, names...), func(name string) error {
		_, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{})
		return err
	})

	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	mgr := newManager(t, p.Config(), ns, manager.Options{})
	log := &reconcileLog{first: map[string]seen{}}
	var caughtUp atomic.Int64 // catch-up updates that changed an object
	countRelists := predicate.Funcs{UpdateFunc: func(e handler.UpdateEvent) bool {
		if e.CatchUp && e.ObjectOld.GetResourceVersion() != e.ObjectNew.GetResourceVersion() {
			caughtUp.Add(1)
		}
		return true
	}}
	c := mgr.GetClient()
	require.NoError(t, builder.ControllerManagedBy(mgr).Named("freshfirst").
		For(&corev1.ConfigMap{}, builder.WithPredicates(countRelists)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var cm corev1.ConfigMap
			if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
				return reconcile.Result{}, nil
			}
			log.record(req.Name, cm.Data["n"])
			time.Sleep(5 * time.Millisecond)
			return reconcile.Result{}, nil
		})))
	r := start(mgr)
	t.Cleanup(func() { assert.NoError(t, r.stop(t)) })
	r.waitStarted(t)
	require.Eventually(t, func() bool {
		done, _ := log.count(append(names, "fresh"), "0")
		return done == backlog+1
	}, convergeWithin, 10*time.Millisecond, "the initial list is reconciled")

	// The outage: every connection of the manager is reset while all
	// 1,000 objects change.
	p.Reject(faultproxy.ResetConnections)
	cutAt := time.Now()
	parallel(t, names, func(name string) error {
		return patchCounter(ctx, ns, name, "1")
	})
	time.Sleep(time.Until(cutAt.Add(3 * time.Second)))
	if relist {
		p.AddRule(faultproxy.Rule{Match: faultproxy.Watches, Status: http.StatusGone, Times: 1})
	}
	p.Reject(faultproxy.Pass)
	back := time.Now()

	// The informer is back once the catch-up reaches the workers: it has
	// relisted, or resumed its watch and asked the server for its version.
	require.Eventually(t, func() bool {
		done, _ := log.count(names, "1")
		return done > 0
	}, recoverWithin, time.Millisecond, "the informer is back")
	drainedBefore, _ := log.count(names, "1")

	sent := time.Now()
	require.NoError(t, patchCounter(ctx, ns, "fresh", "1"))
	acked := time.Now()
	require.Eventually(t, func() bool {
		_, ok := log.get("fresh", "1")
		return ok
	}, convergeWithin, time.Millisecond, "the fresh change is reconciled")
	fresh, _ := log.get("fresh", "1")
	doneAtFresh, _ := log.count(names, "1")
	require.Eventually(t, func() bool {
		done, _ := log.count(names, "1")
		return done == backlog
	}, convergeWithin, 10*time.Millisecond, "the backlog drains")
	_, lastBacklog := log.count(names, "1")

	var lists, probes int // full LISTs and LISTs of one object
	for _, rec := range p.Records() {
		if rec.Time.Before(back) || rec.Watch || !strings.HasSuffix(rec.Path, "/configmaps") {
			continue
		}
		if rec.Query.Get("limit") == "1" {
			probes++
		} else {
			lists++
		}
	}
	t.Logf("fresh change: %s from the write (%s from its acknowledgement) to its reconcile; "+
		"backlog reconciled when the informer was back %d/%d, when the fresh change was %d/%d; backlog drained %s after the server was back; %d LISTs, %d of one object",
		fresh.at.Sub(sent).Round(time.Millisecond), fresh.at.Sub(acked).Round(time.Millisecond),
		drainedBefore, backlog, doneAtFresh, backlog, time.Since(back).Round(time.Millisecond), lists, probes)
	if relist {
		assert.Equal(t, 1, lists, "the informer relisted")
	} else {
		assert.Equal(t, []int{0, 1}, []int{lists, probes}, "the informer resumed its watch and asked for the server's version")
	}
	assert.GreaterOrEqual(t, caughtUp.Load(), int64(backlog), "every change made during the cut came as catch-up")
	assert.Less(t, fresh.seq, lastBacklog, "the fresh change is reconciled before the backlog has drained")
	assert.Less(t, doneAtFresh, backlog, "backlog was still queued when the fresh change was reconciled")
}

// patchCounter sets the counter of ns/name to n.
func patchCounter(ctx context.Context, ns, name, n string) error {
	_, err := admin.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType,
		[]byte(`{"data":{"n":"`+n+`"}}`), metav1.PatchOptions{})
	return err
}

// parallel runs fn for every name, eight at a time, and fails t on the
// first error.
func parallel(t *testing.T, names []string, fn func(name string) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(names))
	next := make(chan string)
	for range 8 {
		wg.Go(func() {
			for name := range next {
				if err := fn(name); err != nil {
					errs <- err
				}
			}
		})
	}
	for _, name := range names {
		next <- name
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
