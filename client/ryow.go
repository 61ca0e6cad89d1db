package client

import (
	"context"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Read-your-own-writes bookkeeping of the cached client.
//
// After each successful write the tracker remembers the resourceVersion the
// API server returned, per kind, namespace and name; after a Delete it
// remembers that the object is gone. A cached Get of a remembered object
// compares what the cache returned with what was written, as unsigned
// integers (etcd revisions). When the cache is behind, the Get polls it
// until it catches up or the timeout passes, then reads from the API
// server. An entry is forgotten as soon as a Get sees the cache caught up,
// and in any case after maxEntryAge, so memory stays bounded by the writes
// of the last minute.

const (
	defaultRYOWTimeout = 2 * time.Second
	maxEntryAge        = time.Minute
	firstPoll          = 5 * time.Millisecond
	maxPoll            = 100 * time.Millisecond
)

type writeKey struct {
	gk              schema.GroupKind
	namespace, name string
}

type writeEntry struct {
	rv      string // resourceVersion written; unused when deleted
	deleted bool
	uid     string // UID of the deleted object; "" when unknown
	at      time.Time
	seq     uint64
}

type writeTracker struct {
	timeout time.Duration

	mu        sync.Mutex
	entries   map[writeKey]writeEntry
	seq       uint64
	lastSweep time.Time
}

func newWriteTracker(timeout time.Duration) *writeTracker {
	if timeout <= 0 {
		timeout = defaultRYOWTimeout
	}
	return &writeTracker{timeout: timeout, entries: map[writeKey]writeEntry{}}
}

// parseRV reads a resourceVersion as an etcd revision.
func parseRV(rv string) (uint64, bool) {
	n, err := strconv.ParseUint(rv, 10, 64)
	return n, err == nil
}

func (t *writeTracker) put(k writeKey, e writeEntry) {
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
}

// wrote remembers that k was written at resourceVersion rv. Of two writes
// racing on one object the newer resourceVersion is kept.
func (t *writeTracker) wrote(k writeKey, rv string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.entries[k]; ok && !old.deleted {
		a, okA := parseRV(old.rv)
		b, okB := parseRV(rv)
		if okA && okB && a > b {
			return
		}
	}
	t.put(k, writeEntry{rv: rv})
}

// deleted remembers that k (with UID uid, when known) was deleted.
func (t *writeTracker) deleted(k writeKey, uid string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.put(k, writeEntry{deleted: true, uid: uid})
}

func (t *writeTracker) lookup(k writeKey) (writeEntry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[k]
	return e, ok
}

func (t *writeTracker) tracked(k writeKey) bool {
	_, ok := t.lookup(k)
	return ok
}

// forget drops k's entry unless a newer write replaced it.
func (t *writeTracker) forget(k writeKey, seq uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[k]; ok && e.seq == seq {
		delete(t.entries, k)
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

// judge compares what the cache returned (obj, or a NotFound err) with e.
func judge(e writeEntry, obj Object, err error) verdict {
	notFound := err != nil
	if e.deleted {
		switch {
		case notFound:
			return caughtUp
		case e.uid != "" && string(obj.GetUID()) != e.uid:
			return caughtUp // a newer object of the same name
		case obj.GetDeletionTimestamp() != nil:
			return caughtUp // the cache saw the delete; finalizers keep it
		}
		return behind
	}
	if notFound {
		return behind
	}
	written, okW := parseRV(e.rv)
	seen, okS := parseRV(obj.GetResourceVersion())
	if !okW || !okS {
		return incomparable
	}
	if seen >= written {
		return caughtUp
	}
	return behind
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// wait reads through read until what it returns satisfies k's entry or the
// timeout passes. It reports whether the last read is good to return; when
// it is not, the caller reads from the API server. A read error other than
// NotFound is returned at once with caughtUp false.
func (t *writeTracker) wait(ctx context.Context, k writeKey, read func() (Object, error)) (bool, error) {
	deadline := time.Now().Add(t.timeout)
	delay := firstPoll
	for {
		obj, err := read()
		if err != nil && !isNotFound(err) {
			return false, err
		}
		e, ok := t.lookup(k)
		if !ok {
			return true, err // another reader saw the cache catch up
		}
		switch judge(e, obj, err) {
		case caughtUp:
			t.forget(k, e.seq)
			return true, err
		case incomparable:
			return false, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, err
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
