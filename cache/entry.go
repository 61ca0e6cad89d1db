package cache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// shape is the Go representation of cached objects. Each shape has its own
// informers, so typed and unstructured reads of one kind never collide.
type shape uint8

const (
	shapeTyped shape = iota
	shapeUnstructured
	shapeMetadata
)

func (s shape) String() string {
	switch s {
	case shapeUnstructured:
		return "unstructured"
	case shapeMetadata:
		return "metadata"
	}
	return "typed"
}

func shapeOf(obj runtime.Object) shape {
	switch obj.(type) {
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return shapeMetadata
	case runtime.Unstructured:
		return shapeUnstructured
	}
	return shapeTyped
}

// kindKey names one family of informers: a kind in one shape.
type kindKey struct {
	shape shape
	gvk   schema.GroupVersionKind
}

func compareKeys(a, b kindKey) int {
	return strings.Compare(a.shape.String()+kinds.String(a.gvk), b.shape.String()+kinds.String(b.gvk))
}

// errRemoved is returned by waitSynced for an informer removed meanwhile.
var errRemoved = errors.New("cache: informer removed")

// entry is the informers of one kind and shape: one cluster-wide, or one
// per watched namespace.
type entry struct {
	key        kindKey
	mapping    *meta.RESTMapping
	namespaced bool
	restricted bool // namespaced and limited to byNS's namespaces
	noCopy     bool // reads share memory unless the read says otherwise
	informers  []*nsInformer
	byNS       map[string]*nsInformer // "" when cluster-wide
	log        logr.Logger

	mu      sync.Mutex
	cancel  context.CancelFunc // set when started
	removed bool
	done    chan struct{} // closed when every informer has returned (or on removal before start)
}

// nsInformer is one informer and the health of its list-watch.
type nsInformer struct {
	namespace string
	inf       *storeInformer
	health    listWatchHealth
}

// err returns why the informer's list-watch is failing, or nil.
func (n *nsInformer) err() error { return n.health.err() }

// newNSInformer builds the informer of e's kind in namespace ns ("" for
// all), with the transform and health tracking.
func (e *entry) newNSInformer(f listWatchFactory, ns string, kc kindConfig, transform storeTransform, scheme *runtime.Scheme) (*nsInformer, error) {
	lw, err := f.listWatch(e.key, e.mapping, ns, kc)
	if err != nil {
		return nil, fmt.Errorf("cache: list-watch of %s: %w", kinds.String(e.key.gvk), err)
	}
	example, err := exampleObject(e.key, scheme)
	if err != nil {
		return nil, err
	}
	ni := &nsInformer{namespace: ns}
	ni.health.log = e.log
	if ns != "" {
		ni.health.log = e.log.WithValues("namespace", ns)
	}
	inf := newStoreInformer(&trackingLW{inner: lw, health: &ni.health, streaming: kc.streamingList}, example, storeInformerOptions{
		description: kinds.String(e.key.gvk),
		resync:      kc.resync,
		transform:   transform,
		onWatchErr: func(ctx context.Context, _ *toolscache.Reflector, err error) {
			ni.health.reflectorFailed(ctx, err)
		},
	})
	ni.inf = inf
	return ni, nil
}

// exampleObject returns the object type the informer of key stores.
func exampleObject(key kindKey, scheme *runtime.Scheme) (runtime.Object, error) {
	switch key.shape {
	case shapeUnstructured:
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(key.gvk)
		return u, nil
	case shapeMetadata:
		return &metav1.PartialObjectMetadata{}, nil
	}
	obj, err := scheme.New(key.gvk)
	if err != nil {
		return nil, fmt.Errorf("cache: %s: %w", kinds.String(key.gvk), err)
	}
	return obj, nil
}

// start runs every informer of e under parent; wg tracks the goroutines.
// The caller holds the cache's lock.
func (e *entry) start(parent context.Context, wg *sync.WaitGroup) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.removed || e.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(klog.NewContext(parent, e.log))
	e.cancel = cancel
	var iwg sync.WaitGroup
	for _, ni := range e.informers {
		iwg.Go(func() { ni.inf.RunWithContext(ctx) })
	}
	wg.Go(func() {
		iwg.Wait()
		close(e.done)
	})
}

// stop stops e's informers and waits for them to return, or for ctx.
func (e *entry) stop(ctx context.Context) error {
	e.mu.Lock()
	if e.removed {
		e.mu.Unlock()
		return nil
	}
	e.removed = true
	cancel := e.cancel
	if cancel == nil {
		close(e.done)
	}
	e.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cache: stop informer of %s: %w", kinds.String(e.key.gvk), ctx.Err())
	}
}

// waitSynced waits until every informer of e has synced. It returns
// errRemoved if e is removed or stopped first, and ctx's error, with the
// latest list-watch failure, if ctx ends first.
func (e *entry) waitSynced(ctx context.Context) error {
	for _, ni := range e.informers {
		select {
		case <-ni.inf.HasSyncedChecker().Done():
			continue
		default:
		}
		select {
		case <-ni.inf.HasSyncedChecker().Done():
		case <-e.done:
			return errRemoved
		case <-ctx.Done():
			if herr := ni.err(); herr != nil {
				return fmt.Errorf("%w (last list or watch error: %w)", ctx.Err(), herr)
			}
			return ctx.Err()
		}
	}
	return nil
}

// healthErrors returns one error per informer whose list-watch is failing
// (see listWatchHealth).
func (e *entry) healthErrors() []error {
	var errs []error
	for _, ni := range e.informers {
		err := ni.err()
		if err == nil {
			continue
		}
		where := kinds.String(e.key.gvk)
		if e.key.shape != shapeTyped {
			where += " (" + e.key.shape.String() + ")"
		}
		if ni.namespace != "" {
			where += " in namespace " + ni.namespace
		}
		errs = append(errs, fmt.Errorf("cache: %s: %w", where, err))
	}
	return errs
}

// addFieldIndex adds the index of field to every informer of e.
func (e *entry) addFieldIndex(field string, extract client.IndexerFunc) error {
	name := fieldIndexName(field)
	fn := func(obj any) ([]string, error) {
		o, ok := obj.(client.Object)
		if !ok {
			return nil, fmt.Errorf("object %T has no metadata", obj)
		}
		return indexKeys(o.GetNamespace(), extract(o)), nil
	}
	for _, ni := range e.informers {
		if err := ni.inf.AddIndexers(toolscache.Indexers{name: fn}); err != nil {
			return err
		}
	}
	return nil
}

// informer returns what GetInformer hands out: the informer itself when
// there is one, else a fan-out over the namespaces.
func (e *entry) informer() Informer {
	if len(e.informers) == 1 {
		return e.informers[0].inf
	}
	infs := make([]*storeInformer, len(e.informers))
	for i, ni := range e.informers {
		infs[i] = ni.inf
	}
	return &multiInformer{informers: infs, done: e.done}
}
