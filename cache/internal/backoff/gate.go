package backoff

import (
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// MinWatch is how long a watch must stay open to count as working: one
// that ends sooner having delivered nothing (an empty watch client-go
// hands out after its retries of unanswered requests, a proxy that ends
// every stream) counts as a failure, so that a list that succeeds
// followed by a watch that ends at once cannot loop without waiting.
const MinWatch = time.Second

// outcome is what the last call of an informer did.
type outcome uint8

const (
	none     outcome = iota // nothing yet, or a 410 (the reflector relists at once)
	failed                  // it failed: wait before the next
	listed                  // a list (page) succeeded: the watch follows at once
	watching                // a watch opened at opened
)

// Gate paces the list and watch calls of one informer (see the package
// doc). The Reflector makes one call at a time; the mutex is for Ended,
// which the informer's run loop calls.
type Gate struct {
	policy   Policy
	prober   *Prober       // nil: no early release
	progress func() uint64 // the informer's applied resourceVersion; nil: unknown

	mu         sync.Mutex
	failures   int           // failed attempts in a row
	last       outcome       // of the last call
	releasable bool          // the last failure says the server is unreachable or sick
	retryAfter time.Duration // the last failure's Retry-After
	opened     time.Time     // when the last watch opened
	openedAt   uint64        // progress() then
}

// NewGate returns a gate with policy, released early by prober (nil:
// never). progress (nil: none) returns the resourceVersion up to which
// the informer has applied changes: a watch that moved it delivered
// something, however short it was.
func NewGate(policy Policy, prober *Prober, progress func() uint64) *Gate {
	return &Gate{policy: policy, prober: prober, progress: progress}
}

func (g *Gate) applied() uint64 {
	if g.progress == nil {
		return 0
	}
	return g.progress()
}

// Failures returns how many attempts in a row have failed.
func (g *Gate) Failures() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.failures
}

// Wait waits as long as the policy says before the next call, or until
// the prober releases it, or ctx ends (its error).
func (g *Gate) Wait(ctx context.Context) error {
	g.mu.Lock()
	switch g.last {
	case listed, none:
		g.mu.Unlock()
		return ctx.Err()
	case watching:
		if time.Since(g.opened) >= MinWatch || g.applied() != g.openedAt {
			g.failures, g.last = 0, none
			g.mu.Unlock()
			return ctx.Err()
		}
		g.failures++ // ended at once: as if it had failed
		g.releasable, g.retryAfter, g.last = true, 0, failed
	}
	d := max(g.policy.Delay(g.failures, random()), g.retryAfter)
	releasable := g.releasable && g.prober != nil
	g.mu.Unlock()

	t := time.NewTimer(d)
	defer t.Stop()
	var back <-chan struct{}
	if releasable {
		back = g.prober.enter()
	}
	select {
	case <-ctx.Done():
		if releasable {
			g.prober.leave()
		}
		return ctx.Err()
	case <-t.C:
		if releasable {
			g.prober.leave()
		}
		return nil
	case <-back:
	}
	// The server answers again: start counting afresh, after a share of
	// the spread, so that the informers released together do not all
	// relist at once.
	g.prober.leave()
	g.mu.Lock()
	g.failures, g.last = 0, none
	g.mu.Unlock()
	t.Reset(time.Duration(random() * float64(g.prober.spread())))
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Done records the outcome of a call; watch says whether it was a watch.
func (g *Gate) Done(ctx context.Context, err error, isWatch bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case err == nil:
		if g.prober != nil {
			g.prober.Answered()
		}
		g.last, g.retryAfter = listed, 0
		if isWatch {
			g.last, g.opened, g.openedAt = watching, time.Now(), g.applied()
		}
	case ctx.Err() != nil: // shutting down
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
		g.last = none // the reflector's routine relist
	default:
		g.failures++
		g.last = failed
		g.releasable = Unreachable(err)
		g.retryAfter = 0
		if s, ok := apierrors.SuggestsClientDelay(err); ok {
			g.retryAfter = time.Duration(s) * time.Second
		} else if apierrors.IsTooManyRequests(err) {
			// The server asked to slow down without saying how much (its
			// Retry-After header is not in the decoded Status): a second,
			// the API server's usual answer.
			g.retryAfter = time.Second
		}
	}
}

// Ended records that a list-and-watch cycle of the reflector ended with
// err (nil: the watch ended and the reflector relists). A cycle that ends
// after a list succeeded, before any watch opened (the list could not be
// applied), counts as a failure.
func (g *Gate) Ended(ctx context.Context, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last != listed || ctx.Err() != nil {
		return
	}
	g.failures++
	g.last = failed
	g.releasable = err != nil && Unreachable(err)
	g.retryAfter = 0
}

// Unreachable reports whether err says the API server did not answer
// (no HTTP response, a timeout) or answered that it is sick (5xx): a
// failure that a successful probe shows to be over.
func Unreachable(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	code := status.Status().Code
	return code >= 500 || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}

// Wrap returns lw with every list and watch call paced by g.
func Wrap(lw toolscache.ListerWatcher, g *Gate) toolscache.ListerWatcher {
	return &gatedLW{inner: toolscache.ToListerWatcherWithContext(lw), orig: lw, gate: g}
}

type gatedLW struct {
	inner toolscache.ListerWatcherWithContext
	orig  toolscache.ListerWatcher
	gate  *Gate
}

func (l *gatedLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l *gatedLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

func (l *gatedLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	if err := l.gate.Wait(ctx); err != nil {
		return nil, err
	}
	obj, err := l.inner.ListWithContext(ctx, opts)
	l.gate.Done(ctx, err, false)
	return obj, err
}

func (l *gatedLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if err := l.gate.Wait(ctx); err != nil {
		return nil, err
	}
	w, err := l.inner.WatchWithContext(ctx, opts)
	l.gate.Done(ctx, err, true)
	return w, err
}

// IsWatchListSemanticsUnSupported passes the wrapped list-watch's answer
// on to the reflector.
func (l *gatedLW) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(l.orig)
}
