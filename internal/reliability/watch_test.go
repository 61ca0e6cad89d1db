package reliability_test

import (
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/manager"
)

// Hang bounds. convergeWithin covers client-go's reflector backoff cap
// (30 s, plus jitter) after a fault, with margin; a working system
// converges in well under a second.
const convergeWithin = 75 * time.Second

// restartConvergeWithin bounds convergence after an API server restart:
// the reflector's backoff reaches its 30 s cap during a 30 s outage and
// jitter stretches a wait to 60 s (75 s measured here once, counting the
// retry that meets the restarting server); the rest is margin.
const restartConvergeWithin = 240 * time.Second

// proxied starts a manager with an oracle controller watching ns through
// a fresh fault proxy.
func proxied(t *testing.T, ns string) (*faultproxy.Proxy, *oracle, *running) {
	t.Helper()
	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	mgr := newManager(t, p.Config(), ns, manager.Options{})
	o := newOracle(t, mgr)
	r := start(mgr)
	t.Cleanup(func() { assert.NoError(t, r.stop(t)) })
	r.waitStarted(t)
	return p, o, r
}

func TestWatchCutRepeatedlyUnderUpdates(t *testing.T) {
	ns := newNamespace(t)
	names := configMaps(t, ns, 30)
	p, o, _ := proxied(t, ns)
	o.converged(t, ns, convergeWithin)

	since := time.Now()
	var cuts atomic.Int64
	stop := make(chan struct{})
	cutterDone := make(chan struct{})
	go func() {
		defer close(cutterDone)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(100+rand.IntN(400)) * time.Millisecond):
				cuts.Add(int64(p.CutWatches()))
			}
		}
	}()
	writes := writeFor(t, ns, names, 8*time.Second)
	close(stop)
	<-cutterDone
	took := o.converged(t, ns, convergeWithin)

	lists := resyncs(p, since, "/configmaps")
	rewatches := watches(p, since, "/configmaps")
	t.Logf("writes=%d watch cuts=%d re-watches=%d relists=%d converged %s after the last write", writes, cuts.Load(), rewatches, lists, took)
	require.Greater(t, cuts.Load(), int64(5), "the fault was injected")
	assert.GreaterOrEqual(t, int64(rewatches), cuts.Load(), "every cut watch was re-opened")
	// A clean end of stream resumes from the last resourceVersion; a relist
	// per cut would mean the informer throws its state away each time.
	assert.Less(t, lists, int(cuts.Load())/2, "cut watches resume without relisting")
}

// watching waits until the informers watch through p: after a LIST the
// reflector opens its watch a moment after the cache has synced.
func watching(t *testing.T, p *faultproxy.Proxy) {
	t.Helper()
	require.Eventually(t, func() bool { return p.OpenWatches() > 0 }, convergeWithin, 5*time.Millisecond, "no watch opened")
}

func TestGoneForcesRelist(t *testing.T) {
	ns := newNamespace(t)
	names := configMaps(t, ns, 10)
	p, o, _ := proxied(t, ns)
	o.converged(t, ns, convergeWithin)
	watching(t, p)

	since := time.Now()
	remove := p.AddRule(faultproxy.Rule{Match: faultproxy.And(faultproxy.Watches, faultproxy.PathContains("/configmaps")), Status: http.StatusGone, Times: 1})
	defer remove()
	require.Positive(t, p.CutWatches())
	writeFor(t, ns, names, 2*time.Second)
	took := o.converged(t, ns, convergeWithin)

	gone := p.Count(since, func(r faultproxy.Record) bool { return r.Status == http.StatusGone })
	lists := resyncs(p, since, "/configmaps")
	t.Logf("410 answers=%d relists after them=%d converged %s after the last write", gone, lists, took)
	assert.Equal(t, 1, gone, "the re-watch got 410 Gone")
	assert.GreaterOrEqual(t, lists, 1, "410 forced a relist")
	assert.LessOrEqual(t, lists, 2, "one 410 costs at most two lists (last RV, then any RV)")
}

func TestHalfOpenConnection(t *testing.T) {
	ns := newNamespace(t)
	names := configMaps(t, ns, 10)
	p, o, _ := proxied(t, ns)
	o.converged(t, ns, convergeWithin)

	watching(t, p)
	since := time.Now()
	frozen := p.Freeze()
	require.Positive(t, frozen)
	writeFor(t, ns, names, 2*time.Second)
	took := o.converged(t, ns, convergeWithin)
	rewatches := watches(p, since, "/configmaps")
	t.Logf("frozen connections=%d re-watches=%d converged %s after the last write (HTTP/2 ping 1s+1s)", frozen, rewatches, took)
	assert.GreaterOrEqual(t, rewatches, 1, "the client gave up the silent connection and watched on a new one")
	p.Thaw()
}

// TestPersistentErrorsBackOff answers every request with 429 or 500 for a
// window and counts the requests the manager sends meanwhile.
func TestPersistentErrorsBackOff(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		retryAfter int
	}{
		{"429 with Retry-After", http.StatusTooManyRequests, 1},
		{"500", http.StatusInternalServerError, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			names := configMaps(t, ns, 5)
			p, o, r := proxied(t, ns)
			o.converged(t, ns, convergeWithin)
			watching(t, p)

			remove := p.AddRule(faultproxy.Rule{Status: tc.status, RetryAfter: tc.retryAfter})
			since := time.Now()
			require.Positive(t, p.CutWatches())
			writeFor(t, ns, names, time.Second)
			const window = 10 * time.Second
			time.Sleep(window)
			all := p.Count(since, nil)
			var prev time.Time
			minGap := time.Duration(1 << 62)
			quorum := 0
			for _, rec := range p.Records() {
				if rec.Time.Before(since) || !containsPath(rec.Path, "/configmaps") {
					continue
				}
				if !prev.IsZero() && rec.Time.Sub(prev) < minGap {
					minGap = rec.Time.Sub(prev)
				}
				prev = rec.Time
				// A resync with no resourceVersion is a quorum read from
				// etcd: the expensive kind, a storm of which takes a
				// sick control plane down (kubernetes#86483).
				if rec.Query.Get("resourceVersion") == "" && (!rec.Watch || rec.Query.Get("sendInitialEvents") == "true") {
					quorum++
				}
			}
			lists := resyncs(p, since, "/configmaps")
			// client-go retries a 429 with Retry-After ten times inside one
			// request before the informer sees an error; the bound covers it.
			var healthy error
			require.Eventually(t, func() bool {
				healthy = r.mgr.GetCache().Healthy()
				return healthy != nil
			}, 30*time.Second, 100*time.Millisecond, "the cache reports the failing kind")
			remove()
			took := o.converged(t, ns, convergeWithin)

			rate := float64(all) / window.Seconds()
			t.Logf("%s for %s: %d requests (%.2f/s, closest two %s apart), %d resyncs (%d quorum); cache.Healthy: %v; converged %s after recovery",
				tc.name, window, all, rate, minGap, lists, quorum, healthy, took)
			require.Positive(t, all, "the informer kept trying")
			// Loose bound: the reflector backs off from 0.8 s to 30 s and
			// client-go honours Retry-After; a retry loop without backoff
			// sends hundreds of requests per second through this proxy.
			assert.Less(t, rate, 5.0, "backoff respected: no tight loop")
			// No relist storm: every resync resumes from the last
			// resourceVersion (served from the watch cache).
			assert.Zero(t, quorum, "no quorum relist while the server fails")
			if tc.retryAfter > 0 {
				// A lower bound, not a speed target: slowness only widens it.
				assert.GreaterOrEqual(t, minGap, time.Duration(tc.retryAfter)*time.Second*9/10, "Retry-After respected")
			}
			assert.Contains(t, healthy.Error(), "ConfigMap")
		})
	}
}

// TestAPIServerRestart kills the API server for 5 s and 30 s while the
// manager runs directly against it, and changes every object around the
// outage.
func TestAPIServerRestart(t *testing.T) {
	ns := newNamespace(t)
	names := configMaps(t, ns, 20)
	mgr := newManager(t, restConfig, ns, manager.Options{})
	o := newOracle(t, mgr)
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	o.converged(t, ns, convergeWithin)

	round := 0
	for _, outage := range []time.Duration{5 * time.Second, 30 * time.Second} {
		writeFor(t, ns, names, time.Second)
		require.NoError(t, testEnv.StopAPIServer())
		time.Sleep(outage)
		require.NoError(t, testEnv.StartAPIServer())
		round++
		writeFor(t, ns, names, time.Second)
		// Hang bound: client-go's reflector backoff is capped at 30 s and
		// jittered up to twice that, so the first attempt after the
		// restart may come a minute later.
		took := o.converged(t, ns, restartConvergeWithin)
		t.Logf("API server down %s: converged %s after the first post-restart writes ended", outage, took)
		select {
		case err := <-r.done:
			t.Fatalf("manager stopped during the outage: %v", err)
		default:
		}
	}
	require.NoError(t, r.mgr.GetCache().Healthy())
	assert.Equal(t, 2, round)
}
