package health

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// Track returns lw reporting to h: see trackingLW. streaming says whether
// the reflector may use a streaming list (InitialListStreaming).
func Track(lw toolscache.ListerWatcher, h *Health, streaming bool) toolscache.ListerWatcher {
	return &trackingLW{inner: lw, health: h, streaming: streaming}
}

// trackingLW wraps a list-watch and reports the outcome of every list and
// watch call to the informer's health, and carries the health in each
// call's context so that every HTTP request of the call, client-go's
// silent retries included, reports whether it was answered (see
// Health). The reflector retries some failures (connection
// refused) without telling its error handler, so the calls themselves are
// watched.
type trackingLW struct {
	inner     toolscache.ListerWatcher
	health    *Health
	streaming bool // the reflector may use a streaming list (InitialListStreaming)
}

func (t *trackingLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return t.ListWithContext(context.Background(), opts)
}

func (t *trackingLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return t.WatchWithContext(context.Background(), opts)
}

func (t *trackingLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	obj, err := toolscache.ToListerWatcherWithContext(t.inner).ListWithContext(withHealth(ctx, t.health), opts)
	t.health.listed(ctx, err)
	return obj, err
}

func (t *trackingLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := toolscache.ToListerWatcherWithContext(t.inner).WatchWithContext(withHealth(ctx, t.health), opts)
	t.health.watched(ctx, err)
	return w, err
}

// IsWatchListSemanticsUnSupported tells the reflector not to use a
// streaming list unless the cache asks for one and the wrapped client
// supports it (fake clients do not).
func (t *trackingLW) IsWatchListSemanticsUnSupported() bool {
	return !t.streaming || watchlist.DoesClientNotSupportWatchListSemantics(t.inner)
}
