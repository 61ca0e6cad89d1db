package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/internal/metrics"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/trace"
	"github.com/kubeloop/kubeloop/workqueue"
)

// Controller reconciles the Requests its sources produce. Create it with
// New or NewUnmanaged.
type Controller struct {
	name               string
	do                 reconcile.Reconciler
	workers            int
	rateLimiter        workqueue.RateLimiter[reconcile.Request]
	cacheSyncTimeout   time.Duration
	reconcileTimeout   time.Duration
	recoverPanic       bool
	needLeaderElection bool
	skipNameValidation bool
	log                logr.Logger
	logCtor            func(*reconcile.Request) logr.Logger // Options.LogConstructor; nil: log with the request's values
	kind               string                               // Options.ForKind's Kind: the key of a reconcile's object reference
	metrics            *metrics.Controller
	queueMetrics       workqueue.StatsProvider
	fairnessKey        func(reconcile.Request) string
	tracer             trace.Tracer // nil: not traced (trace.go)
	links              *linkTable   // the queued Requests' events; nil when not traced

	mu      sync.Mutex
	state   state
	runs    int      // Start calls that began a run
	watches []*watch // every source watched and not removed (watches.go)
	// startCtx is Start's context, kept to start sources watched while
	// the controller runs; it is nil outside Start.
	startCtx context.Context
	queue    *workqueue.Queue[reconcile.Request]
	// droppers are the sources that can ask to drop Requests (watches.go).
	droppers atomic.Pointer[[]droppingSource]

	// A fleet's clusters (clusters.go): the watches to make on each, the
	// engaged clusters (guarded by mu), and their names for the workers'
	// lock-free check.
	clusterWatches []ClusterWatch
	engaged        map[string]*engagement
	live           sync.Map // cluster name -> *engagement
}

type state int

const (
	stateNew state = iota
	stateRunning
	stateStopped
)

// New returns a controller named name and adds it to mgr, which starts it.
// name labels logs and metrics and must be unique within mgr (unless
// SkipNameValidation). Zero Options fields take the manager's defaults
// (DefaultFromConfig, when mgr is a ConfigProvider), then its logger and
// metrics registerer.
func New(name string, mgr Manager, opts Options) (*Controller, error) {
	if mgr == nil {
		return nil, fmt.Errorf("controller %q: nil Manager", name)
	}
	if cp, ok := mgr.(ConfigProvider); ok {
		opts.DefaultFromConfig(cp.GetControllerOptions())
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = mgr.GetLogger()
	}
	if opts.Metrics == nil {
		opts.Metrics = mgr.Metrics()
	}
	if tp, ok := mgr.(TracerProvider); ok && opts.Tracer == nil {
		opts.Tracer = tp.GetTracer()
	}
	c, err := NewUnmanaged(name, opts)
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("controller %q: add to manager: %w", name, err)
	}
	return c, nil
}

// NewUnmanaged returns a controller named name that the caller starts with
// Start.
func NewUnmanaged(name string, opts Options) (*Controller, error) {
	if err := opts.validate(name); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	cm, err := metrics.NewController(opts.Metrics, name)
	if err != nil {
		return nil, fmt.Errorf("controller %q: %w", name, err)
	}
	c := &Controller{
		name:               name,
		do:                 opts.Reconciler,
		workers:            opts.MaxConcurrentReconciles,
		rateLimiter:        opts.RateLimiter,
		cacheSyncTimeout:   opts.CacheSyncTimeout,
		reconcileTimeout:   opts.ReconcileTimeout,
		recoverPanic:       *opts.RecoverPanic,
		needLeaderElection: *opts.NeedLeaderElection,
		skipNameValidation: opts.SkipNameValidation != nil && *opts.SkipNameValidation,
		log:                controllerLogger(opts.Logger, name, opts.ForKind), // reqlog.go
		logCtor:            opts.LogConstructor,
		kind:               opts.ForKind.Kind,
		metrics:            cm,
		fairnessKey:        opts.FairnessKey,
		tracer:             opts.Tracer,
	}
	if c.logCtor != nil {
		c.log = c.logCtor(nil)
	}
	if c.tracer != nil {
		c.links = newLinkTable()
	}
	if opts.Metrics != nil {
		qm, err := metrics.NewWorkqueue(opts.Metrics, name)
		if err != nil {
			return nil, fmt.Errorf("controller %q: %w", name, err)
		}
		c.queueMetrics = qm
		if err := registerWaiting(opts.Metrics, c); err != nil {
			return nil, fmt.Errorf("controller %q: %w", name, err)
		}
	}
	return c, nil
}

// ControllerName returns the controller's name; the manager uses it to
// reject two controllers with the same name.
func (c *Controller) ControllerName() string { return c.name }

// SkipNameValidation reports whether the manager may run the controller
// beside another of the same name (Options.SkipNameValidation).
func (c *Controller) SkipNameValidation() bool { return c.skipNameValidation }

// NeedLeaderElection reports whether the controller runs only on the
// leader.
func (c *Controller) NeedLeaderElection() bool { return c.needLeaderElection }

// GetLogger returns the controller's logger.
func (c *Controller) GetLogger() logr.Logger { return c.log }

// Watch adds a source. It may be called before or while the controller
// runs; a source added while it runs starts at once (and is not waited
// for). If src is a source.Preparer (source.Kind is), Watch calls Prepare
// first, bounded by CacheSyncTimeout: Kind's informer is obtained now, so
// the cache fills it even on a replica that never leads.
func (c *Controller) Watch(src source.Source) error {
	if src == nil {
		return fmt.Errorf("controller %q: Watch: nil source", c.name)
	}
	if p, ok := src.(source.Preparer); ok {
		ctx, cancel := context.WithTimeout(context.Background(), c.cacheSyncTimeout)
		err := p.Prepare(ctx)
		cancel()
		if err != nil {
			return fmt.Errorf("controller %q: watch: %w", c.name, err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateRunning {
		// Before Start, or between two runs: the next Start starts it.
		c.addWatchLocked(src)
		return nil
	}
	w := c.addWatchLocked(src)
	if err := c.startWatchLocked(c.startCtx, w); err != nil {
		c.removeWatchLocked(w)
		return fmt.Errorf("controller %q: start source: %w", c.name, err)
	}
	return nil
}

// Start runs the controller until ctx ends: it starts the sources, waits
// for them to sync, then runs the workers. It returns nil when ctx ends,
// after the reconciles in flight have returned and the workers exited, or
// an error if a source fails to start or sync.
//
// Start may be called again after it returned (a manager with
// LeaderElectionRecampaign does so each leader term). Each run has a new
// queue, empty: the Requests left in the previous run's queue are dropped,
// and the sources, started again, hand the objects their informers hold
// as initial adds (from the informers' stores: the cache keeps running, so
// nothing is listed again). Backoff history starts over. A call while a
// run is in progress fails.
func (c *Controller) Start(ctx context.Context) error {
	// Sources live as long as Start: their handler registrations and
	// goroutines end when it returns, even after a failed sync.
	ctx, cancel := context.WithCancel(logr.NewContext(ctx, c.log))
	c.mu.Lock()
	if c.state == stateRunning {
		c.mu.Unlock()
		cancel()
		return fmt.Errorf("controller %q: already started", c.name)
	}
	c.state = stateRunning
	c.runs++
	run := c.runs
	c.startCtx = ctx
	c.queue = c.newQueue()
	c.links.reset() // the new queue is empty: so are its events (trace.go)
	watches := slices.Clone(c.watches)
	c.mu.Unlock()

	defer func() {
		// The sources' contexts end before the next run may start them.
		cancel()
		c.mu.Lock()
		c.state = stateStopped
		c.startCtx = nil
		c.mu.Unlock()
	}()

	c.log.Info("Starting controller", "sources", len(watches), "workers", c.workers, "run", run)
	if err := c.startSources(ctx, watches); err != nil {
		c.queue.ShutDown()
		if ctx.Err() != nil {
			return nil // stopped while waiting: not a failure
		}
		return fmt.Errorf("controller %q: %w", c.name, err)
	}

	c.metrics.MaxConcurrentReconciles.Set(float64(c.workers))
	var wg sync.WaitGroup
	for range c.workers {
		wg.Go(func() { c.work(ctx) })
	}
	c.log.Info("Started workers", "workers", c.workers)
	<-ctx.Done()
	c.log.Info("Stopping controller; waiting for reconciles in flight")
	c.queue.ShutDownWithDrain()
	wg.Wait()
	c.log.Info("Stopped controller")
	return nil
}

// newQueue returns the controller's queue. It is created by Start because
// a queue with metrics runs a goroutine until it is shut down.
func (c *Controller) newQueue() *workqueue.Queue[reconcile.Request] {
	return workqueue.New(workqueue.Options[reconcile.Request]{
		Name:        c.name,
		RateLimiter: c.rateLimiter,
		Metrics:     c.queueMetrics,
		FairnessKey: c.fairnessKey,
		Hash:        reconcile.Request.Hash,
	})
}

// startSources starts every source and waits, in parallel and each for at
// most CacheSyncTimeout, until each has synced.
func (c *Controller) startSources(ctx context.Context, watches []*watch) error {
	for _, w := range watches {
		c.mu.Lock()
		err := c.startWatchLocked(ctx, w)
		c.mu.Unlock()
		if err != nil {
			return fmt.Errorf("start source: %w", err)
		}
	}
	errs := make([]error, len(watches))
	var wg sync.WaitGroup
	for i, w := range watches {
		if w.cluster != "" {
			continue // a fleet cluster's source: not waited for (clusters.go)
		}
		wg.Go(func() {
			cause := fmt.Errorf("CacheSyncTimeout %s exceeded", c.cacheSyncTimeout)
			sctx, cancel := context.WithTimeoutCause(ctx, c.cacheSyncTimeout, cause)
			defer cancel()
			errs[i] = c.waitForSync(sctx, w)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
