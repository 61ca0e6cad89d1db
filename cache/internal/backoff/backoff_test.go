package backoff

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var errRefused = errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")

func TestPolicyDoublesToTheCapWithJitter(t *testing.T) {
	var p Policy
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second,
		4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		assert.Equal(t, w, p.Ceiling(i+1), "ceiling after %d failures", i+1)
		assert.Equal(t, w/2, p.Delay(i+1, 0), "shortest wait after %d failures", i+1)
		assert.Equal(t, w/2+w/4, p.Delay(i+1, 0.5))
		assert.Less(t, p.Delay(i+1, 0.999999), w+time.Nanosecond)
	}
	assert.Equal(t, 30*time.Second, p.Ceiling(1000), "no overflow")
	assert.Zero(t, p.Ceiling(0))
	custom := Policy{Initial: time.Second, Max: 3 * time.Second}
	assert.Equal(t, 2*time.Second, custom.Ceiling(2))
	assert.Equal(t, 3*time.Second, custom.Ceiling(3))
}

// server is a fake API server for the prober: up or not, probes counted.
type server struct {
	up     atomic.Bool
	probes atomic.Int32
}

func (s *server) probe(context.Context) error {
	s.probes.Add(1)
	if s.up.Load() {
		return nil
	}
	return errRefused
}

// waited runs g.Wait and returns how long it took (fake time).
func waited(t *testing.T, g *Gate) time.Duration {
	t.Helper()
	start := time.Now()
	require.NoError(t, g.Wait(context.Background()))
	return time.Since(start)
}

func TestGateBacksOffWhileTheServerFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		g := NewGate(Policy{}, nil, nil)
		assert.Zero(t, waited(t, g), "the first call does not wait")
		var p Policy
		for n := 1; n <= 9; n++ {
			g.Done(ctx, errRefused, false)
			d := waited(t, g)
			assert.GreaterOrEqual(t, d, p.Ceiling(n)/2, "after %d failures", n)
			assert.LessOrEqual(t, d, p.Ceiling(n), "after %d failures", n)
		}
		g.Done(ctx, nil, false)
		assert.Zero(t, waited(t, g), "a list that succeeded: the watch follows at once")
		assert.Equal(t, 9, g.Failures(), "a list alone does not prove the informer works")
		g.Done(ctx, nil, true)
		time.Sleep(MinWatch)
		assert.Zero(t, waited(t, g))
		assert.Zero(t, g.Failures(), "a watch that stayed open resets the count")
	})
}

func TestGateReleasedWhenTheServerAnswersAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := &server{}
		pr := NewProber(s.probe)
		g := NewGate(Policy{}, pr, nil)
		for range 8 { // the ceiling is now 30 s
			g.Done(ctx, errRefused, false)
		}
		const outage = 7 * time.Second
		go func() {
			time.Sleep(outage)
			s.up.Store(true)
		}()
		d := waited(t, g)
		t.Logf("released %s after the wait began (server back after %s), %d probes", d, outage, s.probes.Load())
		// Probes 250-500 ms apart for 5 s, then 0.5-1 s, then at most
		// 100 ms of spread for a single informer.
		assert.Greater(t, d, outage)
		assert.LessOrEqual(t, d, outage+probeDownLater+spreadPer)
		assert.Zero(t, g.Failures(), "the count starts again")
		fast, slow := probeDownFor, outage-probeDownFor
		assert.GreaterOrEqual(t, int(s.probes.Load()), int(fast/probeDownEvery+slow/probeDownLater))
		assert.LessOrEqual(t, int(s.probes.Load()), int(fast/(probeDownEvery/2)+slow/(probeDownLater/2))+2)

		// The next failure waits the first step again.
		g.Done(ctx, errRefused, false)
		assert.LessOrEqual(t, waited(t, g), DefaultInitial+probeDownEvery)
	})
}

func TestGateNotReleasedForAnswersThatRefuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := &server{}
		s.up.Store(true)
		pr := NewProber(s.probe)
		forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("RBAC"))
		g := NewGate(Policy{}, pr, nil)
		for range 4 {
			g.Done(ctx, forbidden, false)
		}
		d := waited(t, g)
		assert.GreaterOrEqual(t, d, 1*time.Second, "403: the full backoff (ceiling 2 s)")
		assert.Zero(t, s.probes.Load(), "no probing for an answer that refuses")

		// 429 with Retry-After waits at least that long, and is not
		// released either.
		tooMany := apierrors.NewTooManyRequests("slow down", 3)
		g2 := NewGate(Policy{}, pr, nil)
		g2.Done(ctx, tooMany, true)
		assert.GreaterOrEqual(t, waited(t, g2), 3*time.Second, "Retry-After respected")
		g2.Done(ctx, apierrors.NewGenericServerResponse(http.StatusTooManyRequests, "get", schema.GroupResource{Resource: "configmaps"}, "", "", 0, false), false)
		assert.GreaterOrEqual(t, waited(t, g2), time.Second, "a 429 without Retry-After waits a second")

		// A 500 while the server answers its probes: no down-to-up
		// change, so the full backoff.
		g3 := NewGate(Policy{}, pr, nil)
		for range 4 {
			g3.Done(ctx, apierrors.NewInternalError(errors.New("conversion webhook")), false)
		}
		d = waited(t, g3)
		assert.GreaterOrEqual(t, d, time.Second, "a kind that fails alone is not released by probes that succeed")
		assert.Positive(t, s.probes.Load())
	})
}

func TestGateCountsAWatchThatEndsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		g := NewGate(Policy{}, nil, nil)
		var total time.Duration
		for n := 1; n <= 5; n++ {
			g.Done(ctx, nil, false) // the list succeeds
			assert.Zero(t, waited(t, g))
			g.Done(ctx, nil, true) // the watch opens, and ends at once
			time.Sleep(10 * time.Millisecond)
			d := waited(t, g)
			total += d
			assert.GreaterOrEqual(t, d, Policy{}.Ceiling(n)/2, "cycle %d", n)
			assert.Equal(t, n, g.Failures())
		}
		t.Logf("5 cycles of list + instant watch end waited %s", total)

		// A short watch that delivered changes (cut by a proxy, say) is a
		// working one.
		var rv atomic.Uint64
		gp := NewGate(Policy{}, nil, rv.Load)
		gp.Done(ctx, errRefused, false)
		gp.Done(ctx, nil, true)
		rv.Store(42)
		time.Sleep(100 * time.Millisecond)
		assert.Zero(t, waited(t, gp))
		assert.Zero(t, gp.Failures())

		// 410 is the reflector's routine relist, not a failure.
		g2 := NewGate(Policy{}, nil, nil)
		g2.Done(ctx, apierrors.NewResourceExpired("too old"), true)
		assert.Zero(t, waited(t, g2))
		assert.Zero(t, g2.Failures())

		// A cycle that ends after its list succeeded (the list could not
		// be applied) counts as a failure.
		g3 := NewGate(Policy{}, nil, nil)
		g3.Done(ctx, nil, false)
		g3.Ended(ctx, errors.New("apply failed"))
		assert.Equal(t, 1, g3.Failures())
		assert.GreaterOrEqual(t, waited(t, g3), DefaultInitial/2)
	})
}

// TestReleasedInformersSpreadTheirRelists releases many informers at once:
// each sends its next call at its own time within the spread.
func TestReleasedInformersSpreadTheirRelists(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := &server{}
		pr := NewProber(s.probe)
		const n = 20
		gates := make([]*Gate, n)
		for i := range gates {
			gates[i] = NewGate(Policy{}, pr, nil)
			for range 8 {
				gates[i].Done(ctx, errRefused, false)
			}
		}
		start := time.Now()
		var mu sync.Mutex
		var at []time.Duration
		var wg sync.WaitGroup
		for _, g := range gates {
			wg.Go(func() {
				require.NoError(t, g.Wait(ctx))
				mu.Lock()
				at = append(at, time.Since(start))
				mu.Unlock()
			})
		}
		synctest.Wait()
		time.Sleep(12 * time.Second)
		s.up.Store(true)
		wg.Wait()
		require.Len(t, at, n)
		first, last := at[0], at[0]
		distinct := map[time.Duration]bool{}
		for _, d := range at {
			first, last = min(first, d), max(last, d)
			distinct[d] = true
		}
		t.Logf("%d informers released between %s and %s", n, first, last)
		assert.Greater(t, first, 12*time.Second)
		assert.LessOrEqual(t, last, 12*time.Second+probeDownLater+spreadMax, "released within the bound")
		assert.Greater(t, len(distinct), n/2, "spread, not all at once")
		assert.Greater(t, last-first, spreadMax/4)
	})
}

func TestAnySuccessReleasesTheOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := &server{} // the probes keep failing (say /readyz hangs on a proxy)
		pr := NewProber(s.probe)
		waiting, other := NewGate(Policy{}, pr, nil), NewGate(Policy{}, pr, nil)
		for range 8 {
			waiting.Done(ctx, errRefused, false)
		}
		done := make(chan time.Duration, 1)
		start := time.Now()
		go func() { done <- waited(t, waiting) }()
		time.Sleep(3 * time.Second) // probes fail meanwhile: down
		other.Done(ctx, nil, true)  // another informer's watch opens
		d := <-done
		assert.Less(t, d, 3*time.Second+spreadPer+time.Millisecond)
		assert.GreaterOrEqual(t, time.Since(start), 3*time.Second)
	})
}

func TestWaitEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &server{}
		g := NewGate(Policy{}, NewProber(s.probe), nil)
		for range 8 {
			g.Done(context.Background(), errRefused, false)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		assert.ErrorIs(t, g.Wait(ctx), context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start))
		// synctest.Test returns only when every goroutine of the bubble has
		// ended: the probe loop ends with the last waiter.
	})
}

func TestUnreachable(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	assert.True(t, Unreachable(errRefused))
	assert.True(t, Unreachable(apierrors.NewServiceUnavailable("down")))
	assert.True(t, Unreachable(apierrors.NewInternalError(errors.New("x"))))
	assert.True(t, Unreachable(apierrors.NewTimeoutError("slow", 1)))
	assert.False(t, Unreachable(apierrors.NewForbidden(gr, "", errors.New("RBAC"))))
	assert.False(t, Unreachable(apierrors.NewNotFound(gr, "")))
	assert.False(t, Unreachable(apierrors.NewTooManyRequests("slow down", 1)))
}
