package sharding

import (
	"context"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/kubeloop/kubeloop/internal/lease"
	"github.com/kubeloop/kubeloop/sharding/internal/membership"
)

// RangesAnnotation is set, in server-side mode, on each shard Lease to
// the hash segments the shard holds: those it reconciles and those it
// claims (internal/ranges' codec, 39 bytes whatever the object count).
// Another shard starts on a segment only once no live Lease lists it.
const RangesAnnotation = "sharding.kubeloop.dev/ranges"

// annotatingAPI is the shard Lease's API in server-side mode: every write
// of the lease core (acquisition, renewal, release) carries the ranges
// annotation as last published, and writeNow writes a new annotation at
// once, on the Lease as last written, changing nothing else (its spec,
// so its record and every observer's judgment of it, stays). Writes are
// serialized, and a renewal decided on the Lease as the lease core last
// wrote it is sent with the resourceVersion of the annotation writes made
// since (only this API wrote in between), so they never make a renewal
// conflict.
type annotatingAPI struct {
	membership.ClientAPI
	write sync.Mutex // serializes the writes; held across each request

	mu      sync.Mutex
	want    string // the annotation to write
	wantGen uint64
	wrote   uint64 // the wantGen of the last successful write
	signal  chan struct{}
	last    *coordinationv1.Lease // as last written through this API; nil: unknown
	coreRV  string                // the lease core's last written resourceVersion, while writeNow wrote after it
}

var _ lease.API = (*annotatingAPI)(nil)

func newAnnotatingAPI(c membership.ClientAPI, initial string) *annotatingAPI {
	return &annotatingAPI{ClientAPI: c, want: initial, signal: make(chan struct{})}
}

// writeNow writes the annotation of generation gen (or later) on the
// Lease as last written at once; false when there is no such copy or the
// write failed (the next renewal carries it then).
func (a *annotatingAPI) writeNow(ctx context.Context) bool {
	a.write.Lock()
	defer a.write.Unlock()
	a.mu.Lock()
	if a.last == nil || a.wrote >= a.wantGen {
		a.mu.Unlock()
		return a.last != nil
	}
	next := a.last.DeepCopy()
	a.mu.Unlock()
	gen := a.stamp(next)
	prev := next.ResourceVersion
	out, err := a.ClientAPI.Update(ctx, next)
	if err != nil {
		return false
	}
	a.mu.Lock()
	if a.coreRV == "" {
		a.coreRV = prev
	}
	a.last = out.DeepCopy()
	a.mu.Unlock()
	a.done(gen)
	return true
}

// publish sets the annotation of the next writes and returns its
// generation, for written.
func (a *annotatingAPI) publish(value string) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if value != a.want {
		a.want = value
		a.wantGen++
	}
	return a.wantGen
}

// written waits until a write with generation gen (or a later one)
// succeeded, or ctx ends (false).
func (a *annotatingAPI) written(ctx context.Context, gen uint64) bool {
	for {
		a.mu.Lock()
		done, ch := a.wrote >= gen, a.signal
		a.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-ch:
		}
	}
}

func (a *annotatingAPI) stamp(l *coordinationv1.Lease) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[RangesAnnotation] = a.want
	return a.wantGen
}

func (a *annotatingAPI) done(gen uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if gen > a.wrote {
		a.wrote = gen
		close(a.signal)
		a.signal = make(chan struct{})
	}
}

func (a *annotatingAPI) Create(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	a.write.Lock()
	defer a.write.Unlock()
	gen := a.stamp(l)
	out, err := a.ClientAPI.Create(ctx, l)
	if err == nil {
		a.coreWrote(out)
		a.done(gen)
	}
	return out, err
}

func (a *annotatingAPI) Update(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	a.write.Lock()
	defer a.write.Unlock()
	gen := a.stamp(l)
	a.mu.Lock()
	if a.coreRV != "" && l.ResourceVersion == a.coreRV && a.last != nil {
		// Decided on the core's own last write; only writeNow wrote since.
		l.ResourceVersion = a.last.ResourceVersion
	}
	a.mu.Unlock()
	out, err := a.ClientAPI.Update(ctx, l)
	if err == nil {
		a.coreWrote(out)
		a.done(gen)
	}
	return out, err
}

// coreWrote records a successful write of the lease core.
func (a *annotatingAPI) coreWrote(l *coordinationv1.Lease) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last, a.coreRV = l.DeepCopy(), ""
}
