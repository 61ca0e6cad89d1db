package client

import (
	"context"
	"strconv"
)

// NewCachedForTest wraps any Client (the fake one in tests) with a cache
// reader, as New does for the live client.
func NewCachedForTest(live Client, opts CacheOptions) (Client, error) { return newCached(live, opts) }

// TrackedWrites returns how many writes the cached client remembers.
func TrackedWrites(c Client) int { return c.(*cachedClient).writes.size() }

// TrackedStates returns the state of each remembered write, for messages.
func TrackedStates(c Client) []string {
	t := c.(*cachedClient).writes
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for k, e := range t.entries {
		out = append(out, k.namespace+"/"+k.name+": "+e.state.String()+" rv "+strconv.FormatUint(e.rv, 10)+" uid "+string(e.uid))
	}
	return out
}

// FenceWrite is the check every live write makes just before sending.
func FenceWrite(ctx context.Context) (context.Context, func(error) error, error) {
	return fenceWrite(ctx)
}
