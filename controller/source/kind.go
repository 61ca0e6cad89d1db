package source

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/reconcile"
)

// KindSource is the Source returned by Kind.
type KindSource struct {
	cache   cache.Informers
	obj     client.Object
	handler handler.EventHandler
	preds   []predicate.Predicate
	kind    string
	errs    []error // mistakes Kind found

	mu       sync.Mutex
	informer cache.Informer
	run      *kindRun // the latest Start's; nil before Start
}

// kindRun is one Start of a KindSource, until its ctx ends.
type kindRun struct {
	ctx context.Context
	// ready is closed when Start has registered the handler (reg is set)
	// or failed (err is set).
	ready chan struct{}
	reg   toolscache.ResourceEventHandlerRegistration
	err   error
}

var (
	_ Source   = (*KindSource)(nil)
	_ Preparer = (*KindSource)(nil)
)

// Kind returns a Source of the events of obj's kind from c's shared
// informer, filtered by preds and handed to h. obj is a typed object, or an
// *unstructured.Unstructured or *metav1.PartialObjectMetadata with its
// apiVersion and kind set.
//
// The type parameter is controller-runtime's and is inferred from h and
// preds: with the untyped handlers and predicates (handler.EventHandler,
// predicate.Predicate) it is client.Object; with typed ones, such as
// &handler.TypedEnqueueRequestForObject[*v1.Foo]{} and
// predicate.TypedFuncs[*v1.Foo]{...}, it is *v1.Foo and they are handed
// each event's objects as *v1.Foo. obj must then be of that type; Kind
// records the mistake otherwise, and Prepare and Start return it.
func Kind[object client.Object](c cache.Informers, obj client.Object, h handler.TypedEventHandler[object, reconcile.Request], preds ...predicate.TypedPredicate[object]) *KindSource {
	k := &KindSource{cache: c, obj: obj, kind: kindName(obj)}
	if h != nil {
		k.handler = untypedHandler(h)
	}
	k.preds = make([]predicate.Predicate, len(preds))
	for i, p := range preds {
		if p == nil {
			k.errs = append(k.errs, fmt.Errorf("source: %s: nil predicate (argument %d)", k, i+1))
			continue
		}
		k.preds[i] = untypedPredicate(p)
	}
	if _, ok := any(obj).(object); obj != nil && !ok {
		k.errs = append(k.errs, fmt.Errorf("source: %s: object %T is not of the handler's and predicates' type %s",
			k, obj, reflect.TypeFor[object]()))
	}
	return k
}

// TypedKind is Kind with controller-runtime's request type parameter.
// With reconcile.Request it returns Kind's source; with any other request
// type it returns a source whose Start and WaitForSync fail with an error
// saying so, since kubeloop's queue holds reconcile.Request.
func TypedKind[object client.Object, request comparable](c cache.Informers, obj object, h handler.TypedEventHandler[object, request], preds ...predicate.TypedPredicate[object]) TypedSource[request] {
	rh, ok := any(h).(handler.TypedEventHandler[object, reconcile.Request])
	if !ok && h != nil {
		return unsupported[request]{what: "TypedKind"}
	}
	src, ok := any(Kind(c, obj, rh, preds...)).(TypedSource[request])
	if !ok {
		return unsupported[request]{what: "TypedKind"}
	}
	return src
}

// kindName names obj's kind for errors: its kind if set, else its Go type.
func kindName(obj client.Object) string {
	if obj == nil {
		return "<nil>"
	}
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		if gvk.Group == "" {
			return gvk.Kind
		}
		return gvk.Kind + "." + gvk.Group
	}
	t := reflect.TypeOf(obj)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// String returns "kind <Kind>".
func (k *KindSource) String() string { return "kind " + k.kind }

func (k *KindSource) validate() error {
	errs := append([]error(nil), k.errs...)
	if k.cache == nil {
		errs = append(errs, fmt.Errorf("source: %s: nil cache", k))
	}
	if k.obj == nil {
		errs = append(errs, errors.New("source: Kind: nil object"))
	}
	if k.handler == nil {
		errs = append(errs, fmt.Errorf("source: %s: nil handler", k))
	}
	return errors.Join(errs...)
}

// Prepare obtains the informer of the kind, so that the cache starts it
// (or, if the cache runs, starts it now) whether or not this replica leads.
func (k *KindSource) Prepare(ctx context.Context) error {
	if err := k.validate(); err != nil {
		return err
	}
	_, err := k.getInformer(ctx)
	return err
}

func (k *KindSource) getInformer(ctx context.Context) (cache.Informer, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.informer != nil {
		return k.informer, nil
	}
	inf, err := k.cache.GetInformer(ctx, k.obj)
	if err != nil {
		return nil, fmt.Errorf("source: get informer for %s: %w", k, err)
	}
	k.informer = inf
	return inf, nil
}

// Start registers the event handler with the informer; the registration
// is removed when ctx ends. If Prepare was not called, the informer is
// obtained in the background and WaitForSync waits for it.
//
// Start may be called again once the ctx of the previous call has ended
// (a controller restarted for a new leader term): the new registration is
// handed every object the informer holds as an initial add, from its
// store, without a new list. A call while the previous ctx is live fails
// with ErrStarted.
func (k *KindSource) Start(ctx context.Context, q handler.Queue) error {
	if err := k.validate(); err != nil {
		return err
	}
	k.mu.Lock()
	if k.run != nil && k.run.ctx.Err() == nil {
		k.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrStarted, k)
	}
	r := &kindRun{ctx: ctx, ready: make(chan struct{})}
	k.run = r
	inf := k.informer
	k.mu.Unlock()

	if inf != nil {
		return k.register(r, inf, q)
	}
	go func() {
		inf, err := k.getInformer(ctx)
		if err != nil {
			r.err = err
			close(r.ready)
			return
		}
		_ = k.register(r, inf, q) // WaitForSync reports the error
	}()
	return nil
}

// register adds the handler for run r and closes r.ready; its error is
// also kept for WaitForSync.
func (k *KindSource) register(r *kindRun, inf cache.Informer, q handler.Queue) error {
	defer close(r.ready)
	eh := &eventHandler{ctx: r.ctx, queue: q, handler: k.handler, preds: k.preds, kind: k.kind}
	eh.traced, _ = q.(EventQueue) // trace.go
	reg, err := inf.AddEventHandler(eh)
	if err != nil {
		r.err = fmt.Errorf("source: add event handler for %s: %w", k, err)
		return r.err
	}
	r.reg = reg
	context.AfterFunc(r.ctx, func() { _ = inf.RemoveEventHandler(reg) })
	return nil
}

// WaitForSync waits until the handler of the latest Start has been handed
// every object of the informer's initial list (or, after a restart, of its
// store). When ctx ends first it returns an error naming the kind and, if
// the cache knows it, why the kind did not sync.
func (k *KindSource) WaitForSync(ctx context.Context) error {
	k.mu.Lock()
	r := k.run
	k.mu.Unlock()
	if r == nil { // not started: nothing will sync
		<-ctx.Done()
		return k.syncError(ctx)
	}
	select {
	case <-r.ready:
	case <-ctx.Done():
		return k.syncError(ctx)
	}
	if r.err != nil {
		return r.err
	}
	if checker := r.reg.HasSyncedChecker(); checker != nil {
		select {
		case <-checker.Done():
			return nil
		case <-ctx.Done():
			return k.syncError(ctx)
		}
	}
	return k.pollSynced(ctx, r.reg)
}

// syncError reports that the kind did not sync before ctx ended.
func (k *KindSource) syncError(ctx context.Context) error {
	err := fmt.Errorf("source: %s did not sync: %w", k, context.Cause(ctx))
	if health := k.cache.Healthy(); health != nil {
		err = fmt.Errorf("%w (%w)", err, health)
	}
	return err
}

// pollInterval is how often pollSynced checks a registration without a
// DoneChecker.
const pollInterval = 100 * time.Millisecond

// pollSynced polls the registration's HasSynced until it is true or ctx
// ends; it serves informers whose registration offers no DoneChecker.
func (k *KindSource) pollSynced(ctx context.Context, reg toolscache.ResourceEventHandlerRegistration) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for !reg.HasSynced() {
		select {
		case <-t.C:
		case <-ctx.Done():
			return k.syncError(ctx)
		}
	}
	return nil
}
