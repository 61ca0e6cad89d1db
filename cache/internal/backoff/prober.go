package backoff

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Probe intervals and timeout.
const (
	probeDownEvery = 500 * time.Millisecond // after a failed probe: uniform in [250, 500] ms,
	probeDownFor   = 5 * time.Second        // for the first 5 s of an outage,
	probeDownLater = time.Second            // then uniform in [0.5, 1] s
	probeUpEvery   = 2 * time.Second        // after a successful one that released nobody
	probeTimeout   = 2 * time.Second        // one probe's
	spreadPer      = 100 * time.Millisecond // release spread per waiting informer
	spreadMax      = time.Second            // ... at most
)

// Prober tells the informers of one cache when the API server answers
// again (GET /readyz, see loop for how often). It probes only while an informer waits after a failure that says
// the server is unreachable (Gate), on one goroutine that ends when the
// last such informer stops waiting. A probe that fails marks the server
// down; the next one that succeeds, or the next list or watch of any
// informer that succeeds (Answered), marks it up and releases every
// informer waiting meanwhile.
type Prober struct {
	probe func(context.Context) error

	mu      sync.Mutex
	waiters int
	down    bool          // the last probe failed and nothing succeeded since
	back    chan struct{} // closed (and replaced) when the server is up again
	release int           // how many informers waited when back last closed
	run     *probeRun     // the running probe loop, if any
}

// probeRun is one run of the probe loop.
type probeRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// NewProber returns a prober that calls probe: nil means the server
// answered (and is ready).
func NewProber(probe func(context.Context) error) *Prober {
	return &Prober{probe: probe, back: make(chan struct{})}
}

// HTTPProbe returns a probe that sends GET url (the API server's /readyz)
// through hc. Any answer but 429 and 5xx means the server is up: a 401,
// 403 or 404 comes from a server that answers, and says nothing about
// when an informer's failure will change.
func HTTPProbe(hc *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return fmt.Errorf("cache: probe %s: %s", url, resp.Status)
		}
		return nil
	}
}

// enter registers a waiting informer and returns the channel closed when
// the server is up again. leave must be called when it stops waiting.
func (p *Prober) enter() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waiters++
	if p.run == nil {
		ctx, cancel := context.WithCancel(context.Background())
		run := &probeRun{cancel: cancel, done: make(chan struct{})}
		p.run = run
		go p.loop(ctx, run)
	}
	return p.back
}

// leave unregisters a waiting informer; the last one stops the probe loop
// and waits for its goroutine to end, so that an informer that returns
// leaves no goroutine behind.
func (p *Prober) leave() {
	p.mu.Lock()
	p.waiters--
	var run *probeRun
	if p.waiters == 0 && p.run != nil {
		run, p.run = p.run, nil
	}
	p.mu.Unlock()
	if run != nil {
		run.cancel()
		<-run.done
	}
}

// spread returns how long the informers released last spread their next
// attempts over: 100 ms per informer, at most a second.
func (p *Prober) spread() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return min(time.Duration(p.release)*spreadPer, spreadMax)
}

// Answered records that a request of an informer succeeded: if the
// server was down, it is up again.
func (p *Prober) Answered() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.upLocked()
}

func (p *Prober) upLocked() {
	if p.down {
		p.down = false
		p.release = p.waiters
		close(p.back)
		p.back = make(chan struct{})
	}
}

// loop probes until ctx ends: every 250-500 ms for the first 5 s the
// server is down, every 0.5-1 s after that, every 2 s while it answers.
func (p *Prober) loop(ctx context.Context, run *probeRun) {
	defer close(run.done)
	var downSince time.Time
	for {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		err := p.probe(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		p.mu.Lock()
		if err == nil {
			p.upLocked()
		} else {
			p.down = true
		}
		down := p.down
		p.mu.Unlock()
		every := probeUpEvery
		switch {
		case !down:
			downSince = time.Time{}
		case downSince.IsZero():
			downSince = time.Now()
			fallthrough
		case time.Since(downSince) < probeDownFor:
			every = probeDownEvery/2 + time.Duration(random()*float64(probeDownEvery/2))
		default:
			every = probeDownLater/2 + time.Duration(random()*float64(probeDownLater/2))
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
