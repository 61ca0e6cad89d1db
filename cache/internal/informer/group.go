package informer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubeloop/kubeloop/cache/internal/health"
)

// ErrRemoved is returned by WaitSynced for a group stopped meanwhile.
var ErrRemoved = errors.New("cache: informer removed")

// NS is the informer of one namespace ("" for all) and the health of its
// list-watch.
type NS struct {
	Namespace string
	Informer  *Informer
	Health    *health.Health
}

// Group is the informers of one kind and shape: one cluster-wide, or one
// per watched namespace, started and stopped together.
type Group struct {
	description string
	log         logr.Logger
	all         []*NS
	byNS        map[string]*NS

	mu      sync.Mutex
	cancel  context.CancelFunc // set when started
	removed bool
	done    chan struct{} // closed when every informer has returned (or on removal before start)
}

// NewGroup returns an empty group; description names the kind in errors
// and client-go's logs, log receives the informers' logs.
func NewGroup(description string, log logr.Logger) *Group {
	return &Group{description: description, log: log, byNS: map[string]*NS{}, done: make(chan struct{})}
}

// Add adds the informer of namespace ns ("" for all) that p describes;
// p.Health, which must be set, is the health the group reports for it.
// Add is called before Start.
func (g *Group) Add(ns string, p Pipeline) {
	n := &NS{Namespace: ns, Informer: New(p), Health: p.Health}
	g.all = append(g.all, n)
	g.byNS[ns] = n
}

// All returns the informers, in the order added.
func (g *Group) All() []*NS { return g.all }

// For returns the informer of namespace ns.
func (g *Group) For(ns string) (*NS, bool) {
	n, ok := g.byNS[ns]
	return n, ok
}

// Done is closed when every informer has returned, or on a Stop before
// Start.
func (g *Group) Done() <-chan struct{} { return g.done }

// Start runs every informer under parent; wg tracks the goroutines. It
// does nothing after Stop or a first Start.
func (g *Group) Start(parent context.Context, wg *sync.WaitGroup) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.removed || g.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(klog.NewContext(parent, g.log))
	g.cancel = cancel
	if len(g.all) == 0 {
		close(g.done)
		return
	}
	// The last informer to return closes done: no goroutine waits for
	// them (a fleet's idle cluster runs one goroutine less per kind;
	// bench/multicluster BenchmarkEngage, goroutines/cluster).
	var running atomic.Int32
	running.Store(int32(len(g.all)))
	for _, n := range g.all {
		wg.Go(func() {
			n.Informer.RunWithContext(ctx)
			if running.Add(-1) == 0 {
				close(g.done)
			}
		})
	}
}

// Stop stops the informers and waits for them to return, or for ctx.
func (g *Group) Stop(ctx context.Context) error {
	g.mu.Lock()
	if g.removed {
		g.mu.Unlock()
		return nil
	}
	g.removed = true
	cancel := g.cancel
	if cancel == nil {
		close(g.done)
	}
	g.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-g.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cache: stop informer of %s: %w", g.description, ctx.Err())
	}
}

// WaitSynced waits until every informer has synced. It returns ErrRemoved
// if the group stops first, and ctx's error, with the latest list-watch
// failure, if ctx ends first.
func (g *Group) WaitSynced(ctx context.Context) error {
	for _, n := range g.all {
		synced := n.Informer.HasSyncedChecker().Done()
		select {
		case <-synced:
			continue
		default:
		}
		select {
		case <-synced:
		case <-g.done:
			return ErrRemoved
		case <-ctx.Done():
			if herr := n.Health.Err(); herr != nil {
				return fmt.Errorf("%w (last list or watch error: %w)", ctx.Err(), herr)
			}
			return ctx.Err()
		}
	}
	return nil
}

// AddIndexers adds indexers to every informer.
func (g *Group) AddIndexers(indexers toolscache.Indexers) error {
	for _, n := range g.all {
		if err := n.Informer.AddIndexers(indexers); err != nil {
			return err
		}
	}
	return nil
}

// Multi returns a Multi over the informers, done when the group is.
func (g *Group) Multi() *Multi {
	infs := make([]*Informer, len(g.all))
	for i, n := range g.all {
		infs[i] = n.Informer
	}
	return &Multi{informers: infs, done: g.done}
}
