package multicluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/log"
)

// Options configures a Fleet. The zero value is valid: built-in types, the
// default cache and client options, no Provider (clusters are engaged by
// calling Engage), no local cluster.
type Options struct {
	// Provider discovers the fleet's clusters; Start runs it. Nil: Start
	// waits for its context to end, and clusters join only through
	// Engage.
	Provider Provider

	// Scheme maps Go types to kinds in every cluster. Nil: a new scheme
	// with every built-in Kubernetes type.
	Scheme *runtime.Scheme

	// Cache is the template of each cluster's cache options; its Scheme,
	// Mapper, HTTPClient and Logger are always the cluster's own.
	Cache cache.Options

	// Client is the template of each cluster's client options; its
	// Scheme, Mapper, HTTPClient and Cache.Reader are the cluster's own.
	Client client.Options

	// Local is the manager's own cluster, which GetCluster returns for
	// the name "". Nil: GetCluster("") fails.
	Local *Cluster

	// Logger is the fleet's logger; each cluster's lines carry "cluster".
	// Zero: a logger writing through log/slog's default handler.
	Logger logr.Logger

	// Metrics registers the fleet's metrics (kubeloop_multicluster_*).
	// Nil: none.
	Metrics prometheus.Registerer
}

// Fleet runs the clusters a Provider engages. It implements Sink.
// Create it with NewFleet; Start it once.
type Fleet struct {
	opts Options
	log  logr.Logger

	mu        sync.Mutex
	runCtx    context.Context // Start's; nil before Start
	stopped   bool
	clusters  map[string]*engagement
	engagers  []Engager
	indexes   []index
	running   sync.WaitGroup // the engagements' goroutines
	engages   atomic.Int64
	disengage atomic.Int64
}

var _ Sink = (*Fleet)(nil)

// index is one IndexField call, applied to every cluster.
type index struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

// NewFleet returns a fleet with opts.
func NewFleet(opts Options) (*Fleet, error) {
	if opts.Scheme == nil {
		opts.Scheme = runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(opts.Scheme); err != nil {
			return nil, fmt.Errorf("multicluster: scheme: %w", err)
		}
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = log.Default()
	}
	f := &Fleet{opts: opts, log: opts.Logger.WithName("multicluster"), clusters: map[string]*engagement{}}
	if opts.Metrics != nil {
		if err := opts.Metrics.Register(&collector{f: f}); err != nil {
			return nil, fmt.Errorf("multicluster: register metrics: %w", err)
		}
	}
	return f, nil
}

// ErrNotStarted is returned (wrapped) by Engage before Start or after it
// returned.
var ErrNotStarted = errors.New("multicluster: the fleet is not running")

// Start runs the Provider until ctx ends, then disengages every cluster
// and returns once their caches and goroutines have stopped. It returns
// the Provider's error, if any. It needs no leader election: every replica
// keeps its clusters' caches warm; controllers start where they lead.
func (f *Fleet) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f.mu.Lock()
	if f.runCtx != nil || f.stopped {
		f.mu.Unlock()
		return errors.New("multicluster: Fleet.Start called twice")
	}
	f.runCtx = ctx
	f.mu.Unlock()

	var err error
	if f.opts.Provider != nil {
		err = f.opts.Provider.Run(ctx, f)
		if err != nil {
			f.log.Error(err, "Provider stopped")
		}
	}
	<-ctx.Done()
	f.mu.Lock()
	f.stopped = true
	f.runCtx = nil
	f.mu.Unlock()
	cancel() // ends every engagement
	f.running.Wait()
	if err != nil {
		return fmt.Errorf("multicluster: provider: %w", err)
	}
	return nil
}

// NeedLeaderElection returns false: the fleet runs on every replica.
func (f *Fleet) NeedLeaderElection() bool { return false }

// Engage serves cluster name with cfg until ctx ends (Sink): it builds the
// cluster and returns; in the cluster's own goroutine, it then applies the
// fleet's field indexes, engages every controller that watches the fleet
// (their handlers are registered with the cluster's informers before the
// informers start, so the initial list reaches them all) and starts the
// cluster's cache. A cluster that is slow or unreachable delays only
// itself. Engaging an engaged name ends the old engagement first and
// waits for it.
func (f *Fleet) Engage(ctx context.Context, name string, cfg *rest.Config) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if cfg == nil {
		return fmt.Errorf("multicluster: cluster %q: nil rest.Config", name)
	}
	cl, err := buildCluster(name, cfg, &f.opts)
	if err != nil {
		return err
	}
	f.mu.Lock()
	old := f.clusters[name]
	f.mu.Unlock()
	if old != nil {
		old.cancel()
		<-old.done
	}
	f.mu.Lock()
	if f.runCtx == nil {
		f.mu.Unlock()
		return fmt.Errorf("%w: cluster %q not engaged", ErrNotStarted, name)
	}
	if cur := f.clusters[name]; cur != nil { // engaged again meanwhile
		f.mu.Unlock()
		cur.cancel()
		<-cur.done
		return f.Engage(ctx, name, cfg)
	}
	e := newEngagement(f, cl, ctx, f.runCtx)
	f.clusters[name] = e
	indexes := slices.Clone(f.indexes)
	engagers := slices.Clone(f.engagers)
	f.running.Add(1)
	f.mu.Unlock()
	f.engages.Add(1)
	go e.run(indexes, engagers)
	return nil
}

// AddController makes the fleet engage c with every cluster, present and
// future. The manager calls it for each controller that watches the
// fleet (controller.FleetManager).
func (f *Fleet) AddController(c Engager) error {
	if c == nil {
		return errors.New("multicluster: AddController: nil controller")
	}
	f.mu.Lock()
	f.engagers = append(f.engagers, c)
	present := f.engagementsLocked()
	f.mu.Unlock()
	for _, e := range present {
		e.engageLate(c)
	}
	return nil
}

// IndexField adds a field index to obj's kind in every cluster: those
// engaged now, at once (it waits for each, bounded by ctx), and each that
// joins later, before its cache starts. The error names each cluster that
// failed; the index stays registered for future clusters either way.
func (f *Fleet) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	if obj == nil || field == "" || extract == nil {
		return errors.New("multicluster: IndexField needs an object, a field name and an extract function")
	}
	f.mu.Lock()
	f.indexes = append(f.indexes, index{obj: obj, field: field, extract: extract})
	present := f.engagementsLocked()
	f.mu.Unlock()
	errs := make([]error, len(present))
	var wg sync.WaitGroup
	for i, e := range present {
		wg.Go(func() {
			ictx, cancel := context.WithCancel(ctx)
			defer cancel()
			stop := context.AfterFunc(e.ctx, cancel)
			defer stop()
			if err := e.cl.cache.IndexField(ictx, obj, field, extract); err != nil {
				errs[i] = fmt.Errorf("multicluster: cluster %q: %w", e.cl.name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// GetCluster returns the engaged cluster name; "" is the manager's own
// cluster (Options.Local). A cluster that is not engaged gives an error
// wrapping ErrClusterNotFound. The cluster returned may not have synced
// yet: reads through its client wait for their informer.
func (f *Fleet) GetCluster(_ context.Context, name string) (*Cluster, error) {
	if name == "" {
		if f.opts.Local == nil {
			return nil, fmt.Errorf("%w: the fleet has no local cluster", ErrClusterNotFound)
		}
		return f.opts.Local, nil
	}
	f.mu.Lock()
	e := f.clusters[name]
	f.mu.Unlock()
	if e == nil {
		return nil, fmt.Errorf("%w: %q is not engaged", ErrClusterNotFound, name)
	}
	return e.cl, nil
}

// Clusters returns the names of the engaged clusters, sorted.
func (f *Fleet) Clusters() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := make([]string, 0, len(f.clusters))
	for n := range f.clusters {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// engagementsLocked returns the engagements. The caller holds f.mu.
func (f *Fleet) engagementsLocked() []*engagement {
	out := make([]*engagement, 0, len(f.clusters))
	for _, e := range f.clusters {
		out = append(out, e)
	}
	return out
}
