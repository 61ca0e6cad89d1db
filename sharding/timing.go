package sharding

import (
	"context"
	"fmt"
	"time"
)

// Time helpers of the ring's loops; they call nothing else of the package.

// moveWindow is how long a judgment "shard S is gone" stays usable by the
// sharder for moving S's objects without a drain: it re-reads S's Lease
// once half of it passed, and every such move must reach the API server
// within moveWindow of the read that judged S gone (the patch's context
// ends then). A shard that rejoins after a loss waits moveWindow after it
// re-acquired its Lease before it admits reconciles, so no move decided
// while it was out can land while it reconciles. It is RenewDeadline.
func (r *Ring) moveWindow() time.Duration { return r.opts.RenewDeadline }

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// nowMillis formats t for the drain label.
func nowMillis(t time.Time) string { return fmt.Sprint(t.UnixMilli()) }
