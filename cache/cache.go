package cache

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubeloop/kubeloop/cache/internal/backoff"
	"github.com/kubeloop/kubeloop/cache/internal/fieldindex"
	"github.com/kubeloop/kubeloop/cache/internal/informer"
	"github.com/kubeloop/kubeloop/cache/internal/intern"
	"github.com/kubeloop/kubeloop/cache/internal/listwatch"
	"github.com/kubeloop/kubeloop/cache/internal/store"
	"github.com/kubeloop/kubeloop/cache/internal/typemap"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/internal/kinds"
	"github.com/kubeloop/kubeloop/internal/probe"
)

// InformerCache is the Cache that New returns: one set of informers per
// kind and object shape, started by Start. Beyond Cache it reports what it
// holds (Sizes), how far it has caught up (ObservedVersion, Holds) and how
// many informers reads started (LazyInformerStarts).
type InformerCache struct {
	opts   Options
	byGVK  map[schema.GroupVersionKind]ByObject
	mapper meta.RESTMapper
	pipes  pipelines // builds every informer (pipeline.go)
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
	readyByType typemap.Map[*entry]
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
	// How far the cache has caught up, for the manager's client: it reads
	// its own writes by comparing the resourceVersion it wrote with the one
	// up to which an informer has applied every change.
	_ client.CacheProgress = (*InformerCache)(nil)
	_ Informer             = (*informer.Informer)(nil)
	_ Informer             = (*informer.Multi)(nil)
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
	f := listwatch.NewFactory(cfg, opts.HTTPClient, opts.Scheme)
	return newCache(opts, f, f.Prober())
}

// newCache builds a cache over any list-watch factory (tests use fakes),
// whose informers' waits after failures prober releases early (nil:
// none).
func newCache(opts Options, lw listWatchFactory, prober *backoff.Prober) (*InformerCache, error) {
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
		pipes:   pipelines{lw: lw, prober: prober, intern: intern.New(), scheme: opts.Scheme},
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
	stopped, err := c.Launch(ctx)
	if err != nil {
		return err
	}
	<-stopped
	return nil
}

// Launch is Start that returns at once: the informers run until ctx ends,
// and the channel returned is closed once all of them have stopped. No
// goroutine waits for ctx meanwhile, so a fleet's idle cluster costs only
// its informers' goroutines (bench/multicluster BenchmarkEngage,
// goroutines/cluster). It fails as Start does when the cache was started
// before.
func (c *InformerCache) Launch(ctx context.Context) (<-chan struct{}, error) {
	c.mu.Lock()
	if runState(c.state.Load()) != notStarted {
		c.mu.Unlock()
		return nil, errors.New("cache: Start called twice")
	}
	runCtx, cancel := context.WithCancel(klog.NewContext(ctx, c.log))
	c.state.Store(uint32(running))
	c.launch = func(e *entry) { e.group.Start(runCtx, &c.running) }
	for _, e := range c.entries {
		c.launch(e)
	}
	close(c.started)
	c.mu.Unlock()

	done := make(chan struct{})
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.state.Store(uint32(stopped))
		c.launch = nil
		c.mu.Unlock()
		cancel()
		c.running.Wait()
		close(done)
	})
	return done, nil
}

// WaitForCacheSync waits until Start has been called and every informer
// created so far has synced, and reports whether that happened before ctx
// ended. An informer that
// cannot list (RBAC forbidden, kind not served) never syncs: the call then
// returns false when ctx ends, and Healthy says why.
func (c *InformerCache) WaitForCacheSync(ctx context.Context) bool {
	select {
	case <-c.started: // a cache already started does not race ctx
	default:
		select {
		case <-c.started:
		case <-ctx.Done():
			return false
		}
	}
	for _, e := range c.snapshot() {
		if err := e.group.WaitSynced(ctx); err != nil && !errors.Is(err, informer.ErrRemoved) {
			return false
		}
	}
	return true
}

// Healthy returns nil when every informer's list-watch works, else one
// error per failing kind (and namespace) with its cause, joined. An
// informer fails while its last list or watch call failed, while three
// or more of its requests in a row got no answer (connections closed or
// reset on arrival), which client-go would otherwise retry in silence,
// and while one of its requests has waited 30 s or more for an answer (a
// server or proxy that holds the connection and never answers); see the
// package doc for the bounds.
func (c *InformerCache) Healthy() error {
	entries := c.snapshot()
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

// snapshot returns the entries.
func (c *InformerCache) snapshot() []*entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	entries := make([]*entry, 0, len(c.entries))
	for _, e := range c.entries {
		entries = append(entries, e)
	}
	return entries
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
	mapping, err := listwatch.RESTMapping(ctx, c.mapper, key.gvk)
	if err != nil {
		return nil, false, err // names the kind
	}
	ne, err := newEntry(key, mapping, configFor(c.opts, c.byGVK, key.gvk), &c.pipes, c.log)
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

// entryForRead returns the synced entry of key for a Get or List,
// starting it lazily (or failing in strict mode).
func (c *InformerCache) entryForRead(ctx context.Context, key kindKey) (*entry, error) {
	c.mu.Lock()
	state := runState(c.state.Load())
	e := c.entries[key]
	c.mu.Unlock()
	switch {
	case state == notStarted:
		return nil, &ErrCacheNotStarted{}
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

// The Get path. A typed Get of a synced kind costs an atomic load and a
// short scan to find the kind's entry, the store's lookup by namespace and
// name (no key is built; see internal/store), and one reflect.Value.Set (after
// a DeepCopyObject unless the read is no-copy); GetShared skips the Set.
// On a large cache read in random order most of the time goes into CPU
// cache misses on the store's table, the name bytes and, unless the read
// is GetShared, the object itself (bench/cache BenchmarkStoreFloor), not
// into this code.

// Get fills obj with the cached object named by key: a deep copy, or with
// client.UnsafeDisableDeepCopy the cached object's fields themselves (which
// must then not be mutated). The object keeps its resourceVersion and has
// its apiVersion and kind set. A missing object is an apierrors NotFound.
func (c *InformerCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if v := reflect.ValueOf(obj); obj == nil || (v.Kind() == reflect.Pointer && v.IsNil()) {
		// A typed nil pointer would pass the type-keyed fast path below
		// and panic when filled.
		return fmt.Errorf("get %T %s: %w", obj, key, client.ErrNilObject)
	}
	e, item, err := c.lookup(ctx, key, obj)
	if err != nil {
		return err
	}
	probe.Mark(probe.Found)
	deep := !getNoCopy(e.noCopyIn(key.Namespace), opts)
	if e.key.shape == shapeTyped {
		err = fillTyped(obj, item, deep)
	} else {
		err = fill(obj, item, deep)
	}
	if err != nil {
		return e.getError(key, err)
	}
	return nil
}

// GetShared returns the cached object named by key, of obj's kind, itself:
// no copy is made, so it is shared with the cache and every other reader
// and must not be modified. obj only names the kind and is not filled; for
// a typed kind a nil pointer does (client.GetShared passes one). The object
// keeps its resourceVersion and has its apiVersion and kind set. A missing
// object is an apierrors NotFound.
func (c *InformerCache) GetShared(ctx context.Context, key client.ObjectKey, obj client.Object) (client.Object, error) {
	if obj == nil {
		return nil, fmt.Errorf("get %s: %w", key, client.ErrNilObject)
	}
	e, item, err := c.lookup(ctx, key, obj)
	if err != nil {
		return nil, err
	}
	if reflect.TypeOf(item) != reflect.TypeOf(obj) {
		return nil, e.getError(key, fmt.Errorf("cannot share cached %T as %T", item, obj))
	}
	return item.(client.Object), nil
}

// lookup returns the entry of obj's kind and the object it caches under
// key. obj only names the kind: for a typed kind it may be a nil pointer.
// It checks key as the live client does, and its errors read as the live
// client's: "get <kind> <namespace>/<name>: <cause>".
func (c *InformerCache) lookup(ctx context.Context, key client.ObjectKey, obj client.Object) (*entry, any, error) {
	e := c.readyEntry(obj)
	if e == nil {
		kindOf := obj
		if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.IsNil() {
			kindOf = reflect.New(v.Type().Elem()).Interface().(client.Object)
		}
		k, err := c.keyFor(kindOf)
		if err != nil {
			return nil, nil, fmt.Errorf("get %T %s: %w", obj, key, err)
		}
		if e, err = c.entryForRead(ctx, k); err != nil {
			return nil, nil, kinds.OpError("get", k.gvk, key.Namespace, key.Name, err)
		}
		c.rememberReady(obj, e)
	}
	if err := kinds.CheckKey("get", e.key.gvk, e.namespaced, key.Namespace, key.Name); err != nil {
		return nil, nil, err
	}
	ns := key.Namespace
	if !e.namespaced {
		ns = ""
	}
	ni, err := e.informerFor(ns)
	if err != nil {
		return nil, nil, e.getError(key, err)
	}
	item, exists := ni.Informer.Store().Get(ns, key.Name)
	if !exists {
		return nil, nil, e.getError(key, apierrors.NewNotFound(e.mapping.Resource.GroupResource(), key.Name))
	}
	return e, item, nil
}

// readyEntry returns the synced entry of a typed obj from the fast path,
// or nil.
func (c *InformerCache) readyEntry(obj client.Object) *entry {
	if runState(c.state.Load()) != running {
		return nil
	}
	e, _ := c.readyByType.Load(reflect.TypeOf(obj))
	return e
}

// rememberReady records the synced entry of a typed obj for readyEntry.
func (c *InformerCache) rememberReady(obj client.Object, e *entry) {
	if e.key.shape != shapeTyped {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[e.key] == e { // not removed meanwhile
		c.readyByType.Store(reflect.TypeOf(obj), e)
	}
}

// List fills list with the cached objects matching opts: namespace, label
// selector and exact-match field selectors on indexed fields (and on
// metadata.name and metadata.namespace). Limit caps the result; Continue
// is not supported. Items are deep copies unless UnsafeDisableDeepCopy.
func (c *InformerCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	k, err := c.keyForList(list)
	if err != nil {
		return fmt.Errorf("list %T: %w", list, err)
	}
	var lo client.ListOptions
	lo.ApplyOptions(opts)
	fail := func(err error) error {
		return kinds.OpError("list", k.gvk, lo.Namespace, "", err)
	}
	if err := client.InvalidSelectorError(lo.LabelSelector); err != nil {
		return fail(fmt.Errorf("invalid label selector: %w", err))
	}
	if lo.Continue != "" {
		return fail(errors.New("continue tokens are not supported by the cache; list from the API server to page"))
	}
	q, err := fieldindex.Parse(lo.FieldSelector)
	if err != nil {
		return fail(err)
	}
	e, err := c.entryForRead(ctx, k)
	if err != nil {
		return fail(err)
	}
	ns := lo.Namespace
	if q.Namespace != nil {
		if ns != "" && ns != *q.Namespace {
			return meta.SetList(list, nil) // contradictory: nothing matches
		}
		ns = *q.Namespace
	}
	if !e.namespaced {
		ns = ""
	}
	infs := e.group.All()
	if ns != "" && e.restricted {
		ni, err := e.informerFor(ns)
		if err != nil {
			return fail(err)
		}
		infs = []*informer.NS{ni}
	}
	noCopy, perNamespace := e.noCopyIn(ns), false
	switch {
	case lo.UnsafeDisableDeepCopy != nil:
		noCopy = *lo.UnsafeDisableDeepCopy
	case ns == "" && e.noCopyNS != nil:
		perNamespace = true // each object by its namespace's setting
	}
	stores := make([]*store.Store, len(infs))
	for i, ni := range infs {
		stores[i] = ni.Informer.Store()
	}
	// Filter under the stores' read locks; copy after them.
	out, err := q.Collect(stores, ns, func(obj client.Object) bool { return matchesLabels(lo.LabelSelector, obj) }, lo.Limit)
	if err != nil {
		return fail(err)
	}
	inMemoryOrder(out)
	switch {
	case perNamespace:
		for i, obj := range out {
			if !e.noCopyIn(obj.(client.Object).GetNamespace()) {
				out[i] = obj.DeepCopyObject()
			}
		}
	case !noCopy:
		for i, obj := range out {
			out[i] = obj.DeepCopyObject()
		}
	}
	if err := meta.SetList(list, out); err != nil {
		return fail(err)
	}
	list.SetContinue("")
	return nil
}

// inMemoryOrder sorts objs, which are pointers, by address, when there are
// at least sortAbove of them. The copies a List then makes (the deep
// copies, and the items' structs) read the cached objects in about the
// order the LIST decoder allocated them, rather than in the stores' hash
// order, which scatters the reads over the whole cache (store.Objects). A
// List of all 100k cached ConfigMaps took 0.71x the time with deep copies
// and 0.77x without (bench/cache BenchmarkCacheRead, list_all, medians of 3
// interleaved runs); a List of 1,000 took longer when sorted. A List's order is
// unspecified, as controller-runtime's is.
func inMemoryOrder(objs []runtime.Object) {
	if len(objs) < sortAbove {
		return
	}
	type keyed struct {
		addr uintptr
		obj  runtime.Object
	}
	ks := make([]keyed, len(objs))
	for i, o := range objs {
		ks[i] = keyed{uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&o))[1]), o}
	}
	slices.SortFunc(ks, func(a, b keyed) int { return cmp.Compare(a.addr, b.addr) })
	for i := range ks {
		objs[i] = ks[i].obj
	}
}

// sortAbove is the number of listed objects from which List copies them
// in memory order.
const sortAbove = 4096

// keyForList returns the kind and shape of list's items.
func (c *InformerCache) keyForList(list client.ObjectList) (kindKey, error) {
	k, err := c.keyFor(list)
	if err != nil {
		return kindKey{}, err
	}
	k.gvk.Kind = kinds.TrimList(k.gvk.Kind)
	return k, nil
}

// ObservedVersion returns the resourceVersion up to which the cache has
// applied every change of obj's kind in namespace ns ("" for a
// cluster-scoped kind or a cluster-wide informer), for the manager's client
// to tell a cache that lags behind its own write from one that has caught
// up. ok is false when the cache cannot say: it has no synced informer for
// the kind and namespace, or that informer's last list or watch failed
// (Healthy names it), so that a read through the cache may be arbitrarily
// stale.
func (c *InformerCache) ObservedVersion(obj client.Object, ns string) (rv uint64, ok bool) {
	ni := c.progressOf(obj, ns)
	if ni == nil {
		return 0, false
	}
	return ni.Informer.ObservedVersion(), true
}

// WaitForVersion blocks until the informer of obj's kind in namespace ns
// has applied every change up to rv (ObservedVersion is at least rv), and
// reports whether it did before ctx ended. It returns false at once when
// ObservedVersion would answer ok false.
func (c *InformerCache) WaitForVersion(ctx context.Context, obj client.Object, ns string, rv uint64) bool {
	ni := c.progressOf(obj, ns)
	if ni == nil {
		return false
	}
	return ni.Informer.WaitForVersion(ctx, rv)
}

// progressOf returns the informer that holds obj's kind in namespace ns
// if it is synced and healthy, else nil.
func (c *InformerCache) progressOf(obj client.Object, ns string) *informer.NS {
	e := c.readyEntry(obj)
	if e == nil {
		k, err := c.keyFor(obj)
		if err != nil {
			return nil
		}
		c.mu.Lock()
		e = c.entries[k]
		c.mu.Unlock()
		if e == nil {
			return nil
		}
	}
	if !e.namespaced {
		ns = ""
	}
	ni, err := e.informerFor(ns)
	if err != nil || !ni.Informer.HasSynced() || ni.Health.Err() != nil {
		return nil
	}
	return ni
}

// Holds reports whether the cache would hold obj as it is: its kind is
// cached, its namespace is watched and its labels (and metadata.name and
// metadata.namespace fields) match the kind's selectors. A field selector
// on other fields cannot be judged on an arbitrary object; such an object
// counts as held.
func (c *InformerCache) Holds(obj client.Object) bool {
	k, err := c.keyFor(obj)
	if err != nil {
		return false
	}
	kc := configFor(c.opts, c.byGVK, k.gvk)
	nc := nsConfig{label: kc.label, field: kc.field}
	if ns := obj.GetNamespace(); ns != "" {
		var watched bool
		if nc, watched = kc.forNamespace(ns); !watched {
			return false
		}
	}
	if nc.label != nil && !nc.label.Empty() && !nc.label.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	return fieldindex.MatchesMetadata(nc.field, obj)
}

// Sizes returns what the cache holds: one KindSize per kind, shape and
// namespace that has objects, sorted by group, kind, version, shape and
// namespace. A kind whose informers hold nothing (yet) is listed once,
// with Namespace "" and zero Objects, so that every informer shows up.
//
// Objects is exact. Bytes is an estimate of the size of the objects as
// JSON, as stored: what `kubectl get -o json` would print for them less
// metadata.managedFields, which the cache does not keep (unless
// ByObject.KeepManagedFields). Sizes encodes up to 16 objects of each
// namespace, at most 1,024 per informer, and multiplies their mean size
// by the number of objects; a namespace of at most 16 objects is measured
// exactly, and one past the per-informer budget gets the informer's mean.
// Bytes is not the Go heap the objects occupy: that adds a roughly fixed
// overhead per object for struct, map and string headers (about 0.8 KB for
// a ConfigMap with one label and one data key, measured on Go structs), and
// saves what the cache shares between objects (namespaces, labels). Use
// Bytes to compare kinds and namespaces and to watch growth; Objects times
// such an overhead plus Bytes is a fair guess at the heap.
//
// Sizes costs nothing between calls: it reads the stores when called,
// holding each store's read lock only to count and to pick the sample,
// and encodes the sample after releasing it. The informers' event path
// does no extra work for it.
func (c *InformerCache) Sizes() []KindSize {
	var out []KindSize
	for _, e := range c.snapshot() {
		base := KindSize{Group: e.key.gvk.Group, Version: e.key.gvk.Version, Kind: e.key.gvk.Kind, Shape: e.key.shape.String()}
		n := len(out)
		for _, ni := range e.group.All() {
			for _, ns := range ni.Informer.Store().Sizes(sizeSamplesPerNamespace, sizeSamplesPerInformer) {
				ks := base
				ks.Namespace, ks.Objects, ks.Bytes = ns.Namespace, ns.Objects, ns.Bytes
				out = append(out, ks)
			}
		}
		if len(out) == n {
			out = append(out, base)
		}
	}
	slices.SortFunc(out, func(a, b KindSize) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Version, b.Version),
			cmp.Compare(a.Shape, b.Shape), cmp.Compare(a.Namespace, b.Namespace))
	})
	return out
}

// notCachedError says that strict mode refused a read of k.
func notCachedError(k kindKey) error {
	return fmt.Errorf("%w: no %s informer for the kind and ReaderFailOnMissingInformer is set; "+
		"call GetInformer for it before reading", ErrResourceNotCached{GVK: k.gvk}, k.shape)
}
