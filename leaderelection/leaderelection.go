package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/lease"
)

// ErrLeaderElectionLost is wrapped by the error Run returns when this
// candidate stopped being the leader while its ctx was live. That error
// also wraps client.ErrLeaseLost (the lease core's sentinel, which fenced
// writes wrap).
var ErrLeaderElectionLost = errors.New("leaderelection: leadership lost")

// Elector campaigns for one Lease. Create it with New and call Run once.
type Elector struct {
	opts   Options
	holder *lease.Holder

	ran         atomic.Bool
	done        atomic.Bool // Run returned
	leading     atomic.Bool
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
	status, err := newStatusMetric(o.Metrics, o.ID) // metrics.go
	if err != nil {
		return nil, err
	}
	holder, err := lease.NewHolder(lease.Config{
		API:           lease.ClientsetAPI(cs),
		Namespace:     o.Namespace,
		Name:          o.ID,
		Identity:      o.Identity,
		Labels:        o.Labels,
		LeaseDuration: o.LeaseDuration,
		RenewDeadline: o.RenewDeadline,
		RetryPeriod:   o.RetryPeriod,
		SlowPath:      status.slowPath(),
	})
	if err != nil {
		return nil, fmt.Errorf("leaderelection: %w", err)
	}
	return &Elector{opts: o, holder: holder, elected: make(chan struct{}), status: status}, nil
}

// Identity returns the holder identity this candidate writes to the Lease.
func (e *Elector) Identity() string { return e.opts.Identity }

// Lease returns the Lease's "namespace/name".
func (e *Elector) Lease() string { return e.opts.Namespace + "/" + e.opts.ID }

// Elected returns a channel closed when this candidate acquires the lease.
// It is never closed if the candidate never leads.
func (e *Elector) Elected() <-chan struct{} { return e.elected }

// IsLeader reports whether this candidate holds the lease and its last
// successful renewal was sent less than RenewDeadline ago, by this
// process's monotonic clock. Leader-only code can check it just before a
// write: it turns false before any standby may take the lease over (see
// the package doc).
func (e *Elector) IsLeader() bool {
	return e.leading.Load() && e.holder.Valid(e.holder.Clock().Now())
}

// Remaining is the election's fence for writes (it implements
// client.Fence; the manager puts it into the context of leader-only
// runnables): how long this candidate stays the leader from now, by this
// process's monotonic clock, or an error wrapping client.ErrLeaseLost
// (the lease core's sentinel) naming the lease when it does not lead now.
// It agrees with IsLeader. An Elector is one term: once its leadership
// ended it never admits a write again.
func (e *Elector) Remaining() (time.Duration, error) {
	if !e.leading.Load() {
		return 0, fmt.Errorf("leaderelection: lease %s: %w: %s does not lead", e.Lease(), lease.ErrLost, e.opts.Identity)
	}
	left, err := e.holder.Remaining()
	if err != nil {
		return 0, fmt.Errorf("leaderelection: %w", err)
	}
	return left, nil
}

var _ client.Fence = (*Elector)(nil)

// Run campaigns for the lease, then renews it, until ctx ends or
// RenewDeadline passes without a successful renewal. It returns nil after
// ctx ended (having released the lease first when ReleaseOnCancel is set
// and this candidate led), or an error wrapping ErrLeaderElectionLost
// naming the lease as soon as leadership was lost. Run must be called at
// most once.
func (e *Elector) Run(ctx context.Context) error {
	if !e.ran.CompareAndSwap(false, true) {
		return fmt.Errorf("leaderelection: lease %s: Run called more than once", e.Lease())
	}
	defer e.done.Store(true)
	logger := e.logger()
	logger.V(1).Info("campaigning for the lease")
	err := e.holder.Acquire(ctx, func(err error) {
		logger.V(1).Info("lease not acquired; retrying", "reason", err.Error())
	})
	if err != nil {
		return nil // ctx ended before the lease was ours
	}
	e.leading.Store(true)
	e.status.set(true)
	logger.Info("acquired the lease; now leading")
	e.electedOnce.Do(func() { close(e.elected) })

	// Renew returns as soon as RenewDeadline has passed since the last
	// successful renewal was sent: the leader has stopped before a standby,
	// waiting the Lease's stored duration from when it saw that renewal,
	// may take over.
	renewErr := e.holder.Renew(ctx)
	e.leading.Store(false)
	e.status.set(false)
	if renewErr == nil {
		if e.opts.ReleaseOnCancel {
			e.release(context.WithoutCancel(ctx), logger)
		}
		return nil
	}
	logger.Info("leader election lost", "reason", renewErr.Error())
	return fmt.Errorf("lease %s: %w (%w)", e.Lease(), ErrLeaderElectionLost, lease.ErrLost)
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
	e.release(ctx, e.logger())
}

func (e *Elector) logger() logr.Logger {
	return e.opts.Logger.WithValues("lease", e.Lease(), "identity", e.opts.Identity)
}

// release gives the lease up if this candidate still holds it, retrying
// on conflict until RenewDeadline passes.
func (e *Elector) release(ctx context.Context, logger logr.Logger) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.RenewDeadline)
	defer cancel()
	released, err := e.holder.Release(ctx)
	switch {
	case err != nil:
		logger.Error(err, "release the lease")
	case released:
		logger.Info("released the lease")
	}
}
