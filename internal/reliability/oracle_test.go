package reliability_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// oracle is a ConfigMap reconciler that checks the convergence
// guarantees: it records the counter it last saw per key (convergence),
// flags a counter lower than one seen before (time travel), and flags two
// reconciles of one key at once (single flight).
type oracle struct {
	mgr *manager.Manager

	mu         sync.Mutex
	inflight   map[string]int
	overlaps   int
	last       map[string]int
	travels    []string
	reconciles int
}

// newOracle builds the oracle's controller with 4 workers on mgr.
func newOracle(t *testing.T, mgr *manager.Manager) *oracle {
	t.Helper()
	o := &oracle{mgr: mgr, inflight: map[string]int{}, last: map[string]int{}}
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named(unique("oracle")).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).Complete(o))
	return o
}

func (o *oracle) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := req.NamespacedName.String()
	o.mu.Lock()
	o.inflight[key]++
	if o.inflight[key] > 1 {
		o.overlaps++
	}
	o.reconciles++
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		o.inflight[key]--
		o.mu.Unlock()
	}()
	var cm corev1.ConfigMap
	if err := o.mgr.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	n, _ := strconv.Atoi(cm.Data["n"])
	time.Sleep(time.Millisecond) // widen the window in which a second worker could overlap
	o.mu.Lock()
	defer o.mu.Unlock()
	if prev, ok := o.last[key]; ok && n < prev {
		o.travels = append(o.travels, fmt.Sprintf("%s went from %d back to %d", key, prev, n))
	}
	o.last[key] = n
	return reconcile.Result{}, nil
}

// converged waits until every key's last reconciled counter is the
// server's and the cache holds the server's resourceVersion of every
// object, then checks that nothing travelled back in time and no key had
// two reconciles at once. within is a hang bound, not a speed target.
func (o *oracle) converged(t *testing.T, ns string, within time.Duration) time.Duration {
	t.Helper()
	begin := time.Now()
	want := serverState(t, ns)
	require.Eventually(t, func() bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		for name, s := range want {
			if strconv.Itoa(o.last[ns+"/"+name]) != s[0] {
				return false
			}
		}
		return true
	}, within, 50*time.Millisecond, "every object's final state reconciled")
	var mu sync.Mutex
	var lastErr error
	if !assert.Eventually(t, func() bool {
		got, err := tryCacheState(o.mgr, ns)
		mu.Lock()
		lastErr = err
		mu.Unlock()
		return err == nil && fmt.Sprint(got) == fmt.Sprint(want)
	}, within, 50*time.Millisecond, "cache equals server") {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the cache never matched the server (last read error: %v)", lastErr)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	assert.Empty(t, o.travels, "no object went back in time")
	assert.Zero(t, o.overlaps, "no key reconciled by two workers at once")
	return time.Since(begin)
}

// writeFor bumps random objects' counters from 4 writers for d and
// returns how many writes were made.
func writeFor(t *testing.T, ns string, names []string, d time.Duration) int {
	t.Helper()
	var mu sync.Mutex
	next := map[string]int{}
	total := 0
	ctx := context.Background()
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				name := names[rand.IntN(len(names))]
				mu.Lock()
				next[name]++
				n := next[name]
				total++
				mu.Unlock()
				// Counters are only ever written upwards per key: a
				// writer holding a lower n loses the race silently.
				if err := bump(ctx, admin, ns, name, n); err != nil {
					t.Errorf("write %s: %v", name, err)
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	return total
}

// resyncs counts requests that re-read a whole collection (a LIST, or a
// watch that sends initial events) since since.
func resyncs(p *faultproxy.Proxy, since time.Time, resource string) int {
	return p.Count(since, func(r faultproxy.Record) bool {
		if !containsPath(r.Path, resource) {
			return false
		}
		return (!r.Watch && r.Method == "GET") || (r.Watch && r.Query.Get("sendInitialEvents") == "true")
	})
}

func watches(p *faultproxy.Proxy, since time.Time, resource string) int {
	return p.Count(since, func(r faultproxy.Record) bool { return r.Watch && containsPath(r.Path, resource) })
}

func containsPath(path, resource string) bool {
	return len(path) >= len(resource) && path[len(path)-len(resource):] == resource
}
