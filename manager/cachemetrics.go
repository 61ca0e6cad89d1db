package manager

import (
	"net/http"

	"github.com/kubeloop/kubeloop/manager/internal/cachesize"
)

// CacheDebugPath is where the metrics server serves the cache's sizes as
// JSON (see Manager.CacheDebugHandler), unless Metrics.ExtraHandlers has a
// handler of its own for the path.
const CacheDebugPath = "/debug/cache"

// sizer returns the manager's cache as a cachesize.Sizer, or nil when it
// cannot report its sizes (a cache.Cache other than cache.New's).
func (m *Manager) sizer() cachesize.Sizer {
	s, _ := m.cache.(cachesize.Sizer)
	return s
}

// registerCacheMetrics registers kubeloop_cache_objects and
// kubeloop_cache_bytes on the manager's registry when the cache can report
// its sizes.
func (m *Manager) registerCacheMetrics() error {
	if s := m.sizer(); s != nil {
		return m.registry.Register(cachesize.Collector(s))
	}
	return nil
}

// CacheDebugHandler returns the handler the metrics server serves at
// CacheDebugPath, to mount elsewhere too: a GET answers a JSON array of
// cache.KindSize (group, version, kind, shape, namespace, objects, bytes),
// one per kind, shape and namespace, sorted; ?namespace= and ?kind= keep
// only the entries that match. It answers 404 when the manager's cache
// cannot report its sizes (a cache.Cache other than cache.New's).
func (m *Manager) CacheDebugHandler() http.Handler { return cachesize.Handler(m.sizer()) }

// addCacheDebug serves CacheDebugPath on mux unless an extra handler
// already has the path.
func (m *Manager) addCacheDebug(mux *http.ServeMux) {
	if _, ok := m.opts.Metrics.ExtraHandlers[CacheDebugPath]; !ok {
		mux.Handle(CacheDebugPath, m.CacheDebugHandler())
	}
}
