// Package health tracks whether an informer's list-watch works, for the
// cache's Healthy and for the reads that give up: the outcome of every
// list and watch call (Track) and whether each HTTP request of those
// calls, client-go's silent retries included, got an answer at all
// (TrackAnswers).
package health

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// unansweredLimit is how many requests of one informer in a row may get no
// answer (the connection closed or reset before a response) before Healthy
// reports the informer. client-go retries such a GET ten times, once a
// second, without telling anyone, so three in a row take about two seconds
// and a single lost connection never gets there.
const unansweredLimit = 3

// Health is the health of one informer's list-watch, as Healthy
// and the reads that give up report it. It is unhealthy while either holds:
//
//   - the last list or watch call failed (RBAC forbidden, kind not served,
//     connection refused, a list that ended with EOF after client-go's
//     retries), until a list succeeds or a watch opens;
//   - unansweredLimit requests in a row got no answer at all (a load
//     balancer without a backend accepts the connection and closes or
//     resets it; an API server restarting), until a request is answered;
//   - a request has waited hangAfter or longer for its answer (a server or
//     proxy that accepts the connection and never answers, a blackholed
//     cluster on HTTP/1.1: nothing fails, the request just waits), until it
//     is answered or given up.
//
// The second case is seen request by request (answerTracker): client-go's
// REST client retries a GET that ends in EOF or a connection reset ten
// times, a second apart, and a watch that fails that way returns an empty
// watch with no error, so the calls themselves look fine for ten seconds
// and more, or forever.
//
// A watch that the API server ends (its timeout, after minutes) is
// answered and then re-opened, and an expired resourceVersion (410) is
// the reflector's routine relist: neither counts.
type Health struct {
	log logr.Logger // set by New

	mu         sync.Mutex
	callErr    error                     // the last list or watch call's failure
	unanswered int                       // requests in a row without an answer
	since      time.Time                 // when the first of them failed
	lastErr    error                     // the last of them's error
	reported   bool                      // the current failure was logged
	waiting    map[uint64]waitingRequest // requests sent, not yet answered
	nextWait   uint64
}

// hangAfter is how long a list or watch request may wait for its response
// headers before the informer counts as unhealthy. A healthy API server
// answers a watch at once and a page of a list in well under a second;
// its own request timeout for a list is a minute.
const hangAfter = 30 * time.Second

// waitingRequest is a request that has not been answered yet.
type waitingRequest struct {
	since time.Time
	what  string // "GET https://host/api/v1/configmaps"
}

// New returns the health of an informer that logs to log.
func New(log logr.Logger) *Health { return &Health{log: log} }

// listed records the outcome of a list call.
func (h *Health) listed(ctx context.Context, err error) {
	if err == nil {
		h.recover(func() { h.callErr, h.unanswered, h.lastErr = nil, 0, nil })
		return
	}
	h.callFailed(ctx, err)
}

// watched records the outcome of a watch call: an open watch shows the
// call succeeded, not that requests are answered (client-go hands out an
// empty watch after its retries of unanswered requests ran out).
func (h *Health) watched(ctx context.Context, err error) {
	if err == nil {
		h.recover(func() { h.callErr = nil })
		return
	}
	h.callFailed(ctx, err)
}

// ReflectorFailed records an error the reflector hands its watch error
// handler: mostly one that a list or watch call already reported, else a
// failure to apply what it received. A watch that ended (EOF) is routine.
func (h *Health) ReflectorFailed(ctx context.Context, err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		h.log.V(4).Info("watch closed; resuming", "err", err.Error())
		return
	}
	h.callFailed(ctx, err)
}

func (h *Health) callFailed(ctx context.Context, err error) {
	switch {
	case ctx.Err() != nil: // shutting down
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
		h.log.V(4).Info("resourceVersion expired; relisting", "err", err.Error())
	default:
		h.fail(func() { h.callErr = err })
	}
}

// answered records that a request got a response, whatever its status.
func (h *Health) answered() {
	h.recover(func() { h.unanswered, h.lastErr = 0, nil })
}

// noAnswer records that a request failed before any response.
func (h *Health) noAnswer(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	h.fail(func() {
		if h.unanswered == 0 {
			h.since = time.Now()
		}
		h.unanswered++
		h.lastErr = err
	})
}

// fail applies change and logs the failure once, when it begins.
func (h *Health) fail(change func()) {
	h.mu.Lock()
	change()
	err := h.errLocked()
	log := err != nil && !h.reported
	if log {
		h.reported = true
	}
	h.mu.Unlock()
	if log {
		h.log.Error(err, "list or watch failing; retrying with backoff (Healthy reports it)")
	}
}

// recover applies change and logs the recovery once, when the informer is
// healthy again.
func (h *Health) recover(change func()) {
	h.mu.Lock()
	change()
	log := h.reported && h.errLocked() == nil
	if log {
		h.reported = false
	}
	h.mu.Unlock()
	if log {
		h.log.Info("list and watch work again")
	}
}

// Err returns why the informer is unhealthy, or nil.
func (h *Health) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.errLocked()
}

func (h *Health) errLocked() error {
	if h.callErr != nil {
		return h.callErr
	}
	if w, ok := h.oldestWaitingLocked(); ok && time.Since(w.since) >= hangAfter {
		return fmt.Errorf("%s has waited %s for an answer from the API server", w.what, time.Since(w.since).Round(time.Second))
	}
	if h.unanswered >= unansweredLimit {
		return fmt.Errorf("%d requests in a row in %s got no answer from the API server (connection closed or reset): %w",
			h.unanswered, time.Since(h.since).Round(100*time.Millisecond), h.lastErr)
	}
	return nil
}

// sent records a request on its way and returns its ticket for done.
func (h *Health) sent(req *http.Request) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.waiting == nil {
		h.waiting = map[uint64]waitingRequest{}
	}
	h.nextWait++
	h.waiting[h.nextWait] = waitingRequest{since: time.Now(), what: req.Method + " " + req.URL.Redacted()}
	return h.nextWait
}

// done records that the request of ticket got its answer or gave up.
func (h *Health) done(ticket uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.waiting, ticket)
}

func (h *Health) oldestWaitingLocked() (waitingRequest, bool) {
	var oldest waitingRequest
	found := false
	for _, w := range h.waiting {
		if !found || w.since.Before(oldest.since) {
			oldest, found = w, true
		}
	}
	return oldest, found
}

// healthKey is the context key under which a list or watch call carries
// its informer's health to answerTracker.
type healthKey struct{}

func withHealth(ctx context.Context, h *Health) context.Context {
	return context.WithValue(ctx, healthKey{}, h)
}

// answerTracker is the round tripper of the cache's list-watch requests:
// it tells the informer's health (from the request's context) whether each
// request, retries included, got an answer.
type answerTracker struct{ rt http.RoundTripper }

// RoundTrip forwards req and records whether it was answered.
func (a answerTracker) RoundTrip(req *http.Request) (*http.Response, error) {
	h, ok := req.Context().Value(healthKey{}).(*Health)
	if !ok {
		return a.rt.RoundTrip(req)
	}
	ticket := h.sent(req)
	resp, err := a.rt.RoundTrip(req)
	h.done(ticket)
	if err != nil {
		h.noAnswer(req.Context(), err)
	} else {
		h.answered()
	}
	return resp, err
}

// WrappedRoundTripper returns the wrapped round tripper (client-go's
// net.RoundTripperWrapper), so that client-go's helpers see through it.
func (a answerTracker) WrappedRoundTripper() http.RoundTripper { return a.rt }

// CloseIdleConnections closes the wrapped transport's idle connections.
func (a answerTracker) CloseIdleConnections() {
	if c, ok := a.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// TrackAnswers returns a client that sends through hc's transport (and
// connection pool) and reports each request's answer to the health in its
// context.
func TrackAnswers(hc *http.Client) *http.Client {
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if _, ok := rt.(answerTracker); ok {
		return hc
	}
	c := *hc
	c.Transport = answerTracker{rt: rt}
	return &c
}
