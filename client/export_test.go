package client

// NewCachedForTest wraps any Client (the fake one in tests) with a cache
// reader, as New does for the live client.
func NewCachedForTest(live Client, opts CacheOptions) (Client, error) { return newCached(live, opts) }

// TrackedWrites returns how many writes the cached client remembers.
func TrackedWrites(c Client) int { return c.(*cachedClient).writes.size() }
