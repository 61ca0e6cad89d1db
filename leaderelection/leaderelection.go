package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// ErrLeaderElectionLost is wrapped by the error Run returns when this
// candidate stopped being the leader while its ctx was live.
var ErrLeaderElectionLost = errors.New("leaderelection: leadership lost")

// Elector campaigns for one Lease. Create it with New and call Run once.
type Elector struct {
	opts Options
	lock *resourcelock.LeaseLock

	ran         atomic.Bool
	done        atomic.Bool // Run returned
	leading     atomic.Bool
	base        time.Time    // New's time, with its monotonic clock reading
	lastRenew   atomic.Int64 // nanoseconds after base of the last successful write as holder
	elected     chan struct{}
	electedOnce sync.Once
	status      *statusMetric
}

// New returns an Elector for the Lease opts.ID in opts.Namespace. It checks
// opts and returns every problem at once; it makes no request.
func New(cfg *rest.Config, opts Options) (*Elector, error) {
	if cfg == nil {
		return nil, errors.New("leaderelection: rest.Config is nil")
	}
	o, err := opts.defaulted()
	if err != nil {
		return nil, err
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	hc := o.HTTPClient
	if hc == nil {
		if hc, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, fmt.Errorf("leaderelection: http client: %w", err)
		}
	}
	timed := *hc
	timed.Timeout = o.requestTimeout()
	lcfg := rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	cs, err := coordinationv1client.NewForConfigAndClient(lcfg, &timed)
	if err != nil {
		return nil, fmt.Errorf("leaderelection: lease client: %w", err)
	}
	status, err := newStatusMetric(o.Metrics, o.ID)
	if err != nil {
		return nil, err
	}
	return &Elector{
		opts: o,
		lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: o.Namespace, Name: o.ID},
			Client:     cs,
			LockConfig: resourcelock.ResourceLockConfig{Identity: o.Identity},
			Labels:     o.Labels,
		},
		base:    time.Now(),
		elected: make(chan struct{}),
		status:  status,
	}, nil
}

// Identity returns the holder identity this candidate writes to the Lease.
func (e *Elector) Identity() string { return e.opts.Identity }

// Lease returns the Lease's "namespace/name".
func (e *Elector) Lease() string { return e.opts.Namespace + "/" + e.opts.ID }

// Elected returns a channel closed when this candidate acquires the lease.
// It is never closed if the candidate never leads.
func (e *Elector) Elected() <-chan struct{} { return e.elected }

// IsLeader reports whether this candidate holds the lease and renewed it
// less than RenewDeadline ago. Leader-only code can check it just before a
// write to narrow the window in which a deposed leader still acts.
func (e *Elector) IsLeader() bool {
	return e.leading.Load() && e.sinceRenew() < e.opts.RenewDeadline
}

// sinceRenew returns the time since the last successful write as holder
// was sent, on the monotonic clock.
func (e *Elector) sinceRenew() time.Duration {
	return e.now() - time.Duration(e.lastRenew.Load())
}

// now returns the time since New, on the monotonic clock.
func (e *Elector) now() time.Duration { return time.Since(e.base) }

// Run campaigns for the lease, then renews it, until ctx ends or
// RenewDeadline passes without a successful renewal. It returns nil after ctx ended (having released
// the lease first when ReleaseOnCancel is set and this candidate led), or an
// error wrapping ErrLeaderElectionLost naming the lease as soon as
// leadership was lost. Run must be called at most once.
func (e *Elector) Run(ctx context.Context) error {
	if !e.ran.CompareAndSwap(false, true) {
		return fmt.Errorf("leaderelection: lease %s: Run called more than once", e.Lease())
	}
	logger := e.opts.Logger.WithValues("lease", e.Lease(), "identity", e.opts.Identity)
	// client-go's elector logs through the logger in its context.
	ctx = logr.NewContext(ctx, logger)

	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &observedLock{LeaseLock: e.lock, now: e.now, onHeld: func(sent time.Duration) { e.held(sent, logger) }},
		// What the Lease stores and standbys wait: whole seconds,
		// rounded up (client-go would truncate).
		LeaseDuration: e.opts.storedLeaseDuration(),
		RenewDeadline: e.opts.RenewDeadline,
		RetryPeriod:   e.opts.RetryPeriod,
		Name:          e.opts.ID,
		Callbacks: leaderelection.LeaderCallbacks{
			// Acquisition is observed synchronously through the lock, so
			// these goroutine-run callbacks have nothing to do.
			OnStartedLeading: func(context.Context) {},
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return fmt.Errorf("leaderelection: lease %s: %w", e.Lease(), err)
	}
	logger.V(1).Info("campaigning for the lease")
	// client-go's elector gives up a renewal round RenewDeadline after the
	// round began, which is up to a RetryPeriod after the last renewal;
	// the watchdog ends leadership RenewDeadline after the last renewal
	// itself, so that the leader has stopped before a standby, waiting the
	// Lease's duration, may take over.
	runCtx, stopRun := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { e.watchRenewals(runCtx, stopRun, logger) })
	le.Run(runCtx)
	stopRun()
	wg.Wait()

	wasLeading := e.leading.Swap(false)
	e.status.set(false)
	if ctx.Err() != nil {
		if wasLeading && e.opts.ReleaseOnCancel {
			e.release(context.WithoutCancel(ctx), logger)
		}
		e.done.Store(true)
		return nil
	}
	e.done.Store(true)
	if wasLeading {
		logger.Info("leader election lost")
		return fmt.Errorf("lease %s: %w", e.Lease(), ErrLeaderElectionLost)
	}
	return fmt.Errorf("leaderelection: lease %s: elector stopped before leading", e.Lease())
}

// Release gives the lease up if this candidate still holds it (empty
// holder, one-second duration), so a standby acquires it within about one
// RetryPeriod. It is for callers that decide only after Run returned
// whether releasing is safe (the manager releases only when every
// leader-only runnable has returned); it does nothing before Run returned
// or if Run never ran. It gives up when ctx ends or after RenewDeadline.
func (e *Elector) Release(ctx context.Context) {
	if !e.done.Load() {
		return
	}
	e.release(ctx, e.opts.Logger.WithValues("lease", e.Lease(), "identity", e.opts.Identity))
}

// watchRenewals waits until this candidate leads, then calls expire once
// RenewDeadline has passed since the last renewal, or returns when ctx
// ends.
func (e *Elector) watchRenewals(ctx context.Context, expire func(), logger logr.Logger) {
	select {
	case <-e.elected:
	case <-ctx.Done():
		return
	}
	t := time.NewTimer(e.opts.RenewDeadline)
	defer t.Stop()
	for {
		left := e.opts.RenewDeadline - e.sinceRenew()
		if left <= 0 {
			logger.Info("no renewal within RenewDeadline; giving leadership up", "renewDeadline", e.opts.RenewDeadline)
			expire()
			return
		}
		t.Reset(left)
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// held records a successful write of the lease with this candidate as
// holder, an acquisition or a renewal, sent at sent (see now). Leadership
// is counted from when the write was sent, not from when it was answered:
// the API server stored it in between, and standbys count the Lease's
// duration from when they saw it stored, so a slow answer cannot stretch
// this candidate's leadership past theirs.
func (e *Elector) held(sent time.Duration, logger logr.Logger) {
	e.lastRenew.Store(int64(sent))
	if e.leading.Swap(true) {
		return
	}
	e.status.set(true)
	logger.Info("acquired the lease; now leading")
	e.electedOnce.Do(func() { close(e.elected) })
}

// release gives the lease up if this candidate still holds it: empty
// holder and a one-second duration, so standbys acquire on their next
// retry. It retries on conflict until RenewDeadline passes.
func (e *Elector) release(ctx context.Context, logger logr.Logger) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.RenewDeadline)
	defer cancel()
	for {
		rec, _, err := e.lock.Get(ctx)
		if err != nil {
			logger.Error(err, "release the lease: get")
			return
		}
		if rec.HolderIdentity != e.opts.Identity {
			return
		}
		now := metav1.Now()
		err = e.lock.Update(ctx, resourcelock.LeaderElectionRecord{
			LeaseDurationSeconds: 1,
			AcquireTime:          now,
			RenewTime:            now,
			LeaderTransitions:    rec.LeaderTransitions,
		})
		switch {
		case err == nil:
			logger.Info("released the lease")
			return
		case apierrors.IsConflict(err) && ctx.Err() == nil:
			continue
		default:
			logger.Error(err, "release the lease: update")
			return
		}
	}
}

// observedLock reports every successful write that names this candidate
// as holder; client-go's elector makes such writes only when it acquires or
// renews.
type observedLock struct {
	*resourcelock.LeaseLock
	now    func() time.Duration
	onHeld func(sent time.Duration)
}

var _ resourcelock.Interface = (*observedLock)(nil)

// Create creates the Lease.
func (l *observedLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	sent := l.now()
	err := l.LeaseLock.Create(ctx, ler)
	if err == nil && ler.HolderIdentity == l.Identity() {
		l.onHeld(sent)
	}
	return err
}

// Update updates the Lease.
func (l *observedLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	sent := l.now()
	err := l.LeaseLock.Update(ctx, ler)
	if err == nil && ler.HolderIdentity == l.Identity() {
		l.onHeld(sent)
	}
	return err
}
