package cache

import (
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/cache/internal/backoff"
	"github.com/kubeloop/kubeloop/cache/internal/health"
	"github.com/kubeloop/kubeloop/cache/internal/informer"
	"github.com/kubeloop/kubeloop/cache/internal/intern"
	"github.com/kubeloop/kubeloop/cache/internal/listwatch"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// pipelines builds the informers of one cache. Its pipeline method is the
// one place that names every part of an informer (informer.Pipeline) and
// who makes it; the struct holds the parts that every informer of the
// cache shares.
type pipelines struct {
	// lw makes each informer's list-watch and its watch decoder's view of
	// the informer's store (listwatch.Factory; tests use fakes).
	lw listWatchFactory
	// prober is the cache's one prober, over lw's HTTP client
	// (listwatch.Factory.Prober); nil: none.
	prober *backoff.Prober
	// intern holds the strings and maps that every informer's transform
	// shares (transformFor).
	intern *intern.Interner
	scheme *runtime.Scheme
}

// listWatchFactory builds the list-watch of one kind, shape and namespace:
// the cache's only seam to the API server.
type listWatchFactory interface {
	ListWatch(r listwatch.Request) (listwatch.Source, error)
}

var _ listWatchFactory = (*listwatch.Factory)(nil)

// The decoder's store view that listwatch makes is the one the informer
// attaches its store to.
var _ informer.StoreView = (*listwatch.StoreView)(nil)

// pipeline returns the pipeline of the informer of key in nc's namespace:
// a kind mapped to mapping, configured by kc, whose objects are of
// example's type; log is the kind's logger.
func (b *pipelines) pipeline(key kindKey, mapping *meta.RESTMapping, kc kindConfig, nc nsConfig,
	example runtime.Object, log logr.Logger) (informer.Pipeline, error) {
	src, err := b.lw.ListWatch(listwatch.Request{GVK: key.gvk, Shape: key.shape, Mapping: mapping, Namespace: nc.namespace,
		Label: nc.label, Field: nc.field, Strip: !kc.keepManagedFields, Share: nc.transform == nil, Shard: kc.shard})
	if err != nil {
		return informer.Pipeline{}, fmt.Errorf("cache: list-watch of %s: %w", kinds.String(key.gvk), err)
	}
	if nc.namespace != "" {
		log = log.WithValues("namespace", nc.namespace)
	}
	p := informer.Pipeline{
		Description: kinds.String(key.gvk),
		Example:     example,
		ListWatch:   src.ListWatch,
		// StoreView below, only when the decoder shares maps.
		Health:        health.New(log),
		StreamingList: kc.streamingList,
		// Backoff: the default policy.
		Prober:          b.prober,
		Transform:       transformFor(b.intern, key, kc.keepManagedFields, nc.transform),
		Resync:          nc.resync,
		DetectMutations: kc.detectMutations,
		OnMutation:      kc.onMutation,
	}
	if src.StoreView != nil { // a nil *StoreView would make a non-nil StoreView
		p.StoreView = src.StoreView
	}
	return p, nil
}
