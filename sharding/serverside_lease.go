package sharding

import (
	"context"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/kubeloop/kubeloop/internal/lease"
)

// RangesAnnotation is set, in server-side mode, on each shard Lease to
// the hash segments the shard holds: those it reconciles and those it
// claims (internal/ranges' codec, 39 bytes whatever the object count).
// Another shard starts on a segment only once no live Lease lists it.
const RangesAnnotation = "sharding.kubeloop.dev/ranges"

// annotatingAPI is the shard Lease's API in server-side mode: every write
// of the lease core (acquisition, renewal, release) carries the ranges
// annotation as last published, so publishing costs no write of its own
// and never conflicts with a renewal; it lands at the next renewal
// (within RetryPeriod).
type annotatingAPI struct {
	clientAPI
	mu      sync.Mutex
	want    string // the annotation to write
	wantGen uint64
	wrote   uint64 // the wantGen of the last successful write
	signal  chan struct{}
}

var _ lease.API = (*annotatingAPI)(nil)

func newAnnotatingAPI(c clientAPI, initial string) *annotatingAPI {
	return &annotatingAPI{clientAPI: c, want: initial, signal: make(chan struct{})}
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
	gen := a.stamp(l)
	out, err := a.clientAPI.Create(ctx, l)
	if err == nil {
		a.done(gen)
	}
	return out, err
}

func (a *annotatingAPI) Update(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	gen := a.stamp(l)
	out, err := a.clientAPI.Update(ctx, l)
	if err == nil {
		a.done(gen)
	}
	return out, err
}
