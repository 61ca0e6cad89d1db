package reliability_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/internal/faultproxy"
)

// TestBookmarksAdvanceTheWatch lets the API server send real bookmarks:
// the proxy shortens every watch of the informer to 4 s (timeoutSeconds),
// and the API server's watch cache sends a BOOKMARK 2 s before a watch's
// deadline. While the watched namespace is quiet, another namespace
// changes, so a bookmark carries a resourceVersion newer than any object
// the informer has. No handler may ever see a bookmark, and the re-watch
// after the deadline must resume from the bookmark's version, without a
// relist.
func TestBookmarksAdvanceTheWatch(t *testing.T) {
	ns := newNamespace(t)
	other := newNamespace(t)
	configMaps(t, ns, 5)
	p, mgr, ev := watchedManager(t, ns)
	ctx := context.Background()

	last, err := admin.CoreV1().ConfigMaps(ns).Update(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cm-0"}, Data: map[string]string{"n": "1"}}, metav1.UpdateOptions{})
	require.NoError(t, err)
	cachedAt(t, mgr, ns, "cm-0", last.ResourceVersion)
	adds, upd, dels, _, _ := ev.snapshot()

	p.AddRule(faultproxy.Rule{
		Match: faultproxy.And(faultproxy.Watches, faultproxy.PathContains("/namespaces/"+ns+"/configmaps")),
		Rewrite: func(r *http.Request) {
			q := r.URL.Query()
			q.Set("timeoutSeconds", "4")
			r.URL.RawQuery = q.Encode()
		},
	})
	time.Sleep(1500 * time.Millisecond) // not a "very short" watch
	since := time.Now()
	require.Positive(t, p.CutWatches())

	// Changes elsewhere advance the resourceVersion the watch cache has.
	var otherRV int64
	for i := 0; i < 5; i++ {
		cm, err := admin.CoreV1().ConfigMaps(other).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x" + strconv.Itoa(i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
		otherRV, _ = strconv.ParseInt(cm.ResourceVersion, 10, 64)
	}
	lastRV, _ := strconv.ParseInt(last.ResourceVersion, 10, 64)
	require.Greater(t, otherRV, lastRV)

	var resumedAt int64
	require.Eventually(t, func() bool {
		for _, r := range p.Records() {
			if r.Time.Before(since) || !r.Watch || !containsPath(r.Path, "/configmaps") {
				continue
			}
			if rv, _ := strconv.ParseInt(r.Query.Get("resourceVersion"), 10, 64); rv >= otherRV {
				resumedAt = rv
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "a re-watch resumed from a bookmark's resourceVersion (beyond %d)", otherRV)

	var rvs []string
	for _, r := range p.Records() {
		if !r.Time.Before(since) && r.Watch && containsPath(r.Path, "/configmaps") {
			rvs = append(rvs, r.Query.Get("resourceVersion"))
		}
	}
	t.Logf("last object's resourceVersion %d, other namespace's %d; re-watches from %v", lastRV, otherRV, rvs)
	assert.GreaterOrEqual(t, resumedAt, otherRV)
	assert.Zero(t, resyncs(p, since, "/configmaps"), "bookmarks spare the informer a relist")

	adds2, upd2, dels2, _, nameless := ev.snapshot()
	assert.Zero(t, nameless, "no handler saw a bookmark")
	assert.Equal(t, adds, adds2, "no add while the namespace was quiet")
	assert.Equal(t, upd, upd2, "no update while the namespace was quiet")
	assert.Equal(t, dels, dels2, "no delete while the namespace was quiet")

	// The cache still answers with the objects themselves.
	state, err := tryCacheState(mgr, ns)
	require.NoError(t, err)
	assert.Len(t, state, 5)
}
