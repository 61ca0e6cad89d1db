package client

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Read-your-own-writes bookkeeping of the cached client.
//
// After each successful write the tracker remembers what the API server
// now holds for that kind, namespace and name, in one of the states below,
// which follow what the server does with the write. A cached Get of a
// remembered object compares what the cache returns with that state. While
// the cache is behind, the Get polls it until it catches up or the timeout
// passes, then reads from the API server. An entry is forgotten as soon as
// a Get sees the cache caught up, and in any case after maxEntryAge, so
// memory stays bounded by the writes of the last minute.
//
// A cache that implements CacheProgress (the cache package's does) also
// says how far it has applied the kind's changes: a cache past the write
// has caught up whatever it holds for the key (the object may since have
// been deleted by someone else), a cache whose informer is failing is not
// waited for at all, and a Get that finds the cache behind sleeps until
// the cache applies its next change of the kind (WaitForVersion) rather
// than for a polling interval. Without CacheProgress the Get polls, from
// firstPoll doubling up to maxPoll.

const (
	defaultRYOWTimeout = 2 * time.Second
	maxEntryAge        = time.Minute
	firstPoll          = 5 * time.Millisecond
	maxPoll            = 100 * time.Millisecond
)

// CacheProgress is what the manager's client asks of its cache, beyond
// Reader, to read its own writes without needless waits. The cache
// package's InformerCache implements it; a Reader that does not is waited
// for by comparing resourceVersions alone.
type CacheProgress interface {
	// ObservedVersion returns the resourceVersion (an etcd revision) up to
	// which the cache has applied every change of obj's kind in namespace
	// ns, and ok false when it cannot say because its informer for them is
	// missing, unsynced or failing.
	ObservedVersion(obj Object, ns string) (rv uint64, ok bool)
	// WaitForVersion blocks until ObservedVersion(obj, ns) is at least rv,
	// and reports whether it got there before ctx ended; false at once
	// where ObservedVersion answers ok false. A read of the client's own
	// write that finds the cache behind waits here, woken by the cache's
	// next change of the kind, instead of polling.
	WaitForVersion(ctx context.Context, obj Object, ns string, rv uint64) bool
	// Holds reports whether the cache would hold obj as it is (kind,
	// namespace, labels and fields in the cache's scope). It answers true
	// where it cannot tell.
	Holds(obj Object) bool
}

// writeState is what the API server holds after a write.
type writeState uint8

const (
	// present: the object exists at rv or later (a create, an update, a
	// patch, or a Delete that left it terminating, held by finalizers or a
	// grace period).
	present writeState = iota
	// outOfScope: the object exists at rv but outside the cache's scope:
	// the cache, once caught up, does not hold it.
	outOfScope
	// gone: the server removed the object with UID uid (a Delete answered
	// with a Status or the deleted object, an update that removed the last
	// finalizer of a terminating object); rv is the last version known.
	gone
	// deleting: a Delete succeeded but its answer did not say whether the
	// object is gone or terminating (a Client other than the live one,
	// such as the fake or an interceptor, an eviction); rv is the version
	// the caller's object had, 0 when unknown.
	deleting
)

func (s writeState) String() string {
	return [...]string{"present", "out of scope", "gone", "deleting"}[s]
}

type writeKey struct {
	gk              schema.GroupKind
	namespace, name string
}

type writeEntry struct {
	state writeState
	rv    uint64 // see writeState; 0 when unknown
	uid   types.UID
	at    time.Time
	seq   uint64
}

// exists reports whether e says the object is on the server.
func (e writeEntry) exists() bool { return e.state == present || e.state == outOfScope }

type writeTracker struct {
	timeout time.Duration

	mu        sync.Mutex
	entries   map[writeKey]writeEntry
	seq       uint64
	lastSweep time.Time
	// n is len(entries), written under mu: a Get of a client that has no
	// write to remember (a controller that only reads, or none in the
	// last minute) checks it without taking mu or hashing the key.
	n atomic.Int64
}

func newWriteTracker(timeout time.Duration) *writeTracker {
	if timeout <= 0 {
		timeout = defaultRYOWTimeout
	}
	return &writeTracker{timeout: timeout, entries: map[writeKey]writeEntry{}}
}

// parseRV reads a resourceVersion as an etcd revision; 0 when it is not one.
func parseRV(rv string) uint64 {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// record remembers e for k. Of two writes racing on one object the one
// with the newer resourceVersion is kept.
func (t *writeTracker) record(k writeKey, e writeEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.entries[k]; ok && old.exists() && old.rv > e.rv {
		if e.exists() && e.rv != 0 {
			return
		}
		if !e.exists() {
			// A delete of what was written: the object existed at old.rv.
			e.rv = old.rv
			if e.uid == "" {
				e.uid = old.uid
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

func (t *writeTracker) lookup(k writeKey) (writeEntry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[k]
	return e, ok
}

func (t *writeTracker) tracked(k writeKey) bool {
	if t.n.Load() == 0 {
		return false
	}
	_, ok := t.lookup(k)
	return ok
}

// forget drops k's entry unless a newer write replaced it.
func (t *writeTracker) forget(k writeKey, seq uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[k]; ok && e.seq == seq {
		delete(t.entries, k)
		t.n.Store(int64(len(t.entries)))
	}
}

// size returns the number of remembered writes.
func (t *writeTracker) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
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
	obj      Object
	observed uint64
	known    bool // observed is set
}

// judge compares what the cache returned with e.
func judge(e writeEntry, o observation) verdict {
	past := func(rv uint64) bool { return o.known && rv != 0 && o.observed >= rv }
	switch e.state {
	case present:
		if e.rv == 0 {
			return incomparable
		}
		if past(e.rv) {
			return caughtUp // whatever the cache holds now is newer than the write
		}
		if o.obj == nil {
			return behind
		}
		seen := parseRV(o.obj.GetResourceVersion())
		if seen == 0 {
			return incomparable // not an etcd revision: read from the server
		}
		if seen >= e.rv {
			return caughtUp
		}
		return behind
	case outOfScope:
		if o.obj == nil || past(e.rv) || (e.rv != 0 && parseRV(o.obj.GetResourceVersion()) >= e.rv) {
			return caughtUp
		}
		return behind
	case gone:
		switch {
		case o.obj == nil:
			return caughtUp
		case e.uid != "" && o.obj.GetUID() != e.uid:
			return caughtUp // a newer object of the same name
		}
		return behind
	case deleting:
		switch {
		case o.obj == nil:
			// NotFound is the truth once the cache has seen the object as
			// it was when deleted; before, it may never have seen it.
			if e.rv == 0 || !o.known || o.observed >= e.rv {
				return caughtUp
			}
			return behind
		case e.uid != "" && o.obj.GetUID() != e.uid:
			return caughtUp
		case o.obj.GetDeletionTimestamp() != nil:
			return caughtUp // the cache saw the delete; finalizers keep it
		}
		return behind
	}
	return incomparable
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// settle waits until what peek returns satisfies k's entry or the timeout
// passes, and reports whether the cache has caught up; when it has not,
// the caller reads from the API server. progress is nil when the cache
// does not report its progress; when it reports that it cannot say (its
// informer is failing), settle returns at once. next, when not nil, blocks
// until the cache's version reaches rv or its context ends; settle then
// waits on it between reads instead of polling. A read error other than
// NotFound is returned at once.
func (t *writeTracker) settle(ctx context.Context, k writeKey, peek func() (Object, error), progress func() (uint64, bool), next func(ctx context.Context, rv uint64) bool) (bool, error) {
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
