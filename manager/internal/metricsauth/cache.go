package metricsauth

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"sync"
	"time"
)

// authKey is the sha256 digest a review's answer is cached under: of the
// bearer token for a TokenReview, of the user, verb and path for a
// SubjectAccessReview. The token itself is never kept.
type authKey [sha256.Size]byte

// keyWriter builds an authKey from length-prefixed strings, so that
// ("ab", "c") and ("a", "bc") differ.
type keyWriter struct{ h hash.Hash }

func newKeyWriter() keyWriter { return keyWriter{h: sha256.New()} }

func (w keyWriter) string(s string) keyWriter {
	w.int(len(s))
	w.h.Write([]byte(s)) // a hash.Hash never fails to write
	return w
}

func (w keyWriter) int(n int) keyWriter {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	w.h.Write(b[:])
	return w
}

func (w keyWriter) sum() authKey {
	var k authKey
	w.h.Sum(k[:0])
	return k
}

// authLRU is a bounded least-recently-used cache whose entries expire. It
// is not safe for concurrent use: reviewCache holds its lock around it.
// Expired entries are dropped when looked up or when they reach the back
// of the list; the cache never holds more than size entries.
type authLRU[V any] struct {
	size  int
	order *list.List // of *authEntry[V], most recently used first
	items map[authKey]*list.Element
}

type authEntry[V any] struct {
	key     authKey
	val     V
	expires time.Time
}

func newAuthLRU[V any](size int) *authLRU[V] {
	return &authLRU[V]{size: size, order: list.New(), items: make(map[authKey]*list.Element)}
}

// get returns the unexpired value under k and marks it recently used.
func (c *authLRU[V]) get(k authKey, now time.Time) (V, bool) {
	el, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	e := el.Value.(*authEntry[V])
	if !now.Before(e.expires) {
		c.remove(el)
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return e.val, true
}

// add stores v under k until expires, evicting the least recently used
// entry when the cache is full.
func (c *authLRU[V]) add(k authKey, v V, expires time.Time) {
	if el, ok := c.items[k]; ok {
		e := el.Value.(*authEntry[V])
		e.val, e.expires = v, expires
		c.order.MoveToFront(el)
		return
	}
	for c.order.Len() >= c.size {
		c.remove(c.order.Back())
	}
	c.items[k] = c.order.PushFront(&authEntry[V]{key: k, val: v, expires: expires})
}

func (c *authLRU[V]) remove(el *list.Element) {
	delete(c.items, el.Value.(*authEntry[V]).key)
	c.order.Remove(el)
}

func (c *authLRU[V]) len() int { return c.order.Len() }

// reviewCache caches the answers of one kind of review: positive answers
// for posTTL, negative ones for negTTL (a TTL of zero or less caches
// nothing), each kind in its own LRU of at most size entries, so that a
// flood of negative answers (garbage tokens) cannot evict positive ones.
// Concurrent misses for one key share one review. Errors are never cached.
type reviewCache[V any] struct {
	posTTL, negTTL time.Duration

	mu    sync.Mutex
	pos   *authLRU[V]
	neg   *authLRU[V]
	calls map[authKey]*reviewCall[V] // reviews under way
}

type reviewCall[V any] struct {
	done chan struct{} // closed when val, ok and err are set
	val  V
	ok   bool
	err  error
}

func newReviewCache[V any](size int, posTTL, negTTL time.Duration) *reviewCache[V] {
	return &reviewCache[V]{
		posTTL: posTTL, negTTL: negTTL,
		pos: newAuthLRU[V](size), neg: newAuthLRU[V](size),
		calls: make(map[authKey]*reviewCall[V]),
	}
}

// errReviewPanicked answers callers that waited on a review that panicked.
var errReviewPanicked = errors.New("manager: metrics review panicked") // the manager's word in logs

// do returns the answer under key: a cached one, or review's, which runs
// once for all the callers that miss on key at the same time. ok tells a
// positive answer from a negative one. A caller waiting on another's
// review returns ctx's error when ctx ends first; the caller that runs
// review waits for it (review is expected to bound itself in time).
func (c *reviewCache[V]) do(ctx context.Context, key authKey, review func() (V, bool, error)) (val V, ok bool, err error) {
	c.mu.Lock()
	now := time.Now()
	if v, hit := c.pos.get(key, now); hit {
		c.mu.Unlock()
		return v, true, nil
	}
	if v, hit := c.neg.get(key, now); hit {
		c.mu.Unlock()
		return v, false, nil
	}
	if call, shared := c.calls[key]; shared {
		c.mu.Unlock()
		select {
		case <-call.done:
			return call.val, call.ok, call.err
		case <-ctx.Done():
			var zero V
			return zero, false, ctx.Err()
		}
	}
	call := &reviewCall[V]{done: make(chan struct{}), err: errReviewPanicked}
	c.calls[key] = call
	c.mu.Unlock()

	defer func() {
		c.mu.Lock()
		delete(c.calls, key)
		if call.err == nil {
			switch {
			case call.ok && c.posTTL > 0:
				c.pos.add(key, call.val, time.Now().Add(c.posTTL))
			case !call.ok && c.negTTL > 0:
				c.neg.add(key, call.val, time.Now().Add(c.negTTL))
			}
		}
		c.mu.Unlock()
		close(call.done)
	}()
	v, pos, rerr := review()
	call.val, call.ok, call.err = v, pos, rerr
	return v, pos, rerr
}

// lens returns the number of positive and negative entries held.
func (c *reviewCache[V]) lens() (pos, neg int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pos.len(), c.neg.len()
}
