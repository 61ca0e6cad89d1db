package lease

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrHeld is wrapped by TryAcquireOrRenew's error when another holder's
// hold has not expired by this process's observation.
var ErrHeld = errors.New("lease: held by another holder")

// ErrLost is the one sentinel of a hold that is gone: wrapped by
// Remaining's error when the hold is not valid now, and, under their own
// names (client.ErrLeaseLost, sharding.ErrLeaseLost), by fenced writes that
// were refused and by the ring's Start when its shard Lease was lost, so
// that errors.Is(err, client.ErrLeaseLost) holds for all of them.
var ErrLost = errors.New("lease lost")

// ErrNotRenewed is wrapped by Renew's error when no renewal succeeded
// within RenewDeadline: the hold is no longer valid.
var ErrNotRenewed = errors.New("lease: not renewed within RenewDeadline")

// Config configures a Holder. API, Name, Namespace and Identity are
// required; the timings must pass Validate.
type Config struct {
	// API reads and writes the Lease.
	API API
	// Namespace and Name locate the Lease.
	Namespace, Name string
	// Identity is this holder's spec.holderIdentity; unique per process.
	Identity string
	// Labels are set on the Lease at every write (others are kept). Zero:
	// none.
	Labels map[string]string
	// LeaseDuration is written, rounded up to whole seconds, as
	// spec.leaseDurationSeconds.
	LeaseDuration time.Duration
	// RenewDeadline is how long a hold stays valid after the start of its
	// last successful write (see Holder.Valid).
	RenewDeadline time.Duration
	// RetryPeriod is the interval of Acquire's tries (jittered) and of
	// Renew's renewals.
	RetryPeriod time.Duration
	// Clock is the local clock. Zero: RealClock.
	Clock Clock
	// SlowPath, when set, is called each time this holder, holding the
	// Lease, has to read it before renewing it because its last write
	// failed (client-go's "slow path", counted in
	// leader_election_slowpath_total). Zero: nothing is called.
	SlowPath func()
}

// Fence answers "may I still write?" for a holder. Fenced writes (issue
// 29) ask it just before each request is sent and refuse when Valid is
// false; they may bound the request by Deadline. *Holder implements it;
// leaderelection.Elector.IsLeader and the sharding gate are built on it.
// Readings passed to Valid, and Deadline's result, are on the holder's
// Clock.
type Fence interface {
	Valid(now time.Time) bool
	Deadline() time.Time
}

var _ Fence = (*Holder)(nil)

// Holder holds one Lease for one identity. Its methods are safe for
// concurrent use; TryAcquireOrRenew, Acquire, Renew and Release are meant
// to be called from one goroutine at a time, Valid and Deadline from any.
type Holder struct {
	cfg Config

	mu        sync.Mutex
	last      *coordinationv1.Lease // as last written by this holder; nil: read it first
	obs       Observer              // of the Lease as read
	renewedAt time.Time             // local clock before the last successful write as holder
	held      bool
	// abandoned is when Renew gave up waiting for an attempt; a write of
	// an attempt sent before it does not make the hold valid again.
	abandoned time.Time
	notes     map[string]string // SetAnnotation's; "" removes the key
}

// NewHolder checks cfg and returns a Holder that holds nothing yet. It
// makes no request.
func NewHolder(cfg Config) (*Holder, error) {
	var errs []error
	if cfg.API == nil {
		errs = append(errs, errors.New("API is nil"))
	}
	if cfg.Name == "" || cfg.Namespace == "" {
		errs = append(errs, fmt.Errorf("lease %q in namespace %q: name and namespace are required", cfg.Name, cfg.Namespace))
	}
	if cfg.Identity == "" {
		errs = append(errs, errors.New("Identity is required"))
	}
	if err := Validate(cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("lease: invalid config: %w", err)
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock{}
	}
	cfg.Labels = maps.Clone(cfg.Labels)
	return &Holder{cfg: cfg}, nil
}

// Key returns the Lease's "namespace/name".
func (h *Holder) Key() string { return h.cfg.Namespace + "/" + h.cfg.Name }

// Identity returns the holder identity this Holder writes.
func (h *Holder) Identity() string { return h.cfg.Identity }

// Clock returns the Holder's clock, the one Valid and Deadline use.
func (h *Holder) Clock() Clock { return h.cfg.Clock }

// Valid answers "may I still write?" for the holder: it reports whether
// this Holder holds the Lease and now (a reading of the Holder's Clock)
// is before Deadline. Fenced writes ask it just before they are sent:
//
//	if !h.Valid(h.Clock().Now()) { return errFenced }
//
// The rule is now < start + RenewDeadline, where start is the Clock
// reading taken just before the last successful acquisition or renewal was
// sent. Every observer starts counting that write's duration no earlier
// than it was stored, so no earlier than start, and waits the written
// duration (LeaseDuration rounded up, > RenewDeadline by Validate): a
// holder's validity always ends strictly before any observer may consider
// the Lease expired, whatever the offset between their clocks. It turns
// false at once when a read shows another holder, and on Release.
func (h *Holder) Valid(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held && now.Before(h.renewedAt.Add(h.cfg.RenewDeadline))
}

// Deadline returns when, by the Holder's Clock, the current hold stops
// being valid (see Valid), or the zero time when nothing is held. A fenced
// write may bound its request with it: context.WithTimeout(ctx,
// h.Deadline().Sub(h.Clock().Now())).
func (h *Holder) Deadline() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.held {
		return time.Time{}
	}
	return h.renewedAt.Add(h.cfg.RenewDeadline)
}

// Remaining is the fence of a write (client.Fence): it returns how long,
// by the Holder's Clock, the hold stays valid from now (Deadline minus
// now), or, when Valid is false now, an error wrapping ErrLost that names
// the Lease and says since when the hold ended. A Holder is one term: once
// its hold ended, only a new successful TryAcquireOrRenew on this Holder
// makes it valid again, so a caller that wants writes of an old term to
// stay refused after a re-acquisition uses a new Holder per term.
func (h *Holder) Remaining() (time.Duration, error) {
	now := h.cfg.Clock.Now()
	h.mu.Lock()
	held, deadline := h.held, h.renewedAt.Add(h.cfg.RenewDeadline)
	h.mu.Unlock()
	switch {
	case !held:
		return 0, fmt.Errorf("lease %s: %w: not held by %s", h.Key(), ErrLost, h.cfg.Identity)
	case !now.Before(deadline):
		return 0, fmt.Errorf("lease %s: %w: the hold of %s ended %s ago (not renewed within %s)",
			h.Key(), ErrLost, h.cfg.Identity, now.Sub(deadline).Round(time.Millisecond), h.cfg.RenewDeadline)
	}
	return deadline.Sub(now), nil
}

// Observed returns the Lease's record as this Holder last read it, and
// whether it read one. It does not change on this Holder's own writes.
func (h *Holder) Observed() (Record, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.obs.Record()
}

// TryAcquireOrRenew makes one attempt to acquire or renew the Lease:
// it creates it when it does not exist, renews it when this identity holds
// it, and takes it over when its holder is empty or its hold expired by
// this Holder's observation (Observer). It returns nil when the Lease is
// held by this identity now, and an error wrapping ErrHeld when another
// holder's hold is still running. Every write carries the resourceVersion
// it was decided on.
func (h *Holder) TryAcquireOrRenew(ctx context.Context) error {
	h.mu.Lock()
	cur, wasHeld := h.last, h.held
	h.mu.Unlock()
	if cur == nil {
		l, err := h.cfg.API.Get(ctx, h.cfg.Namespace, h.cfg.Name)
		if apierrors.IsNotFound(err) {
			return h.create(ctx)
		}
		if err != nil {
			return fmt.Errorf("get lease %s: %w", h.Key(), err)
		}
		observed := h.cfg.Clock.Now() // after the response: the record was stored before
		rec := RecordOf(l.Spec)
		h.mu.Lock()
		h.obs.Observe(rec, observed)
		expired, until := h.obs.Expired(observed), h.obs.ExpiresAt()
		if rec.Holder != h.cfg.Identity {
			h.held = false
		}
		h.mu.Unlock()
		if rec.Holder != "" && rec.Holder != h.cfg.Identity && !expired {
			return fmt.Errorf("lease %s: %w %q for another %s", h.Key(), ErrHeld, rec.Holder, until.Sub(observed).Round(time.Millisecond))
		}
		if wasHeld && rec.Holder == h.cfg.Identity && h.cfg.SlowPath != nil {
			h.cfg.SlowPath() // a renewal that had to read the Lease first
		}
		cur = l
	}
	sent := h.cfg.Clock.Now()
	old := RecordOf(cur.Spec)
	rec := Record{Holder: h.cfg.Identity, Duration: h.cfg.LeaseDuration, AcquireTime: sent, RenewTime: sent, Transitions: old.Transitions}
	if old.Holder == h.cfg.Identity {
		if !old.AcquireTime.IsZero() {
			rec.AcquireTime = old.AcquireTime
		}
	} else {
		rec.Transitions++
	}
	next := cur.DeepCopy()
	next.Spec = rec.Spec()
	h.setLabels(&next.ObjectMeta)
	updated, err := h.cfg.API.Update(ctx, next)
	if err != nil {
		h.forget()
		return fmt.Errorf("update lease %s: %w", h.Key(), err)
	}
	h.wrote(updated, sent)
	return nil
}

// create creates the Lease held by this identity.
func (h *Holder) create(ctx context.Context) error {
	sent := h.cfg.Clock.Now()
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.cfg.Namespace, Name: h.cfg.Name},
		Spec:       Record{Holder: h.cfg.Identity, Duration: h.cfg.LeaseDuration, AcquireTime: sent, RenewTime: sent}.Spec(),
	}
	h.setLabels(&l.ObjectMeta)
	created, err := h.cfg.API.Create(ctx, l)
	if err != nil {
		return fmt.Errorf("create lease %s: %w", h.Key(), err)
	}
	h.wrote(created, sent)
	return nil
}

func (h *Holder) setLabels(m *metav1.ObjectMeta) {
	h.annotate(m)
	if len(h.cfg.Labels) == 0 {
		return
	}
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	maps.Copy(m.Labels, h.cfg.Labels)
}

// wrote records a successful write as holder whose request started at
// sent.
func (h *Holder) wrote(l *coordinationv1.Lease, sent time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sent.Before(h.abandoned) {
		h.last = nil // a late answer: the hold stays as Renew left it; read the Lease next time
		return
	}
	h.last, h.renewedAt, h.held = l, sent, true
}

// forget drops the written copy, so the next attempt reads the Lease.
func (h *Holder) forget() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = nil
}

// Release ends the hold: Valid turns false at once, then, if the Lease
// still names this identity, it is written with an empty holder and a
// one-second duration, which observers count as expired at once. It
// retries on conflict until ctx ends. It reports whether it wrote the
// release: false, with a nil error, when the Lease does not exist or names
// another holder. Stop every fenced write before calling it.
func (h *Holder) Release(ctx context.Context) (bool, error) {
	h.mu.Lock()
	h.held = false
	cur := h.last
	h.last = nil
	h.mu.Unlock()
	for {
		if cur == nil {
			l, err := h.cfg.API.Get(ctx, h.cfg.Namespace, h.cfg.Name)
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, fmt.Errorf("release lease %s: get: %w", h.Key(), err)
			}
			cur = l
		}
		old := RecordOf(cur.Spec)
		if old.Holder != h.cfg.Identity {
			return false, nil
		}
		now := h.cfg.Clock.Now()
		next := cur.DeepCopy()
		next.Spec = Record{Duration: time.Second, AcquireTime: now, RenewTime: now, Transitions: old.Transitions}.Spec()
		_, err := h.cfg.API.Update(ctx, next)
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsConflict(err) && ctx.Err() == nil:
			cur = nil
		default:
			return false, fmt.Errorf("release lease %s: update: %w", h.Key(), err)
		}
	}
}
