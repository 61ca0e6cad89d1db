package reliability_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/manager"
)

// events records what an informer's handler receives, per object name.
type events struct {
	mu         sync.Mutex
	adds       map[string]int
	updates    map[string]int
	deletes    map[string]int
	tombstones int
	nameless   int // objects without a name: a bookmark leaking through
}

func newEvents() *events {
	return &events{adds: map[string]int{}, updates: map[string]int{}, deletes: map[string]int{}}
}

func (e *events) name(obj any) string {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || cm.Name == "" {
		e.nameless++
		return ""
	}
	return cm.Name
}

func (e *events) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.adds[e.name(obj)]++
		},
		UpdateFunc: func(_, obj any) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.updates[e.name(obj)]++
		},
		DeleteFunc: func(obj any) {
			e.mu.Lock()
			defer e.mu.Unlock()
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				e.tombstones++
				obj = d.Obj
			}
			e.deletes[e.name(obj)]++
		},
	}
}

func (e *events) snapshot() (adds, updates, deletes map[string]int, tombstones, nameless int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cp := func(m map[string]int) map[string]int {
		out := map[string]int{}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	return cp(e.adds), cp(e.updates), cp(e.deletes), e.tombstones, e.nameless
}

// watchedManager starts a manager on ns through a fresh proxy with an
// event recorder on its ConfigMap informer, and waits for its watch.
func watchedManager(t *testing.T, ns string) (*faultproxy.Proxy, *manager.Manager, *events) {
	t.Helper()
	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	mgr := newManager(t, p.Config(), ns, manager.Options{})
	inf, err := mgr.GetCache().GetInformer(context.Background(), &corev1.ConfigMap{})
	require.NoError(t, err)
	ev := newEvents()
	_, err = inf.AddEventHandler(ev.handler())
	require.NoError(t, err)
	r := start(mgr)
	t.Cleanup(func() { assert.NoError(t, r.stop(t)) })
	r.waitStarted(t)
	watching(t, p)
	return p, mgr, ev
}

// cachedAt waits until the cache holds ns/name at resourceVersion rv.
func cachedAt(t *testing.T, mgr *manager.Manager, ns, name, rv string) {
	t.Helper()
	require.Eventually(t, func() bool {
		var cm corev1.ConfigMap
		err := mgr.GetCache().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &cm)
		return err == nil && cm.ResourceVersion == rv
	}, convergeWithin, 10*time.Millisecond, "the cache caught up with %s/%s at %s", ns, name, rv)
}

func cacheEqualsServer(t *testing.T, mgr *manager.Manager, ns string) {
	t.Helper()
	want := serverState(t, ns)
	require.Eventually(t, func() bool {
		got, err := tryCacheState(mgr, ns)
		return err == nil && fmt.Sprint(got) == fmt.Sprint(want)
	}, convergeWithin, 20*time.Millisecond, "cache equals server")
}

func configMapLists(r faultproxy.Record) bool {
	return strings.HasSuffix(r.Path, "/configmaps") && ((r.Method == http.MethodGet && !r.Watch) ||
		(r.Watch && r.Query.Get("sendInitialEvents") == "true"))
}

// TestGoneDuringAGapWithDeletes breaks the watch, answers the re-watch
// 410 Gone and holds the relist off with 503s while objects are deleted,
// created and updated; then lets the relist through. Every delete must
// reach the handler as a delete (a DeletedFinalStateUnknown tombstone
// counts), creates as adds, updates as updates, and the relist must ask
// for the last resourceVersion the informer had seen.
func TestGoneDuringAGapWithDeletes(t *testing.T) {
	ns := newNamespace(t)
	names := configMaps(t, ns, 30)
	p, mgr, ev := watchedManager(t, ns)
	ctx := context.Background()

	// The last change the informer sees before the gap.
	last, err := admin.CoreV1().ConfigMaps(ns).Update(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: names[0]}, Data: map[string]string{"n": "1"}}, metav1.UpdateOptions{})
	require.NoError(t, err)
	cachedAt(t, mgr, ns, names[0], last.ResourceVersion)

	since := time.Now()
	cmWatches := faultproxy.And(faultproxy.Watches, faultproxy.PathContains("/configmaps"))
	cmLists := faultproxy.And(faultproxy.Lists, faultproxy.PathContains("/configmaps"))
	removeGone := p.AddRule(faultproxy.Rule{Match: cmWatches, Status: http.StatusGone, Times: 1})
	defer removeGone()
	removeHold := p.AddRule(faultproxy.Rule{Match: cmLists, Status: http.StatusServiceUnavailable})
	require.Positive(t, p.CutWatches())
	require.Eventually(t, func() bool {
		return p.Count(since, func(r faultproxy.Record) bool { return r.Status == http.StatusGone }) == 1
	}, convergeWithin, 10*time.Millisecond, "the re-watch met the 410")

	deleted := names[20:]
	for _, n := range deleted {
		require.NoError(t, admin.CoreV1().ConfigMaps(ns).Delete(ctx, n, metav1.DeleteOptions{}))
	}
	created := []string{"new-0", "new-1", "new-2"}
	for _, n := range created {
		_, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	updated := names[1:4]
	for _, n := range updated {
		require.NoError(t, bump(ctx, admin, ns, n, 7))
	}
	// Deleted and created again during the gap: a new object (new UID).
	recreated := names[5]
	require.NoError(t, admin.CoreV1().ConfigMaps(ns).Delete(ctx, recreated, metav1.DeleteOptions{}))
	_, err = admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: recreated}}, metav1.CreateOptions{})
	require.NoError(t, err)

	before, beforeUpd, beforeDel, _, _ := ev.snapshot()
	removeHold()
	cacheEqualsServer(t, mgr, ns)

	adds, upd, dels, tombstones, nameless := ev.snapshot()
	for _, n := range deleted {
		assert.Equal(t, beforeDel[n]+1, dels[n], "%s deleted during the gap arrived as one delete", n)
	}
	for _, n := range created {
		assert.Equal(t, before[n]+1, adds[n], "%s created during the gap arrived as an add", n)
	}
	for _, n := range updated {
		assert.Equal(t, beforeUpd[n]+1, upd[n], "%s updated during the gap arrived as an update", n)
	}
	// A delete and a create of one name in a gap may be seen as a delete
	// then an add, or as an update to the new object: either is the
	// server's current state; what must not happen is nothing at all.
	assert.Positive(t, dels[recreated]+upd[recreated]-beforeDel[recreated]-beforeUpd[recreated]+adds[recreated]-before[recreated],
		"%s recreated during the gap was reported", recreated)
	assert.Zero(t, nameless)

	var relists []faultproxy.Record
	for _, r := range p.Records() {
		if !r.Time.Before(since) && configMapLists(r) {
			relists = append(relists, r)
		}
	}
	require.NotEmpty(t, relists)
	var served []string
	for _, r := range relists {
		if r.Status == 0 {
			served = append(served, r.Query.Get("resourceVersion"))
		}
	}
	t.Logf("gap: %d deleted (%d as tombstones), %d created, %d updated; %d relist attempts (%d held off with 503), served at resourceVersion %v; last seen %s",
		len(deleted), tombstones, len(created), len(updated), len(relists), len(relists)-len(served), served, last.ResourceVersion)
	require.Len(t, served, 1, "one relist got through")
	assert.Equal(t, last.ResourceVersion, served[0], "the relist resumes from the last resourceVersion seen, not from scratch")
}

// TestListTooLargeOrGoneCostsTwoLists makes the relist after a 410 fail
// once the way an API server does when the resourceVersion asked for is
// not available: 504 "Too large resource version" (a real one: the proxy
// rewrites the resourceVersion far into the future, so the API server
// answers itself, after its 3 s wait for the cache to catch up) or 410
// Gone. Either costs two LISTs in all: the reflector then lists from
// scratch (an empty resourceVersion). The cache's LISTs are not retried by
// client-go's REST client (MaxRetries(0): the informer's own retry policy
// owns that), so a 504 whose Retry-After would have the same LIST repeated
// up to ten times (12 LISTs and 44 s when the resourceVersion stays out of
// reach) costs one LIST before the one from scratch.
func TestListTooLargeOrGoneCostsTwoLists(t *testing.T) {
	for _, tc := range []struct {
		name        string
		rule        faultproxy.Rule
		firstStatus int    // as the proxy records it: 0 when forwarded
		second      string // the second LIST: resourceVersion/status
	}{
		{"504 too large", faultproxy.Rule{Rewrite: func(r *http.Request) {
			q := r.URL.Query()
			rv, _ := strconv.ParseInt(q.Get("resourceVersion"), 10, 64)
			q.Set("resourceVersion", strconv.FormatInt(rv+1_000_000_000, 10))
			r.URL.RawQuery = q.Encode()
		}}, 0, `""/0`},
		{"410 on list", faultproxy.Rule{Status: http.StatusGone}, http.StatusGone, `""/0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			names := configMaps(t, ns, 10)
			p, mgr, _ := watchedManager(t, ns)
			// An event through the watch first: a watch cut before it
			// delivered anything, within a second of opening, is one the
			// reflector treats as broken (and relists after).
			last, err := admin.CoreV1().ConfigMaps(ns).Update(context.Background(), &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: names[0]}, Data: map[string]string{"n": "1"}}, metav1.UpdateOptions{})
			require.NoError(t, err)
			cachedAt(t, mgr, ns, names[0], last.ResourceVersion)
			time.Sleep(time.Second)

			since := time.Now()
			cmWatches := faultproxy.And(faultproxy.Watches, faultproxy.PathContains("/configmaps"))
			p.AddRule(faultproxy.Rule{Match: cmWatches, Status: http.StatusGone, Times: 1})
			rule := tc.rule
			rule.Match = faultproxy.And(faultproxy.Lists, faultproxy.PathContains("/configmaps"), func(r *http.Request) bool {
				rv := r.URL.Query().Get("resourceVersion")
				return rv != "" && rv != "0"
			})
			rule.Times = 1
			p.AddRule(rule)
			require.Positive(t, p.CutWatches())
			writeFor(t, ns, names, time.Second)
			cacheEqualsServer(t, mgr, ns)
			// The informer is watching again: nothing more to list.
			watching(t, p)

			var rvs []string
			for _, r := range p.Records() {
				if !r.Time.Before(since) && configMapLists(r) {
					rvs = append(rvs, fmt.Sprintf("%q/%d", r.Query.Get("resourceVersion"), r.Status))
				}
			}
			t.Logf("lists after the 410 (resourceVersion/injected status): %v", rvs)
			require.Len(t, rvs, 2, "the fault costs two lists, no more")
			assert.Equal(t, strconv.Quote(last.ResourceVersion)+"/"+strconv.Itoa(tc.firstStatus), rvs[0], "the first relist asks for the last resourceVersion seen")
			assert.Equal(t, tc.second, rvs[1], "then the reflector lists from scratch")
		})
	}
}
