package client

import (
	"context"

	"github.com/kubeloop/kubeloop/client/internal/fence"
)

// NewCachedForTest wraps any Client (the fake one in tests) with a cache
// reader, as New does for the live client.
func NewCachedForTest(live Client, opts CacheOptions) (Client, error) { return newCached(live, opts) }

// TrackedWrites returns how many writes the cached client remembers.
func TrackedWrites(c Client) int { return c.(*cachedClient).writes.Size() }

// TrackedStates returns the state of each remembered write, for messages.
func TrackedStates(c Client) []string { return c.(*cachedClient).writes.States() }

// FenceWrite is the check every live write makes just before sending.
func FenceWrite(ctx context.Context) (context.Context, func(error) error, error) {
	return fence.Write(ctx)
}
