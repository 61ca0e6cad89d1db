package source

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

var widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

// fakeInformer is a cache.Informer whose objects the test sets; handlers
// are called in line, as the cache's are.
type fakeInformer struct {
	mu       sync.Mutex
	objs     map[string]client.Object
	handlers map[*fakeReg]toolscache.ResourceEventHandler
	stopped  bool
}

// fakeReg has a size: pointers to distinct zero-size values may be equal,
// and the informer keys its handlers by them.
type fakeReg struct{ _ byte }

func (fakeReg) HasSynced() bool                          { return true }
func (fakeReg) HasSyncedChecker() toolscache.DoneChecker { return nil }

func newFakeInformer() *fakeInformer {
	return &fakeInformer{objs: map[string]client.Object{}, handlers: map[*fakeReg]toolscache.ResourceEventHandler{}}
}

func (f *fakeInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.objs {
		h.OnAdd(o, true)
	}
	r := &fakeReg{}
	f.handlers[r] = h
	return r, nil
}

func (f *fakeInformer) RemoveEventHandler(r toolscache.ResourceEventHandlerRegistration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.handlers, r.(*fakeReg))
	return nil
}

func (f *fakeInformer) AddIndexers(toolscache.Indexers) error { return nil }
func (f *fakeInformer) HasSynced() bool                       { return true }
func (f *fakeInformer) IsStopped() bool                       { f.mu.Lock(); defer f.mu.Unlock(); return f.stopped }

func (f *fakeInformer) handlerCount() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.handlers) }

// set adds or updates obj; gone deletes it.
func (f *fakeInformer) set(obj client.Object, gone bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	old, had := f.objs[obj.GetName()]
	switch {
	case gone:
		delete(f.objs, obj.GetName())
	default:
		f.objs[obj.GetName()] = obj
	}
	for _, h := range f.handlers {
		switch {
		case gone:
			h.OnDelete(obj)
		case had:
			h.OnUpdate(old, obj)
		default:
			h.OnAdd(obj, false)
		}
	}
}

// fakeCache is the cache.Informers of these tests: one CRD informer, and
// one informer of the kind at a time, re-created after RemoveInformer.
type fakeCache struct {
	crds *fakeInformer

	mu       sync.Mutex
	kind     *fakeInformer
	created  int
	removed  int
	objs     []client.Object // the kind's objects, in every new informer
	kindGets int
}

var _ cache.Informers = (*fakeCache)(nil)

func newFakeCache() *fakeCache { return &fakeCache{crds: newFakeInformer()} }

func (c *fakeCache) GetInformer(_ context.Context, obj client.Object) (cache.Informer, error) {
	if obj.GetObjectKind().GroupVersionKind().Kind == "CustomResourceDefinition" {
		return c.crds, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kindGets++
	if c.kind == nil {
		c.kind = newFakeInformer()
		for _, o := range c.objs {
			c.kind.objs[o.GetName()] = o
		}
		c.created++
	}
	return c.kind, nil
}

func (c *fakeCache) GetInformerForKind(context.Context, schema.GroupVersionKind) (cache.Informer, error) {
	return nil, errors.New("not used")
}

func (c *fakeCache) RemoveInformer(_ context.Context, obj client.Object) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kind != nil {
		c.kind.mu.Lock()
		c.kind.stopped = true
		c.kind.mu.Unlock()
		c.kind = nil
		c.removed++
	}
	return nil
}

func (c *fakeCache) Start(context.Context) error           { return nil }
func (c *fakeCache) WaitForCacheSync(context.Context) bool { return true }
func (c *fakeCache) Healthy() error                        { return nil }
func (c *fakeCache) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil
}

func (c *fakeCache) counts() (created, removed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.created, c.removed
}

func (c *fakeCache) current() *fakeInformer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kind
}

// fakeMapper serves the kind when told to, and counts questions and resets.
type fakeMapper struct {
	meta.RESTMapper // nil: only RESTMapping and Reset are used

	mu     sync.Mutex
	served bool
	asked  int
	resets int
}

var _ meta.ResettableRESTMapper = (*fakeMapper)(nil)

func (m *fakeMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked++
	if !m.served || gk != widgetGVK.GroupKind() {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return &meta.RESTMapping{
		Resource:         widgetGVK.GroupVersion().WithResource("widgets"),
		GroupVersionKind: widgetGVK,
		Scope:            meta.RESTScopeNamespace,
	}, nil
}

func (m *fakeMapper) Reset() { m.mu.Lock(); m.resets++; m.mu.Unlock() }

func (m *fakeMapper) serve(v bool) { m.mu.Lock(); m.served = v; m.mu.Unlock() }

func (m *fakeMapper) stats() (asked, resets int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.asked, m.resets
}

// recordQueue records the names of the Requests added. The methods a
// source never calls are the embedded nil interface's.
type recordQueue struct {
	handler.Queue
	mu    sync.Mutex
	names []string
}

func (q *recordQueue) AddAfter(req reconcile.Request, _ time.Duration) { q.Add(req) }
func (q *recordQueue) AddRateLimited(req reconcile.Request)            { q.Add(req) }

func (q *recordQueue) Add(req reconcile.Request) {
	q.mu.Lock()
	q.names = append(q.names, req.Name)
	q.mu.Unlock()
}
func (q *recordQueue) AddWithOpts(_ workqueue.AddOpts, reqs ...reconcile.Request) {
	for _, r := range reqs {
		q.Add(r)
	}
}
func (q *recordQueue) got() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.names...)
}

func crdMeta(name string, uid types.UID, terminating bool) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid}}
	if terminating {
		now := metav1.Now()
		m.DeletionTimestamp = &now
	}
	return m
}

func widgetObj(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(widgetGVK)
	u.SetNamespace("default")
	u.SetName(name)
	return u
}

// started returns a WaitForCRD source of widgets over c and m, started
// with q until the test ends.
func started(t *testing.T, c *fakeCache, m *fakeMapper, opts CRDOptions) (*CRDSource, *recordQueue) {
	t.Helper()
	s := WaitForCRD(Kind(c, widgetObj(""), &handler.EnqueueRequestForObject{}), m, opts)
	require.NoError(t, s.Prepare(t.Context()))
	q := &recordQueue{}
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(func() { cancel(); synctest.Wait() })
	require.NoError(t, s.Start(ctx, q))
	require.NoError(t, s.WaitForSync(t.Context()))
	return s, q
}

const crdName = "widgets.example.com"

// The whole life: absent, established late, Terminating, deleted, back.
func TestWaitForCRDLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, m := newFakeCache(), &fakeMapper{}
		c.objs = []client.Object{widgetObj("w1")}
		s, q := started(t, c, m, CRDOptions{Reconciled: true})
		assert.True(t, s.Waiting(), "no CRD: waiting, and WaitForSync returned")
		assert.True(t, s.DropsRequests())
		assert.Equal(t, 0, c.kindGets, "no informer of a kind that is not served")

		// The CRD appears but is not established yet: the source asks
		// again, with backoff, and starts once discovery knows the kind.
		c.crds.set(crdMeta(crdName, "uid-1", false), false)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.True(t, s.Waiting())
		m.serve(true)
		time.Sleep(maxRetry)
		synctest.Wait()
		assert.False(t, s.Waiting(), "served")
		assert.False(t, s.DropsRequests())
		assert.Equal(t, []string{"w1"}, q.got(), "the initial list reached the queue")
		inf := c.current()
		require.NotNil(t, inf)
		inf.set(widgetObj("w2"), false)
		assert.Equal(t, []string{"w1", "w2"}, q.got())

		// Terminating: still served, so finalizers can be removed.
		c.crds.set(crdMeta(crdName, "uid-1", true), false)
		synctest.Wait()
		assert.False(t, s.Waiting())
		inf.set(widgetObj("w1"), true)
		assert.Equal(t, []string{"w1", "w2", "w1"}, q.got(), "deletions during termination are delivered")

		// Deleted: the informer is removed, the mapper reset, the kind waits.
		m.serve(false)
		c.crds.set(crdMeta(crdName, "uid-1", true), true)
		synctest.Wait()
		assert.True(t, s.Waiting())
		created, removed := c.counts()
		assert.Equal(t, 1, created)
		assert.Equal(t, 1, removed)
		assert.Equal(t, 0, inf.handlerCount(), "the handler registration ended")
		_, resets := m.stats()
		assert.Positive(t, resets)

		// Back: a new informer.
		c.objs = []client.Object{widgetObj("w3")}
		m.serve(true)
		c.crds.set(crdMeta(crdName, "uid-2", false), false)
		synctest.Wait()
		assert.False(t, s.Waiting())
		created, _ = c.counts()
		assert.Equal(t, 2, created)
		assert.Equal(t, []string{"w1", "w2", "w1", "w3"}, q.got())
	})
}

// A CRD replaced under the same name (a new UID seen as an update, as a
// relist after a watch gap shows it) restarts the informer.
func TestWaitForCRDReplacedCRD(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, m := newFakeCache(), &fakeMapper{served: true}
		c.crds.set(crdMeta(crdName, "uid-1", false), false)
		s, _ := started(t, c, m, CRDOptions{})
		assert.False(t, s.Waiting(), "served at Start")
		assert.False(t, s.DropsRequests(), "not the reconciled kind")
		c.crds.set(crdMeta(crdName, "uid-2", false), false)
		synctest.Wait()
		created, removed := c.counts()
		assert.Equal(t, 2, created)
		assert.Equal(t, 1, removed)
		assert.False(t, s.Waiting())
	})
}

// Discovery that still lists the kind after its CRD was deleted (it lags
// behind the deletion) does not make the source take the kind for one
// served without a CRD: it waits for the CRD to return.
func TestWaitForCRDDiscoveryLagsBehindDeletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, m := newFakeCache(), &fakeMapper{served: true}
		c.crds.set(crdMeta(crdName, "uid-1", false), false)
		s, _ := started(t, c, m, CRDOptions{})
		assert.False(t, s.Waiting())
		c.crds.set(crdMeta(crdName, "uid-1", false), true) // deleted; m still serves
		synctest.Wait()
		assert.True(t, s.Waiting(), "waiting despite discovery")
		created, removed := c.counts()
		assert.Equal(t, 1, created)
		assert.Equal(t, 1, removed)
		c.crds.set(crdMeta(crdName, "uid-2", false), false)
		synctest.Wait()
		assert.False(t, s.Waiting(), "back")
		_, resets := m.stats()
		assert.GreaterOrEqual(t, resets, 3, "reset at the deletion and for each new CRD")
	})
}

// A kind served without a CRD (built in, or aggregated) is watched, and
// CRD events of its group leave it alone.
func TestWaitForCRDServedWithoutCRD(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, m := newFakeCache(), &fakeMapper{served: true}
		s, _ := started(t, c, m, CRDOptions{})
		assert.False(t, s.Waiting())
		c.crds.set(crdMeta("gadgets.example.com", "uid-g", false), false)
		c.crds.set(crdMeta("gadgets.example.com", "uid-g", false), true)
		synctest.Wait()
		created, removed := c.counts()
		assert.Equal(t, 1, created)
		assert.Equal(t, 0, removed)
		assert.False(t, s.Waiting())
	})
}

// While a CRD of the group exists but the kind is never served, the
// source asks a bounded number of times; a new event of the group starts
// the questions again, an event of another group does not.
func TestWaitForCRDBoundedRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, m := newFakeCache(), &fakeMapper{}
		s, _ := started(t, c, m, CRDOptions{})
		c.crds.set(crdMeta("gadgets.example.com", "uid-g", false), false)
		time.Sleep(time.Second)
		synctest.Wait()
		early, _ := m.stats()
		time.Sleep(time.Minute) // the retries span about 40 s
		synctest.Wait()
		asked, _ := m.stats()
		assert.Greater(t, asked, early, "asked again while the CRD may be being established")
		time.Sleep(time.Hour)
		synctest.Wait()
		again, _ := m.stats()
		assert.Equal(t, asked, again, "no more questions once the attempts ran out")

		c.crds.set(crdMeta("other.example.org", "uid-o", false), false)
		synctest.Wait()
		other, _ := m.stats()
		assert.Equal(t, again, other, "another group's CRD does not wake the source")

		c.crds.set(crdMeta("gadgets.example.com", "uid-g2", false), false)
		synctest.Wait()
		woken, _ := m.stats()
		assert.Greater(t, woken, other, "a CRD event of the group asks again")
		assert.True(t, s.Waiting())
	})
}

func TestRetryDelay(t *testing.T) {
	var total time.Duration
	for n := range maxAttempts {
		d := retryDelay(n)
		assert.Positive(t, d)
		assert.LessOrEqual(t, d, maxRetry)
		total += d
	}
	assert.Equal(t, firstRetry, retryDelay(0))
	assert.Equal(t, maxRetry, retryDelay(1000), "no overflow")
	assert.Less(t, total, time.Minute, "the retries of one episode end within a minute")
}

func TestWaitForCRDChecks(t *testing.T) {
	c := newFakeCache()
	typed := Kind(c, &metav1.PartialObjectMetadata{}, &handler.EnqueueRequestForObject{})
	tests := []struct {
		name string
		give *CRDSource
		want string
	}{
		{name: "nil kind", give: WaitForCRD(nil, &fakeMapper{}, CRDOptions{}), want: "nil KindSource"},
		{name: "nil mapper", give: WaitForCRD(Kind(c, widgetObj(""), &handler.EnqueueRequestForObject{}), nil, CRDOptions{}), want: "nil RESTMapper"},
		{name: "no kind", give: WaitForCRD(typed, &fakeMapper{}, CRDOptions{}), want: "no apiVersion and kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorContains(t, tt.give.Prepare(t.Context()), tt.want)
			assert.ErrorContains(t, tt.give.Start(t.Context(), &recordQueue{}), tt.want)
		})
	}
}

// Between two runs (a controller that lost its lease keeps its caches for
// the next term), a deleted CRD's informer is removed from the cache; the
// next run, with the CRD back, starts a new one. A CRD still there when
// the next run starts keeps its informer, handed over without a new one.
func TestWaitForCRDDeletedBetweenRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, m := newFakeCache(), &fakeMapper{served: true}
		c.crds.set(crdMeta(crdName, "uid-1", false), false)
		s := WaitForCRD(Kind(c, widgetObj(""), &handler.EnqueueRequestForObject{}), m, CRDOptions{Reconciled: true})
		require.NoError(t, s.Prepare(t.Context()))
		run := func() context.CancelFunc {
			ctx, cancel := context.WithCancel(t.Context())
			require.NoError(t, s.Start(ctx, &recordQueue{}))
			require.NoError(t, s.WaitForSync(t.Context()))
			return cancel
		}

		// A term ends with the CRD in place; the next begins: the same
		// informer serves it.
		stop := run()
		assert.False(t, s.Waiting())
		stop()
		synctest.Wait()
		stop = run()
		created, removed := c.counts()
		assert.Equal(t, 1, created, "the informer is handed over to the next run")
		assert.Equal(t, 0, removed)
		stop()
		synctest.Wait()

		// Between terms the CRD is deleted: its kind's informer goes.
		_, resets := m.stats()
		m.serve(false)
		c.crds.set(crdMeta(crdName, "uid-1", false), true)
		synctest.Wait()
		created, removed = c.counts()
		assert.Equal(t, 1, removed, "the informer of the deleted CRD's kind is removed between runs")
		assert.Nil(t, c.current())
		_, resets2 := m.stats()
		assert.Greater(t, resets2, resets, "the mapper forgets the kind")

		// The next term, with a new CRD: a new informer.
		m.serve(true)
		c.crds.set(crdMeta(crdName, "uid-2", false), false)
		stop = run()
		defer stop()
		assert.False(t, s.Waiting())
		created, removed = c.counts()
		assert.Equal(t, 2, created)
		assert.Equal(t, 1, removed)
		assert.Equal(t, 1, c.crds.handlerCount(), "only the running source's CRD handler; the keeper's is gone")
	})
}
