package cache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubeloop/kubeloop/cache/internal/informer"
	"github.com/kubeloop/kubeloop/cache/internal/intern"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// InformerCache is the Cache that New returns: one set of informers per
// kind and object shape, started by Start. Beyond Cache it reports what it
// holds (Sizes), how far it has caught up (ObservedVersion, Holds) and how
// many informers reads started (LazyInformerStarts).
type InformerCache struct {
	opts   Options
	byGVK  map[schema.GroupVersionKind]ByObject
	mapper meta.RESTMapper
	lw     listWatchFactory
	intern *intern.Interner
	log    logr.Logger

	mu      sync.Mutex
	entries map[kindKey]*entry
	state   atomic.Uint32 // a runState; written under mu
	launch  func(*entry)  // set by Start; starts an entry under Start's context
	running sync.WaitGroup
	started chan struct{} // closed by Start

	lazyStarts atomic.Int64

	// Read fast paths: the kind of each Go type, and the synced entry of
	// each typed kind (dropped whenever an entry is removed).
	gvkByType   sync.Map // reflect.Type -> schema.GroupVersionKind
	readyByType readyTable
}

type runState uint8

const (
	notStarted runState = iota
	running
	stopped
)

var (
	_ Cache         = (*InformerCache)(nil)
	_ client.Reader = (*InformerCache)(nil)
	_ Informer      = (*informer.Informer)(nil)
	_ Informer      = (*informer.Multi)(nil)
)

// New returns a cache of the cluster cfg points at. Nothing is listed or
// watched until Start; informers are created by GetInformer, IndexField
// and (unless ReaderFailOnMissingInformer) by the first read of a kind.
func New(cfg *rest.Config, opts Options) (*InformerCache, error) {
	if cfg == nil {
		return nil, errors.New("cache: rest.Config is nil")
	}
	opts = opts.defaulted()
	if opts.HTTPClient == nil {
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nil, fmt.Errorf("cache: HTTP client: %w", err)
		}
		opts.HTTPClient = hc
	}
	if opts.Mapper == nil {
		m, err := apiutil.NewDynamicRESTMapper(cfg, opts.HTTPClient)
		if err != nil {
			return nil, fmt.Errorf("cache: REST mapper: %w", err)
		}
		opts.Mapper = m
	}
	lw := &restListWatchFactory{cfg: rest.CopyConfig(cfg), httpClient: opts.HTTPClient, scheme: opts.Scheme,
		codecs: serializer.NewCodecFactory(opts.Scheme)}
	return newCache(opts, lw)
}

// newCache builds a cache over any list-watch factory; tests use fakes.
func newCache(opts Options, lw listWatchFactory) (*InformerCache, error) {
	opts = opts.defaulted()
	if opts.Mapper == nil {
		return nil, errors.New("cache: no REST mapper")
	}
	byGVK, err := opts.resolveByObject()
	if err != nil {
		return nil, err
	}
	return &InformerCache{
		opts:    opts,
		byGVK:   byGVK,
		mapper:  opts.Mapper,
		lw:      lw,
		intern:  intern.New(),
		log:     opts.Logger.WithName("cache"),
		entries: make(map[kindKey]*entry),
		started: make(chan struct{}),
	}, nil
}

// LazyInformerStarts returns how many informers reads have started for
// kinds nobody asked the cache to watch. A number above zero in production
// usually means a missing GetInformer (or a client read that should have
// gone to the API server).
func (c *InformerCache) LazyInformerStarts() int64 { return c.lazyStarts.Load() }

// Start runs every informer, and every informer added later, until ctx
// ends. It returns after all of them have stopped.
func (c *InformerCache) Start(ctx context.Context) error {
	c.mu.Lock()
	if runState(c.state.Load()) != notStarted {
		c.mu.Unlock()
		return errors.New("cache: Start called twice")
	}
	runCtx, cancel := context.WithCancel(klog.NewContext(ctx, c.log))
	defer cancel()
	c.state.Store(uint32(running))
	c.launch = func(e *entry) { e.group.Start(runCtx, &c.running) }
	for _, e := range c.entries {
		c.launch(e)
	}
	close(c.started)
	c.mu.Unlock()

	<-ctx.Done()

	c.mu.Lock()
	c.state.Store(uint32(stopped))
	c.launch = nil
	c.mu.Unlock()
	cancel()
	c.running.Wait()
	return nil
}

// WaitForCacheSync waits until Start has been called and every informer
// created so far has synced, and reports whether that happened before ctx
// ended. An informer that
// cannot list (RBAC forbidden, kind not served) never syncs: the call then
// returns false when ctx ends, and Healthy says why.
func (c *InformerCache) WaitForCacheSync(ctx context.Context) bool {
	select {
	case <-c.started:
	case <-ctx.Done():
		return false
	}
	c.mu.Lock()
	entries := make([]*entry, 0, len(c.entries))
	for _, e := range c.entries {
		entries = append(entries, e)
	}
	c.mu.Unlock()
	for _, e := range entries {
		if err := e.group.WaitSynced(ctx); err != nil && !errors.Is(err, informer.ErrRemoved) {
			return false
		}
	}
	return true
}

// Healthy returns nil when every informer's list-watch works, else one
// error per failing kind (and namespace) with its cause, joined. An
// informer fails while its last list or watch call failed, and while three
// or more of its requests in a row got no answer (connections closed or
// reset on arrival), which client-go would otherwise retry in silence;
// see the package doc for the bounds.
func (c *InformerCache) Healthy() error {
	c.mu.Lock()
	entries := make([]*entry, 0, len(c.entries))
	for _, e := range c.entries {
		entries = append(entries, e)
	}
	c.mu.Unlock()
	slices.SortFunc(entries, func(a, b *entry) int { return compareKeys(a.key, b.key) })
	var errs []error
	for _, e := range entries {
		errs = append(errs, e.healthErrors()...)
	}
	return errors.Join(errs...)
}

// GetInformer returns the informer of obj's kind and shape, creating it
// (and starting it, when the cache has started) if needed. It does not wait
// for the informer to sync.
func (c *InformerCache) GetInformer(ctx context.Context, obj client.Object) (Informer, error) {
	key, err := c.keyFor(obj)
	if err != nil {
		return nil, fmt.Errorf("cache: informer of %T: %w", obj, err)
	}
	e, _, err := c.getOrCreate(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("cache: informer of %s: %w", kinds.String(key.gvk), err)
	}
	return e.informer(), nil
}

// GetInformerForKind returns the typed informer of gvk (the shape of
// scheme's Go type; unregistered kinds get the unstructured shape).
func (c *InformerCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind) (Informer, error) {
	key := kindKey{shape: shapeTyped, gvk: gvk}
	if !c.opts.Scheme.Recognizes(gvk) {
		key.shape = shapeUnstructured
	}
	e, _, err := c.getOrCreate(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("cache: informer of %s: %w", kinds.String(gvk), err)
	}
	return e.informer(), nil
}

// RemoveInformer stops the informer of obj's kind and shape, waits for its
// goroutines to exit and drops its store. Removing an absent informer is
// not an error.
func (c *InformerCache) RemoveInformer(ctx context.Context, obj client.Object) error {
	key, err := c.keyFor(obj)
	if err != nil {
		return fmt.Errorf("cache: remove informer of %T: %w", obj, err)
	}
	c.mu.Lock()
	e := c.entries[key]
	delete(c.entries, key)
	c.readyByType.Clear()
	c.mu.Unlock()
	if e == nil {
		return nil
	}
	return e.group.Stop(ctx)
}

// IndexField adds an index named field to obj's kind: List with
// MatchingFields{field: v} then returns the objects whose extract result
// contains v. Each value is indexed cluster-wide and per namespace, so
// MatchingFields with InNamespace is one lookup. It creates the kind's
// informer if needed.
func (c *InformerCache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	if field == "" || extract == nil {
		return errors.New("cache: IndexField needs a field name and an extract function")
	}
	key, err := c.keyFor(obj)
	if err != nil {
		return fmt.Errorf("cache: index %q on %T: %w", field, obj, err)
	}
	e, _, err := c.getOrCreate(ctx, key)
	if err == nil {
		err = e.addFieldIndex(field, extract)
	}
	if err != nil {
		return fmt.Errorf("cache: index %q on %s: %w", field, kinds.String(key.gvk), err)
	}
	return nil
}

// keyFor returns the kind and shape of obj.
func (c *InformerCache) keyFor(obj runtime.Object) (kindKey, error) {
	sh := shapeOf(obj)
	if sh == shapeTyped {
		if gvk, ok := c.gvkByType.Load(reflect.TypeOf(obj)); ok {
			return kindKey{shape: sh, gvk: gvk.(schema.GroupVersionKind)}, nil
		}
	}
	gvk, err := apiutil.GVKForObject(obj, c.opts.Scheme)
	if err != nil {
		return kindKey{}, err
	}
	if sh == shapeTyped {
		if kinds, _, err := c.opts.Scheme.ObjectKinds(obj); err == nil && len(kinds) == 1 {
			c.gvkByType.Store(reflect.TypeOf(obj), gvk)
		}
	}
	return kindKey{shape: sh, gvk: gvk}, nil
}

// getOrCreate returns the entry of key, creating and (when running)
// starting it. created reports whether this call created it.
func (c *InformerCache) getOrCreate(ctx context.Context, key kindKey) (e *entry, created bool, err error) {
	c.mu.Lock()
	e = c.entries[key]
	c.mu.Unlock()
	if e != nil {
		return e, false, nil
	}
	// Map outside the lock: it may run discovery.
	mapping, err := c.restMapping(ctx, key.gvk)
	if err != nil {
		return nil, false, err // names the kind
	}
	kc := c.configFor(key.gvk)
	ne, err := newEntry(key, mapping, kc, c.lw, transformFor(c.intern, key, kc), c.opts.Scheme, c.log)
	if err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e = c.entries[key]; e != nil {
		return e, false, nil
	}
	c.entries[key] = ne
	if c.launch != nil {
		c.launch(ne)
	}
	return ne, true, nil
}

// restMapping maps gvk to its resource, giving up when ctx ends. A
// RESTMapper takes no context, and the first question about a group runs
// discovery, so the mapper runs on a goroutine of its own: a caller whose
// context ends returns at once, and the discovery request it started
// finishes in the background (within the HTTP client's timeout), its
// answer kept by the mapper for the next caller.
func (c *InformerCache) restMapping(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		mapping *meta.RESTMapping
		err     error
	}
	done := make(chan result, 1)
	go func() {
		m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		done <- result{m, err}
	}()
	select {
	case r := <-done:
		return r.mapping, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("map the kind to a resource: %w", ctx.Err())
	}
}

// entryForRead returns the synced entry of key for a Get or List,
// starting it lazily (or failing in strict mode).
func (c *InformerCache) entryForRead(ctx context.Context, key kindKey) (*entry, error) {
	c.mu.Lock()
	state := runState(c.state.Load())
	e := c.entries[key]
	c.mu.Unlock()
	switch {
	case state == notStarted:
		return nil, ErrCacheNotStarted
	case state == stopped:
		return nil, ErrCacheStopped
	case e == nil && c.opts.ReaderFailOnMissingInformer:
		return nil, notCachedError(key)
	}
	if e == nil {
		var created bool
		var err error
		if e, created, err = c.getOrCreate(ctx, key); err != nil {
			return nil, err
		}
		if created {
			c.lazyStarts.Add(1)
			c.log.Info("started an informer for a read of a kind nobody watches; "+
				"call GetInformer at setup, or set ReaderFailOnMissingInformer to make this an error",
				"kind", kinds.String(key.gvk), "shape", key.shape.String())
		}
	}
	if err := e.group.WaitSynced(ctx); err != nil {
		return nil, fmt.Errorf("cache: informer not synced: %w", err)
	}
	return e, nil
}
