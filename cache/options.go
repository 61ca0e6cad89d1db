package cache

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/cache/internal/store"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/internal/kinds"
	"github.com/kubeloop/kubeloop/internal/logfilter"
	"github.com/kubeloop/kubeloop/log"
)

// Options configures a cache. The zero value is valid: built-in types, a
// discovery-backed REST mapper, every namespace, managedFields stripped,
// deep copies on read, no resync, and lazy informers for unwatched kinds.
type Options struct {
	// Scheme maps Go types to kinds. Nil means a new scheme of the
	// built-in Kubernetes types (never client-go's global scheme.Scheme).
	Scheme *runtime.Scheme
	// Mapper maps kinds to resources and scopes. Nil means
	// apiutil.NewDynamicRESTMapper over cfg, which discovers lazily.
	Mapper meta.RESTMapper
	// HTTPClient is shared by every list and watch. Nil means one built
	// from the rest.Config.
	HTTPClient *http.Client
	// Logger receives the cache's and client-go's informer logs. The zero
	// value (and logr.Discard(), which logr cannot tell apart from it)
	// writes through log/slog's default handler; to silence the cache use
	// logr.FromSlogHandler(slog.DiscardHandler).
	Logger logr.Logger

	// DefaultNamespaces restricts namespaced kinds to the namespaces it
	// has as keys, controller-runtime's shape: one informer per namespace,
	// each with its Config (a nil field of which means the kind's
	// setting); reads elsewhere fail with ErrNamespaceNotCached. The key
	// AllNamespaces stands for every namespace not listed (alone: the
	// whole cluster, with that Config). Nil or empty means every namespace
	// (one cluster-wide informer). Cluster-scoped kinds are always
	// cluster-wide. Keys must be namespace names; Config's
	// UnsafeDisableDeepCopy must be nil.
	DefaultNamespaces map[string]Config
	// DefaultLabelSelector filters every list and watch on the server. Nil
	// means everything.
	DefaultLabelSelector labels.Selector
	// DefaultFieldSelector filters every list and watch on the server. Nil
	// means everything.
	DefaultFieldSelector fields.Selector
	// DefaultTransform runs on every object before it is stored, after the
	// cache's own transform (which strips managedFields and interns
	// strings). Nil means none. It runs on the informer's goroutine, may
	// modify the object it is given, and must return an object of the same
	// Go type with the same namespace and name: any other is not stored,
	// and the error is logged.
	DefaultTransform toolscache.TransformFunc
	// DefaultUnsafeDisableDeepCopy makes reads share memory with the cache
	// unless a read or ByObject says otherwise. Nil means false: reads
	// return deep copies.
	DefaultUnsafeDisableDeepCopy *bool
	// DefaultEnableWatchBookmarks is accepted for controller-runtime's
	// shape; bookmarks are always asked for (see
	// Config.EnableWatchBookmarks).
	DefaultEnableWatchBookmarks *bool

	// ByObject overrides the defaults per kind; the key is an object of the
	// kind (typed, unstructured or PartialObjectMetadata with apiVersion
	// and kind set). The settings apply to every shape of the kind. Nil
	// means no overrides.
	ByObject map[client.Object]ByObject

	// SyncPeriod is how often informers replay every cached object to
	// their handlers as an update (a resync; no request to the API
	// server). Nil or 0 means never: watches with bookmarks keep the cache
	// complete, and a periodic resync mostly burns CPU.
	SyncPeriod *time.Duration

	// InitialList is how an informer loads the objects that exist when it
	// starts (and again after its watch history expired). The zero value,
	// InitialListPaged, is a LIST request; InitialListStreaming is a
	// streaming list. See InitialList for the trade-off.
	InitialList InitialList

	// ReaderFailOnMissingInformer makes Get and List of a kind without an
	// informer return an error wrapping ErrResourceNotCached instead of
	// starting one. False means such a read starts the kind's informer,
	// logs it at info level, counts it (LazyInformerStarts) and waits
	// for the informer to sync.
	ReaderFailOnMissingInformer bool

	// DetectMutations switches on the mutation detector, for tests and
	// debugging: every object the cache stores is deep-copied, and an
	// object found changed since it was stored (a caller wrote into an
	// object from an event handler, GetShared or a read with
	// UnsafeDisableDeepCopy, memory the cache shares) fails loudly, naming
	// the kind, the object and the first changed field. The check runs when
	// the object is replaced or deleted and every second. It doubles the
	// cache's memory and costs a deep copy per change. False means off,
	// unless the environment variable KUBELOOP_CACHE_MUTATION_DETECTOR (or
	// client-go's KUBE_CACHE_MUTATION_DETECTOR) is "true".
	DetectMutations bool
	// OnMutation gets what the mutation detector found. Nil means panic,
	// as client-go's detector does.
	OnMutation func(error)
}

// InitialList is how informers load their initial objects.
//
// A LIST response decodes in one pass into one slice, so it is the
// cheaper for the operator: on the benchmark machine the cold start of a
// 100k-ConfigMap controller took about a third less CPU than with a
// streaming list (BENCHMARKS.md), for a higher transient peak of memory
// while the response is decoded. A streaming list (client-go's WatchList,
// a watch with sendInitialEvents) spares the API server from building the
// whole list in memory, which matters when many clients list large
// collections at once (for example an agent per node); controller-runtime
// uses it by default, through client-go's WatchListClient feature gate.
type InitialList int

const (
	// InitialListPaged loads the initial objects with a LIST request
	// (paged when the API server pages), then watches from its
	// resourceVersion. It is the default.
	InitialListPaged InitialList = iota
	// InitialListStreaming loads them with a watch that streams the
	// existing objects first, when client-go's WatchListClient gate is on
	// (it is by default) and the API server supports it; else a LIST.
	InitialListStreaming
)

// String names the mode.
func (m InitialList) String() string {
	switch m {
	case InitialListPaged:
		return "paged"
	case InitialListStreaming:
		return "streaming"
	}
	return fmt.Sprintf("InitialList(%d)", int(m))
}

// ByObject is the cache configuration of one kind. Every field's zero
// value means "use the cache-wide default".
type ByObject struct {
	// Namespaces restricts the kind to the namespaces it has as keys, each
	// with its Config, as Options.DefaultNamespaces does. Nil means
	// Options.DefaultNamespaces; an empty non-nil map means every
	// namespace. Ignored for a cluster-scoped kind.
	Namespaces map[string]Config
	// Label filters the kind on the server. Nil means
	// Options.DefaultLabelSelector.
	Label labels.Selector
	// Field filters the kind on the server. Nil means
	// Options.DefaultFieldSelector.
	Field fields.Selector
	// Transform runs on every object of the kind before it is stored, in
	// place of Options.DefaultTransform. Nil means the default.
	Transform toolscache.TransformFunc
	// KeepManagedFields keeps metadata.managedFields in cached objects.
	// False strips them (they are a third to a half of an object's bytes
	// and almost no controller reads them).
	KeepManagedFields bool
	// UnsafeDisableDeepCopy makes reads of the kind share memory with the
	// cache unless the read says otherwise. Nil means
	// Options.DefaultUnsafeDisableDeepCopy.
	UnsafeDisableDeepCopy *bool
	// EnableWatchBookmarks is accepted for controller-runtime's shape;
	// bookmarks are always asked for (see Config.EnableWatchBookmarks).
	EnableWatchBookmarks *bool
	// SyncPeriod is the kind's resync period, in place of
	// Options.SyncPeriod. Nil means Options.SyncPeriod; 0 means never.
	SyncPeriod *time.Duration
	// ShardSelector narrows the kind's lists and watches on the server
	// with a shardSelector (Kubernetes 1.37's ShardedListAndWatch) that
	// may change while the cache runs: a change ends the kind's watches,
	// and each informer lists again with the new selector, which drops
	// the objects outside it (its handlers see them deleted). The kind
	// always lists with InitialListPaged. package sharding sets it for a
	// ring in server-side mode. Nil means no shardSelector.
	ShardSelector ShardSelector
}

// ShardSelector is a kind's server-side shardSelector that may change
// (ByObject.ShardSelector).
type ShardSelector interface {
	// Shard returns the selector ("" for none), its generation, and a
	// channel closed once a later generation replaces it.
	Shard() (selector string, gen uint64, changed <-chan struct{})
	// Listing is called by each of the kind's informers, identified by
	// informer, before it lists with generation gen.
	Listing(informer any, gen uint64)
	// Listed is called by an informer once it stored the result of its
	// list of generation gen (the objects outside the selector are gone
	// from it and its handlers were told).
	Listed(informer any, gen uint64)
}

// kindConfig is the resolved configuration of one kind.
type kindConfig struct {
	namespaces        map[string]Config // nil: cluster-wide (config.go)
	label             labels.Selector
	field             fields.Selector
	transform         toolscache.TransformFunc
	keepManagedFields bool
	disableDeepCopy   bool
	resync            time.Duration
	streamingList     bool
	detectMutations   bool
	onMutation        func(error)
	shard             ShardSelector
}

// defaulted returns opts with every nil default filled in. It is the one
// defaulting site.
func (opts Options) defaulted() Options {
	if opts.Scheme == nil {
		// A scheme of the built-in kinds of its own: never client-go's
		// global scheme.Scheme, which other code may change.
		opts.Scheme = runtime.NewScheme()
		utilruntime.Must(clientgoscheme.AddToScheme(opts.Scheme))
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = log.Default()
	}
	// client-go logs request and response bodies, Secrets included, at
	// V(8) through this logger; they never reach it.
	opts.Logger = logfilter.WithoutBodies(opts.Logger)
	if !opts.DetectMutations {
		opts.DetectMutations = store.MutationDetectorFromEnv()
	}
	return opts
}

// resolveByObject validates opts and keys ByObject by kind. It returns
// every problem found, joined.
func (opts Options) resolveByObject() (map[schema.GroupVersionKind]ByObject, error) {
	var errs []error
	if opts.InitialList != InitialListPaged && opts.InitialList != InitialListStreaming {
		errs = append(errs, fmt.Errorf("cache: InitialList %s is not a mode; use InitialListPaged or InitialListStreaming", opts.InitialList))
	}
	if opts.SyncPeriod != nil && *opts.SyncPeriod < 0 {
		errs = append(errs, fmt.Errorf("cache: SyncPeriod %s is negative", *opts.SyncPeriod))
	}
	errs = append(errs, validateNamespaces("DefaultNamespaces", opts.DefaultNamespaces)...)
	byGVK := make(map[schema.GroupVersionKind]ByObject, len(opts.ByObject))
	for obj, bo := range opts.ByObject {
		gvk, err := apiutil.GVKForObject(obj, opts.Scheme)
		if err != nil {
			errs = append(errs, fmt.Errorf("cache: ByObject key %T: %w", obj, err))
			continue
		}
		if _, dup := byGVK[gvk]; dup {
			errs = append(errs, fmt.Errorf("cache: ByObject has %s twice", kinds.String(gvk)))
			continue
		}
		if bo.SyncPeriod != nil && *bo.SyncPeriod < 0 {
			errs = append(errs, fmt.Errorf("cache: ByObject[%s].SyncPeriod %s is negative", kinds.String(gvk), *bo.SyncPeriod))
		}
		errs = append(errs, validateNamespaces("ByObject["+kinds.String(gvk)+"].Namespaces", bo.Namespaces)...)
		byGVK[gvk] = bo
	}
	return byGVK, errors.Join(errs...)
}

// configFor resolves the configuration of gvk from o: byGVK (o's ByObject
// by kind), then the defaults.
func configFor(o Options, byGVK map[schema.GroupVersionKind]ByObject, gvk schema.GroupVersionKind) kindConfig {
	kc := kindConfig{
		namespaces: o.DefaultNamespaces,
		label:      o.DefaultLabelSelector,
		field:      o.DefaultFieldSelector,
		transform:  o.DefaultTransform,

		streamingList:   o.InitialList == InitialListStreaming,
		detectMutations: o.DetectMutations,
		onMutation:      o.OnMutation,
	}
	if o.DefaultUnsafeDisableDeepCopy != nil {
		kc.disableDeepCopy = *o.DefaultUnsafeDisableDeepCopy
	}
	if o.SyncPeriod != nil {
		kc.resync = *o.SyncPeriod
	}
	if bo, ok := byGVK[gvk]; ok {
		if bo.Namespaces != nil {
			kc.namespaces = bo.Namespaces
		}
		if bo.Label != nil {
			kc.label = bo.Label
		}
		if bo.Field != nil {
			kc.field = bo.Field
		}
		if bo.Transform != nil {
			kc.transform = bo.Transform
		}
		kc.keepManagedFields = bo.KeepManagedFields
		if bo.SyncPeriod != nil {
			kc.resync = *bo.SyncPeriod
		}
		if bo.UnsafeDisableDeepCopy != nil {
			kc.disableDeepCopy = *bo.UnsafeDisableDeepCopy
		}
		if bo.ShardSelector != nil {
			// The list-watch tells a list apart from a streaming one by
			// the request: a paged list it is.
			kc.shard, kc.streamingList = bo.ShardSelector, false
		}
	}
	if len(kc.namespaces) == 0 {
		kc.namespaces = nil
	}
	return kc
}
