package multicluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// engagement is one cluster from Engage until it leaves: its own context
// and goroutine, so that nothing it waits for holds back another cluster.
type engagement struct {
	f      *Fleet
	cl     *Cluster
	ctx    context.Context // ends when the cluster leaves or the fleet stops
	cancel context.CancelFunc
	stop   func() bool // releases the fleet-stop hook
	done   chan struct{}
	log    logr.Logger

	mu      sync.Mutex
	synced  bool
	ending  bool
	errs    []error   // what failed while engaging: indexes, controllers
	engaged []Engager // the controllers engaged with the cluster
	late    sync.WaitGroup
}

func newEngagement(f *Fleet, cl *Cluster, ctx, runCtx context.Context) *engagement {
	ectx, cancel := context.WithCancel(ctx)
	return &engagement{
		f: f, cl: cl, ctx: ectx, cancel: cancel,
		stop: context.AfterFunc(runCtx, cancel),
		done: make(chan struct{}),
		log:  f.log.WithValues("cluster", cl.name),
	}
}

// run engages the cluster and returns once it has synced (or left):
// what failed (the cluster was unreachable, say) is tried again with
// backoff, and sources registered late are handed the informers' stores,
// so they miss nothing. The cache runs without a goroutine waiting for
// it, and leaving is a context.AfterFunc: an idle cluster runs only its
// informers' goroutines (bench/multicluster BenchmarkEngage,
// goroutines/cluster).
func (e *engagement) run(indexes []index, engagers []Engager) {
	e.log.Info("Engaging cluster")
	// Every controller's handlers are registered before the informers
	// start: the initial list reaches each of them.
	pending := e.prepare(indexes, engagers)
	cacheDone := e.startCache()
	// Registered when run returns, whichever way: leave runs once the
	// cluster has left (at once if it has already).
	defer context.AfterFunc(e.ctx, func() { e.leave(cacheDone) })
	for attempt := 0; pending.len() > 0; attempt++ {
		t := time.NewTimer(retryDelay(attempt))
		select {
		case <-t.C:
			pending = e.prepare(pending.indexes, pending.engagers)
		case <-e.ctx.Done():
			t.Stop()
			return
		}
	}
	if e.cl.cache.WaitForCacheSync(e.ctx) && e.ctx.Err() == nil {
		e.mu.Lock()
		e.synced = true
		e.mu.Unlock()
		e.log.Info("Cluster synced")
	}
}

// launcher is a cache that starts without blocking (cache.InformerCache).
type launcher interface {
	Launch(ctx context.Context) (<-chan struct{}, error)
}

// startCache starts the cluster's cache until the cluster leaves; the
// channel is closed once the cache has stopped.
func (e *engagement) startCache() <-chan struct{} {
	if l, ok := e.cl.cache.(launcher); ok {
		done, err := l.Launch(e.ctx)
		if err == nil {
			return done
		}
		e.log.Error(err, "Cluster cache failed")
		closed := make(chan struct{})
		close(closed)
		return closed
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := e.cl.cache.Start(e.ctx); err != nil {
			e.log.Error(err, "Cluster cache failed")
		}
	}()
	return done
}

// leave cleans up once the cluster has left and run has returned: the
// controllers' watches stop, the cache and its informers stop, idle
// connections close, and the cluster is forgotten.
func (e *engagement) leave(cacheDone <-chan struct{}) {
	defer e.f.running.Done()
	defer close(e.done)
	<-cacheDone
	e.mu.Lock()
	e.ending = true
	e.mu.Unlock()
	e.late.Wait()
	e.mu.Lock()
	engaged := e.engaged
	e.mu.Unlock()
	for _, c := range engaged {
		c.DisengageCluster(e.cl.name)
	}
	if e.cl.conns != nil {
		e.cl.conns.closeAll()
	}
	e.stop()
	e.f.forget(e)
	e.log.Info("Cluster left")
}

// steps are the indexes and controllers still to apply to a cluster.
type steps struct {
	indexes  []index
	engagers []Engager
}

func (s steps) len() int { return len(s.indexes) + len(s.engagers) }

// prepare applies indexes and engages engagers, and returns those that
// failed; their errors are the cluster's until the next attempt.
func (e *engagement) prepare(indexes []index, engagers []Engager) steps {
	var failed steps
	var errs []error
	for _, ix := range indexes {
		if err := e.cl.cache.IndexField(e.ctx, ix.obj, ix.field, ix.extract); err != nil {
			failed.indexes = append(failed.indexes, ix)
			errs = append(errs, fmt.Errorf("index %q: %w", ix.field, err))
		}
	}
	for _, c := range engagers {
		if err := e.engage(c); err != nil {
			failed.engagers = append(failed.engagers, c)
			errs = append(errs, err)
		}
	}
	if e.ctx.Err() != nil {
		return steps{}
	}
	if len(errs) > 0 {
		e.log.Error(errors.Join(errs...), "Cluster engagement failed; retrying")
	}
	e.setErrs(errs)
	return failed
}

// retryDelay is the wait before attempt+1: 500ms doubling to 30s.
func retryDelay(attempt int) time.Duration {
	d := 500 * time.Millisecond << min(attempt, 6)
	return min(d, 30*time.Second)
}

// engage engages controller c with the cluster.
func (e *engagement) engage(c Engager) error {
	if err := c.EngageCluster(e.ctx, e.cl); err != nil {
		return err
	}
	e.mu.Lock()
	e.engaged = append(e.engaged, c)
	e.mu.Unlock()
	return nil
}

// engageLate engages a controller added to the fleet after the cluster,
// in the background: its sources are handed the informers' stores as
// initial adds, so it misses nothing the cache listed before.
func (e *engagement) engageLate(c Engager) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ending {
		return
	}
	e.late.Add(1)
	go func() {
		defer e.late.Done()
		for attempt := 0; ; attempt++ {
			err := e.engage(c)
			if err == nil || e.ctx.Err() != nil {
				return
			}
			e.log.Error(err, "Engaging a controller failed; retrying")
			t := time.NewTimer(retryDelay(attempt))
			select {
			case <-t.C:
			case <-e.ctx.Done():
				t.Stop()
				return
			}
		}
	}()
}

// setErrs sets what is failing now.
func (e *engagement) setErrs(errs []error) {
	e.mu.Lock()
	e.errs = errs
	e.mu.Unlock()
}

// health returns nil once the cluster's cache has synced and its
// informers work, else why not, naming the cluster.
func (e *engagement) health() error {
	e.mu.Lock()
	synced := e.synced
	errs := append([]error(nil), e.errs...)
	e.mu.Unlock()
	if h := e.cl.cache.Healthy(); h != nil {
		errs = append(errs, h)
	}
	if synced && len(errs) == 0 {
		return nil
	}
	if !synced {
		errs = append([]error{errors.New("caches have not synced yet")}, errs...)
	}
	return fmt.Errorf("cluster %q: %w", e.cl.name, errors.Join(errs...))
}

// isSynced reports whether the cluster's cache has synced.
func (e *engagement) isSynced() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.synced
}

// forget removes e from the clusters, unless another engagement replaced
// it.
func (f *Fleet) forget(e *engagement) {
	f.mu.Lock()
	if f.clusters[e.cl.name] == e {
		delete(f.clusters, e.cl.name)
	}
	f.mu.Unlock()
	f.disengage.Add(1)
}
