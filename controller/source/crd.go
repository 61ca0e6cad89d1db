package source

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/handler"
)

// CRDOptions configures WaitForCRD. The zero value is valid.
type CRDOptions struct {
	// Scheme resolves the kind of a typed object. Nil means the object
	// must carry its apiVersion and kind, as an Unstructured or a
	// PartialObjectMetadata does.
	Scheme *runtime.Scheme
	// Reconciled marks the kind as the one the controller reconciles
	// (builder.For sets it). While such a kind is not served, the
	// controller drops every Request it takes from its queue instead of
	// reconciling it: no object of a kind that does not exist can be read.
	// False (Owns, Watches) drops nothing: the Requests name objects of
	// another kind, which still exists.
	Reconciled bool
}

// CRDSource is the Source returned by WaitForCRD.
type CRDSource struct {
	tmpl   *KindSource // the settings of each informer's KindSource
	mapper meta.RESTMapper
	opts   CRDOptions
	kind   string // "Kind.group", resolved by WaitForCRD (see Kind)

	waiting atomic.Bool // true until the kind is served

	mu   sync.Mutex
	run  *crdRun // the latest Start's; nil before Start
	gvk  schema.GroupVersionKind
	crds map[string]crdState // the CustomResourceDefinitions of the kind's group
	poke chan struct{}       // a CRD of the group changed; capacity 1
	// keeper watches, between runs, for the deletion of the CRD whose kind
	// the last run left served; nil when there is none.
	keeper *keeper
}

var (
	_ Source   = (*CRDSource)(nil)
	_ Preparer = (*CRDSource)(nil)
)

// WaitForCRD returns a Source like k that does not need k's kind to be
// served when it starts. k gives the cache, the object, the handler and the
// predicates; k itself is not started (start the returned source instead).
// mapper must be the mapper of the cache (the manager's GetRESTMapper).
//
// The source watches the metadata of the CustomResourceDefinitions through
// the cache (one shared informer for every such source of the cache), and:
//
//   - while the kind is not served (no CRD, or one not yet Established),
//     it waits: WaitForSync returns at once and Waiting reports true;
//   - when the kind is served (its CRD exists and the mapper finds the
//     kind, which discovery lists only once the CRD is Established), it
//     starts the kind's informer and hands its events to the handler;
//   - when the CRD is deleted, it removes the kind's informer from the
//     cache (before its list and watch fail, so nothing is logged at
//     ERROR), resets the mapper's discovery (a meta.ResettableRESTMapper,
//     as the manager's is) and waits again, for as long as it runs.
//
// A CRD being deleted (Terminating) keeps its kind served until it is
// gone, so that the controller can still remove its finalizers from the
// objects the API server deletes first.
func WaitForCRD(k *KindSource, mapper meta.RESTMapper, opts CRDOptions) *CRDSource {
	s := &CRDSource{tmpl: k, mapper: mapper, opts: opts, kind: groupKindName(k, opts.Scheme), poke: make(chan struct{}, 1)}
	s.waiting.Store(true)
	return s
}

// groupKindName names k's kind in full, "Kind.group" ("Kind" for a core
// kind), as schema.GroupKind's String does: through scheme for a typed
// object, else from the object's apiVersion and kind. When neither knows
// the kind (resolve then reports it), it is k's own name for it.
func groupKindName(k *KindSource, scheme *runtime.Scheme) string {
	if k == nil {
		return "<nil>"
	}
	if k.obj == nil {
		return k.kind
	}
	gvk := k.obj.GetObjectKind().GroupVersionKind()
	if scheme != nil {
		if resolved, err := apiutil.GVKForObject(k.obj, scheme); err == nil {
			gvk = resolved
		}
	}
	if gvk.Kind == "" {
		return k.kind
	}
	return gvk.GroupKind().String()
}

// String returns "kind <Kind.group> (when served)".
func (s *CRDSource) String() string { return "kind " + s.kind + " (when served)" }

// Kind returns the kind the source watches, in full: "Kind.group"
// ("Gizmo.example.com"), or "Kind" for a kind of the core group
// ("ConfigMap"). A typed object's kind is resolved through
// CRDOptions.Scheme, so two kinds of one name in different groups have
// different names here, in the controller's WaitingKinds, in the
// kubeloop_source_waiting{kind} label and in the manager's readiness.
func (s *CRDSource) Kind() string { return s.kind }

// Waiting reports whether the kind is not served now: the source waits for
// its CRD. It is true before Start.
func (s *CRDSource) Waiting() bool { return s.waiting.Load() }

// DropsRequests reports whether the controller should drop the Requests it
// takes from its queue: the kind is the reconciled one
// (CRDOptions.Reconciled) and is not served.
func (s *CRDSource) DropsRequests() bool { return s.opts.Reconciled && s.waiting.Load() }

// crdObject is the shape in which the cache holds CustomResourceDefinitions
// for these sources: metadata only.
func crdObject() *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}}
}

// resolve checks the source and finds the kind's group, version and kind.
func (s *CRDSource) resolve() error {
	if s.tmpl == nil {
		return errors.New("source: WaitForCRD: nil KindSource")
	}
	if err := s.tmpl.validate(); err != nil {
		return err
	}
	if s.mapper == nil {
		return fmt.Errorf("source: %s: nil RESTMapper", s)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.gvk.Empty() {
		return nil
	}
	gvk := s.tmpl.obj.GetObjectKind().GroupVersionKind()
	if s.opts.Scheme != nil {
		var err error
		if gvk, err = apiutil.GVKForObject(s.tmpl.obj, s.opts.Scheme); err != nil {
			return fmt.Errorf("source: %s: %w", s, err)
		}
	}
	if gvk.Kind == "" || gvk.Version == "" {
		return fmt.Errorf("source: %s: the object has no apiVersion and kind, and CRDOptions.Scheme is nil", s)
	}
	s.gvk = gvk
	return nil
}

// Prepare checks the source and obtains the informer of the CRDs' metadata,
// so that the cache lists it with the others. The kind's own informer is
// obtained by Start, once the kind is served: a replica that never starts
// the source (a standby) never holds an informer whose CRD may go away.
func (s *CRDSource) Prepare(ctx context.Context) error {
	if err := s.resolve(); err != nil {
		return err
	}
	if _, err := s.tmpl.cache.GetInformer(ctx, crdObject()); err != nil {
		return fmt.Errorf("source: %s: informer of CustomResourceDefinitions: %w", s, err)
	}
	return nil
}

// Start starts the goroutine that follows the kind's CRD and starts and
// stops the kind's informer; it ends with ctx, and with it the handler
// registrations (the informer stays in the cache, which stops it; should
// the CRD be deleted before the next Start, the informer is removed from
// the cache then, so that a standby does not list a kind that is gone). Start
// may be called again once the ctx of the previous call has ended; the new
// run begins after the previous one's goroutine returned and reuses the
// informers the cache still holds (their stores, without a new list).
func (s *CRDSource) Start(ctx context.Context, q handler.Queue) error {
	if err := s.resolve(); err != nil {
		return err
	}
	s.mu.Lock()
	prev := s.run
	if prev != nil && prev.ctx.Err() == nil {
		s.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrStarted, s)
	}
	r := &crdRun{ctx: ctx, settled: make(chan struct{}), done: make(chan struct{})}
	s.run = r
	s.mu.Unlock()
	log := logr.FromContextOrDiscard(ctx).WithValues("kind", s.Kind())
	go func() {
		defer close(r.done)
		if prev != nil {
			<-prev.done // the previous run has stopped its activation
		}
		s.follow(ctx, r, q, log)
	}()
	return nil
}

// WaitForSync waits until the latest Start's run knows whether the kind is
// served and, if it is, until the handler has been handed the initial
// list. A kind that is not served returns nil at once (after the CRDs'
// informer synced).
func (s *CRDSource) WaitForSync(ctx context.Context) error {
	s.mu.Lock()
	r := s.run
	s.mu.Unlock()
	var settled <-chan struct{} // nil before Start: wait for ctx
	if r != nil {
		settled = r.settled
	}
	select {
	case <-settled:
		return r.err
	case <-ctx.Done():
	}
	what := "its CRD informer"
	if !s.Waiting() {
		what = "its informer"
	}
	err := fmt.Errorf("source: %s did not sync (%s): %w", s, what, context.Cause(ctx))
	if health := s.tmpl.cache.Healthy(); health != nil {
		err = fmt.Errorf("%w (%w)", err, health)
	}
	return err
}

// follow follows the CRDs of the kind's group for run r until ctx ends.
func (s *CRDSource) follow(ctx context.Context, r *crdRun, q handler.Queue, log logr.Logger) {
	inf, err := s.tmpl.cache.GetInformer(ctx, crdObject())
	if err != nil {
		r.fail(fmt.Errorf("source: %s: informer of CustomResourceDefinitions: %w", s, err))
		return
	}
	s.mu.Lock()
	s.crds = map[string]crdState{}
	s.mu.Unlock()
	reg, err := inf.AddEventHandler(crdEvents{s})
	if err != nil {
		r.fail(fmt.Errorf("source: %s: watch CustomResourceDefinitions: %w", s, err))
		return
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	if !waitRegistration(ctx, reg) {
		return
	}
	s.dropKeeper() // this run follows the CRD now (and sees what the keeper did)
	f := follower{s: s, run: r, q: q, log: log}
	f.loop(ctx)
	// The kind's informer stays in the cache with its store, for the next
	// run to hand over; if its CRD goes before then, remove it.
	if act := f.act; act != nil && act.crdName != "" && act.ks.informer != nil {
		s.keep(inf, act, log)
	}
}

// waitRegistration waits until reg has been handed the informer's initial
// list, and reports whether it was before ctx ended.
func waitRegistration(ctx context.Context, reg toolscache.ResourceEventHandlerRegistration) bool {
	if checker := reg.HasSyncedChecker(); checker != nil {
		select {
		case <-checker.Done():
			return true
		case <-ctx.Done():
			return false
		}
	}
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for !reg.HasSynced() {
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		}
	}
	return true
}
