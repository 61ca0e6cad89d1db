package informer

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/cache/internal/backoff"
	"github.com/kubeloop/kubeloop/cache/internal/health"
)

// Pipeline is every part of one informer, given to New as typed fields,
// so that the one place that builds it (pipelines.pipeline in the cache's
// pipeline.go) names each part and who makes it. No part is found by a
// type assertion; what is, per watch, is whether that watch can be read
// in line (reflector.go's inline: wire.Events).
//
// A list or watch call goes from the reflector (reflector.go, or
// client-go's Reflector with StreamingList) through the gate, which paces
// calls after failures (backoff.Gate, made by New from Backoff and
// Prober; one Prober per cache), and Health, to which every call and HTTP
// request reports (health.Track, for the cache's Healthy), to ListWatch
// (made by listwatch.Factory). A change comes back on one goroutine for a
// built-in kind's watch (see Informer) and passes:
//
//	decoder    ListWatch's watch decoder (package wire) reads each event off
//	           the connection and, through StoreView, takes the stored
//	           version's label and annotation maps when they are equal
//	reflector  hands the change to the feed (feed.go)
//	Transform  the cache's transform of each object before it is stored
//	store      the informer's store.Store (made by New)
//	progress   the resourceVersion applied so far (made by New), for
//	           ObservedVersion and WaitForVersion
//	handlers   added with AddEventHandler, called in line
//
// An informer that runs needs ListWatch and Example; every other field
// may be left zero.
type Pipeline struct {
	// Description names the kind in logs, errors and checker names.
	Description string
	// Example is an object of the type the list-watch returns, which the
	// informer stores.
	Example runtime.Object

	// ListWatch lists and watches the kind in one namespace.
	ListWatch toolscache.ListerWatcher
	// StoreView is the view ListWatch's watch decoder has of the store; the
	// informer attaches its store to it while it runs. Nil: the decoder
	// shares nothing.
	StoreView StoreView

	// Health is the health of ListWatch, which the informer wraps to
	// report to it (health.Track). Nil: nothing is tracked (tests).
	Health *health.Health
	// StreamingList lets client-go's Reflector run the list-watch, with a
	// streaming list when its WatchListClient gate allows; false: the
	// informer's own reflector, with a LIST.
	StreamingList bool
	// Backoff is the retry policy of the gate; the zero value is the
	// default.
	Backoff backoff.Policy
	// Prober releases the gate's waits after failures early, once the API
	// server answers again; nil: none.
	Prober *backoff.Prober
	// OnWatchErr gets the error of each list-and-watch cycle that failed.
	// Nil: Health.ReflectorFailed, or without Health client-go's
	// DefaultWatchErrorHandler's log.
	OnWatchErr func(ctx context.Context, err error)

	// Transform is applied to every object before it is stored; it runs
	// under the informer's lock. Nil: none.
	Transform Transform
	// Resync hands every stored object to the handlers this often. Zero:
	// never.
	Resync time.Duration
	// DetectMutations switches the store's mutation detector on
	// (store.DetectMutations): every object stored is copied and compared
	// with its copy when it leaves the store and every MutationPeriod.
	DetectMutations bool
	// OnMutation gets what the detector found; nil: panic.
	OnMutation func(error)
	// MutationPeriod is the interval of the detector's full checks; zero:
	// one second, as client-go's.
	MutationPeriod time.Duration
}

// StoreView is the view a list-watch's watch decoder has of the store of
// the informer it feeds (listwatch.StoreView): Attach lets the decoder
// look up stored objects by namespace and name, on the watch's
// goroutine, until detach is called.
type StoreView interface {
	Attach(lookup func(namespace, name string) (any, bool)) (detach func())
}
