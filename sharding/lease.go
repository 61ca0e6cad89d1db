package sharding

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
)

// errHeld is returned by tryHold when another holder's Lease is valid.
var errHeld = errors.New("held by another holder")

// lease holds one Lease the way a leader election does: acquire it when
// it is free or expired, renew it every retry period, and count it lost
// when no renewal succeeded for renewDeadline. Shards hold their shard
// Lease with it; the sharder's election uses it too.
type lease struct {
	c                              client.Client
	key                            client.ObjectKey
	holder                         string
	labels                         map[string]string
	duration, renewDeadline, retry time.Duration

	mu        sync.Mutex
	last      *coordinationv1.Lease // as last written or read
	renewedAt time.Time             // start of the last successful write; zero: not held
}

// valid reports whether the Lease is held and was renewed less than
// renewDeadline ago, by the local clock, measured from the start of the
// request that renewed it. The API server's copy stays valid for at least
// duration after that start, so a holder that checks valid stops acting
// at least duration-renewDeadline before anyone may take over.
func (l *lease) valid(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.renewedAt.IsZero() && now.Sub(l.renewedAt) < l.renewDeadline
}

// deadline returns when the current hold stops being valid.
func (l *lease) deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.renewedAt.Add(l.renewDeadline)
}

// tryHold acquires or renews the Lease once. It returns errHeld when
// another holder's Lease has not expired.
func (l *lease) tryHold(ctx context.Context) error {
	start := time.Now()
	l.mu.Lock()
	cur := l.last
	l.mu.Unlock()
	if cur == nil {
		cur = &coordinationv1.Lease{}
		err := l.c.Get(ctx, l.key, cur)
		if apierrors.IsNotFound(err) {
			nl := &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Namespace: l.key.Namespace, Name: l.key.Name, Labels: l.labels},
				Spec:       l.spec(start, start, nil),
			}
			if err := l.c.Create(ctx, nl); err != nil {
				return fmt.Errorf("create lease %s: %w", l.key, err)
			}
			l.stored(nl, start)
			return nil
		}
		if err != nil {
			return fmt.Errorf("get lease %s: %w", l.key, err)
		}
	}
	next := cur.DeepCopy()
	holder := ptr.Deref(cur.Spec.HolderIdentity, "")
	if holder != l.holder {
		if holder != "" && !expired(cur, start) {
			l.forget()
			return fmt.Errorf("lease %s: %w %q", l.key, errHeld, holder)
		}
		transitions := ptr.Deref(cur.Spec.LeaseTransitions, 0) + 1
		next.Spec = l.spec(start, start, &transitions)
	} else {
		acquired := start
		if cur.Spec.AcquireTime != nil {
			acquired = cur.Spec.AcquireTime.Time
		}
		next.Spec = l.spec(acquired, start, cur.Spec.LeaseTransitions)
	}
	if next.Labels == nil {
		next.Labels = map[string]string{}
	}
	for k, v := range l.labels {
		next.Labels[k] = v
	}
	if err := l.c.Update(ctx, next); err != nil {
		l.forget()
		return fmt.Errorf("update lease %s: %w", l.key, err)
	}
	l.stored(next, start)
	return nil
}

func (l *lease) spec(acquired, renewed time.Time, transitions *int32) coordinationv1.LeaseSpec {
	return coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(l.holder),
		LeaseDurationSeconds: ptr.To(int32(l.duration / time.Second)),
		AcquireTime:          &metav1.MicroTime{Time: acquired},
		RenewTime:            &metav1.MicroTime{Time: renewed},
		LeaseTransitions:     transitions,
	}
}

func (l *lease) stored(obj *coordinationv1.Lease, start time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last, l.renewedAt = obj, start
}

// forget drops the cached copy so the next try reads the Lease again.
func (l *lease) forget() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = nil
}

// acquire tries every retry period until the Lease is held or ctx ends.
func (l *lease) acquire(ctx context.Context, onRetry func(error)) error {
	for {
		rctx, cancel := context.WithTimeout(ctx, l.retry)
		err := l.tryHold(rctx)
		cancel()
		if err == nil {
			return nil
		}
		if onRetry != nil && ctx.Err() == nil {
			onRetry(err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(l.retry):
		}
	}
}

// renew renews the Lease every retry period until ctx ends (it returns
// nil) or no renewal succeeded for renewDeadline (it returns an error
// wrapping ErrLeaseLost). No request outlives the deadline.
func (l *lease) renew(ctx context.Context) error {
	t := time.NewTicker(l.retry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		rctx, cancel := context.WithDeadline(ctx, l.deadline())
		err := l.tryHold(rctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && !l.valid(time.Now()) {
			l.mu.Lock()
			l.renewedAt = time.Time{}
			l.mu.Unlock()
			return fmt.Errorf("%w: lease %s not renewed within %s: %w", ErrLeaseLost, l.key, l.renewDeadline, err)
		}
	}
}

// release gives the Lease up (empty holder, one-second duration) if it is
// still held by this holder, so that it counts as gone at once.
func (l *lease) release(ctx context.Context) error {
	l.mu.Lock()
	cur := l.last
	l.renewedAt = time.Time{}
	l.mu.Unlock()
	if cur == nil {
		cur = &coordinationv1.Lease{}
		if err := l.c.Get(ctx, l.key, cur); err != nil {
			return fmt.Errorf("release lease %s: %w", l.key, err)
		}
	}
	if ptr.Deref(cur.Spec.HolderIdentity, "") != l.holder {
		return nil
	}
	next := cur.DeepCopy()
	now := metav1.NowMicro()
	next.Spec.HolderIdentity = ptr.To("")
	next.Spec.LeaseDurationSeconds = ptr.To(int32(1))
	next.Spec.RenewTime = &now
	if err := l.c.Update(ctx, next); err != nil {
		return fmt.Errorf("release lease %s: %w", l.key, err)
	}
	l.forget()
	return nil
}

// expired reports whether l's holder's hold ended by now: no holder, or
// renewTime + duration passed.
func expired(l *coordinationv1.Lease, now time.Time) bool {
	if ptr.Deref(l.Spec.HolderIdentity, "") == "" || l.Spec.RenewTime == nil {
		return true
	}
	d := time.Duration(ptr.Deref(l.Spec.LeaseDurationSeconds, 0)) * time.Second
	return !now.Before(l.Spec.RenewTime.Add(d))
}
