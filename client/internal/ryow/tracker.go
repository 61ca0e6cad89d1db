// Package ryow is the bookkeeping behind the cached client's
// read-your-own-writes guarantee: a Tracker of the client's recent writes,
// and a Router that says which reads go to the cache and under which key a
// write is remembered.
//
// After each successful write the tracker remembers what the API server
// now holds for that kind, namespace and name, in one of the States, which
// follow what the server does with the write. A cached Get of a
// remembered object compares what the cache returns with that state
// (Settle). While the cache is behind, the Get polls it until it catches
// up or the timeout passes, then reads from the API server.
//
// Guarantees:
//   - An entry is forgotten as soon as a Get sees the cache caught up, and
//     in any case after a minute, so memory stays bounded by the writes of
//     the last minute.
//   - Of two writes racing on one object the one with the newer
//     resourceVersion is kept.
//   - A cache that reports its progress (client.CacheProgress) and is past
//     the write has caught up whatever it holds for the key; one whose
//     informer is failing is not waited for at all; one that is behind is
//     waited on until it applies its next change of the kind, not polled.
//     Without progress Settle polls, from 5 ms doubling up to 100 ms.
//   - Resource versions are compared as integers; one that is not an
//     integer makes Settle give up at once (read from the API server).
//   - A Tracker with no entry answers Tracked without a lock.
package ryow

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

const (
	// DefaultTimeout is how long Settle waits when New is given 0.
	DefaultTimeout = 2 * time.Second
	maxEntryAge    = time.Minute
	firstPoll      = 5 * time.Millisecond
	maxPoll        = 100 * time.Millisecond
)

// State is what the API server holds after a write.
type State uint8

const (
	// Present: the object exists at rv or later (a create, an update, a
	// patch, or a Delete that left it terminating, held by finalizers or a
	// grace period).
	Present State = iota
	// OutOfScope: the object exists at rv but outside the cache's scope:
	// the cache, once caught up, does not hold it.
	OutOfScope
	// Gone: the server removed the object with UID uid (a Delete answered
	// with a Status or the deleted object, an update that removed the last
	// finalizer of a terminating object); rv is the last version known.
	Gone
	// Deleting: a Delete succeeded but its answer did not say whether the
	// object is gone or terminating (a Client other than the live one,
	// such as the fake or an interceptor, an eviction); rv is the version
	// the caller's object had, 0 when unknown.
	Deleting
)

func (s State) String() string {
	return [...]string{"present", "out of scope", "gone", "deleting"}[s]
}

// Key names a remembered write: the object's group, kind, namespace
// ("" for a cluster-scoped kind) and name.
type Key struct {
	GK              schema.GroupKind
	Namespace, Name string
}

// Entry is what the API server holds after a write.
type Entry struct {
	State State
	RV    uint64 // see State; 0 when unknown
	UID   types.UID
	at    time.Time
	seq   uint64
}

// exists reports whether e says the object is on the server.
func (e Entry) exists() bool { return e.State == Present || e.State == OutOfScope }

// Tracker remembers a client's recent writes. It is safe for concurrent use.
type Tracker struct {
	timeout time.Duration

	mu        sync.Mutex
	entries   map[Key]Entry
	seq       uint64
	lastSweep time.Time
	// n is len(entries), written under mu: a Get of a client that has no
	// write to remember (a controller that only reads, or none in the
	// last minute) checks it without taking mu or hashing the key.
	n atomic.Int64
}

// New returns a Tracker whose Settle waits up to timeout (0: DefaultTimeout).
func New(timeout time.Duration) *Tracker {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Tracker{timeout: timeout, entries: map[Key]Entry{}}
}

// ParseRV reads a resourceVersion as an etcd revision; 0 when it is not one.
func ParseRV(rv string) uint64 {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// Record remembers e for k. Of two writes racing on one object the one
// with the newer resourceVersion is kept.
func (t *Tracker) Record(k Key, e Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.entries[k]; ok && old.exists() && old.RV > e.RV {
		if e.exists() && e.RV != 0 {
			return
		}
		if !e.exists() {
			// A delete of what was written: the object existed at old.RV.
			e.RV = old.RV
			if e.UID == "" {
				e.UID = old.UID
			}
		}
	}
	now := time.Now()
	t.seq++
	e.seq, e.at = t.seq, now
	t.entries[k] = e
	if now.Sub(t.lastSweep) > maxEntryAge/2 {
		t.lastSweep = now
		for key, old := range t.entries {
			if now.Sub(old.at) > maxEntryAge {
				delete(t.entries, key)
			}
		}
	}
	t.n.Store(int64(len(t.entries)))
}

func (t *Tracker) lookup(k Key) (Entry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[k]
	return e, ok
}

// Tracked reports whether a write of k is remembered.
func (t *Tracker) Tracked(k Key) bool {
	if t.n.Load() == 0 {
		return false
	}
	_, ok := t.lookup(k)
	return ok
}

// forget drops k's entry unless a newer write replaced it.
func (t *Tracker) forget(k Key, seq uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[k]; ok && e.seq == seq {
		delete(t.entries, k)
		t.n.Store(int64(len(t.entries)))
	}
}

// Size returns the number of remembered writes.
func (t *Tracker) Size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}

// States describes every remembered write ("ns/name: state rv N uid U"),
// for test messages.
func (t *Tracker) States() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.entries))
	for k, e := range t.entries {
		out = append(out, k.Namespace+"/"+k.Name+": "+e.State.String()+" rv "+strconv.FormatUint(e.RV, 10)+" uid "+string(e.UID))
	}
	return out
}

type verdict int

const (
	behind verdict = iota
	caughtUp
	incomparable
)

// observation is what a cached read saw: the object (nil for NotFound) and,
// when the cache reports its progress, the version it had applied before
// the read.
type observation struct {
	obj      metav1.Object
	observed uint64
	known    bool // observed is set
}

// judge compares what the cache returned with e.
func judge(e Entry, o observation) verdict {
	past := func(rv uint64) bool { return o.known && rv != 0 && o.observed >= rv }
	switch e.State {
	case Present:
		if e.RV == 0 {
			return incomparable
		}
		if past(e.RV) {
			return caughtUp // whatever the cache holds now is newer than the write
		}
		if o.obj == nil {
			return behind
		}
		seen := ParseRV(o.obj.GetResourceVersion())
		if seen == 0 {
			return incomparable // not an etcd revision: read from the server
		}
		if seen >= e.RV {
			return caughtUp
		}
		return behind
	case OutOfScope:
		if o.obj == nil || past(e.RV) || (e.RV != 0 && ParseRV(o.obj.GetResourceVersion()) >= e.RV) {
			return caughtUp
		}
		return behind
	case Gone:
		switch {
		case o.obj == nil:
			return caughtUp
		case e.UID != "" && o.obj.GetUID() != e.UID:
			return caughtUp // a newer object of the same name
		}
		return behind
	case Deleting:
		switch {
		case o.obj == nil:
			// NotFound is the truth once the cache has seen the object as
			// it was when deleted; before, it may never have seen it.
			if e.RV == 0 || !o.known || o.observed >= e.RV {
				return caughtUp
			}
			return behind
		case e.UID != "" && o.obj.GetUID() != e.UID:
			return caughtUp
		case o.obj.GetDeletionTimestamp() != nil:
			return caughtUp // the cache saw the delete; finalizers keep it
		}
		return behind
	}
	return incomparable
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// Settle waits until what peek returns satisfies k's entry or the timeout
// passes, and reports whether the cache has caught up; when it has not,
// the caller reads from the API server. progress is nil when the cache
// does not report its progress; when it reports that it cannot say (its
// informer is failing), Settle returns at once. next, when not nil, blocks
// until the cache's version reaches rv or its context ends; Settle then
// waits on it between reads instead of polling. A read error other than
// NotFound is returned at once.
func (t *Tracker) Settle(ctx context.Context, k Key, peek func() (metav1.Object, error), progress func() (uint64, bool), next func(ctx context.Context, rv uint64) bool) (bool, error) {
	deadline := time.Now().Add(t.timeout)
	delay := firstPoll
	for {
		e, ok := t.lookup(k)
		if !ok {
			return true, nil // another reader saw the cache catch up
		}
		var o observation
		if progress != nil {
			o.observed, o.known = progress() // before the read: the cache is at least this far
		}
		obj, err := peek()
		if err == nil || isNotFound(err) {
			if progress != nil && !o.known {
				// The read may have started the kind's informer; if it still
				// cannot say, the informer is failing: do not wait for it.
				if o.observed, o.known = progress(); !o.known {
					return false, nil
				}
				obj, err = peek()
			}
		}
		if err != nil && !isNotFound(err) {
			return false, err
		}
		if err == nil {
			o.obj = obj
		}
		switch judge(e, o) {
		case caughtUp:
			t.forget(k, e.seq)
			return true, nil
		case incomparable:
			return false, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil
		}
		if next != nil && o.known {
			// Sleep until the cache applies a change past what it had
			// before this read, or the time is up; then look again.
			wctx, cancel := context.WithTimeout(ctx, left)
			next(wctx, o.observed+1)
			cancel()
			if err := ctx.Err(); err != nil {
				return false, err
			}
			continue
		}
		timer := time.NewTimer(min(delay, left))
		select {
		case <-ctx.Done():
			timer.Stop()
			return false, ctx.Err()
		case <-timer.C:
		}
		delay = min(2*delay, maxPoll)
	}
}
