package builder

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-logr/logr"
	"reflect"
	"strings"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/reconcile"
)

// Builder collects the watches and options of one controller: the
// TypedBuilder of reconcile.Request. Create it with ControllerManagedBy;
// finish with Complete or Build.
type Builder = TypedBuilder[reconcile.Request]

// TypedBuilder is Builder with controller-runtime's request type
// parameter, created by TypedControllerManagedBy. kubeloop's controllers
// queue reconcile.Request: a TypedBuilder of any other request type
// compiles, and Complete and Build refuse it with an error wrapping
// controller.ErrUnsupportedRequest.
type TypedBuilder[request comparable] struct {
	mgr              controller.Manager
	forInput         *watchInput
	owns             []watchInput
	watches          []watchInput
	rawSources       []source.TypedSource[request]
	globalPredicates []predicate.Predicate
	opts             controller.TypedOptions[request]
	logConstructor   func(*request) logr.Logger
	name             string
	errs             []error
}

// watchInput is one For, Owns or Watches call.
type watchInput struct {
	obj     client.Object
	handler handler.EventHandler
	options
}

// ControllerManagedBy starts a Builder for a controller that mgr runs.
func ControllerManagedBy(mgr controller.Manager) *Builder {
	return &Builder{mgr: mgr}
}

// TypedControllerManagedBy starts a TypedBuilder, controller-runtime's
// form of ControllerManagedBy: TypedControllerManagedBy[reconcile.Request]
// is ControllerManagedBy; other request types are refused by Complete and
// Build.
func TypedControllerManagedBy[request comparable](mgr controller.Manager) *TypedBuilder[request] {
	return &TypedBuilder[request]{mgr: mgr}
}

// For sets the kind the controller reconciles: each event for an object of
// obj's kind enqueues that object. It may be called once.
func (b *TypedBuilder[request]) For(obj client.Object, opts ...ForOption) *TypedBuilder[request] {
	if b.forInput != nil {
		b.errs = append(b.errs, fmt.Errorf("builder: For called more than once (%T, then %T)", b.forInput.obj, obj))
		return b
	}
	in := watchInput{obj: obj}
	in.apply(opts)
	b.forInput = &in
	return b
}

// Owns watches objects of obj's kind and enqueues their owner of For's
// kind: the controller owner only, or every owner with MatchEveryOwner.
func (b *TypedBuilder[request]) Owns(obj client.Object, opts ...OwnsOption) *TypedBuilder[request] {
	in := watchInput{obj: obj}
	in.apply(opts)
	b.owns = append(b.owns, in)
	return b
}

// Watches watches objects of obj's kind and hands their events to h, an
// EventHandler (a TypedEventHandler of client.Object and the builder's
// request type, as in controller-runtime).
func (b *TypedBuilder[request]) Watches(obj client.Object, h handler.TypedEventHandler[client.Object, request], opts ...WatchesOption) *TypedBuilder[request] {
	in := watchInput{obj: obj}
	if h != nil {
		in.handler, _ = any(h).(handler.EventHandler) // nil for another request type; Build refuses it first
	}
	in.apply(opts)
	b.watches = append(b.watches, in)
	return b
}

// WatchesRawSource adds a source as is: no predicates of the builder apply.
func (b *TypedBuilder[request]) WatchesRawSource(src source.TypedSource[request]) *TypedBuilder[request] {
	b.rawSources = append(b.rawSources, src)
	return b
}

// WithEventFilter adds a predicate to every For, Owns and Watches of the
// builder.
func (b *TypedBuilder[request]) WithEventFilter(p predicate.Predicate) *TypedBuilder[request] {
	b.globalPredicates = append(b.globalPredicates, p)
	return b
}

// WithOptions sets the controller's options; the reconciler given to
// Complete or Build replaces Options.Reconciler.
func (b *TypedBuilder[request]) WithOptions(opts controller.TypedOptions[request]) *TypedBuilder[request] {
	b.opts = opts
	return b
}

// WithLogConstructor sets the controller's Options.LogConstructor, as
// controller-runtime's: it makes the controller's logger (called with nil)
// and each reconcile's (called with the Request; "reconcileID" is added),
// in place of the built-in keys. An Options.LogConstructor given through
// WithOptions takes precedence.
func (b *TypedBuilder[request]) WithLogConstructor(logConstructor func(*request) logr.Logger) *TypedBuilder[request] {
	b.logConstructor = logConstructor
	return b
}

// Named sets the controller's name, used in logs and metrics; it defaults
// to the lower-cased kind of For. Names must be unique within a manager.
func (b *TypedBuilder[request]) Named(name string) *TypedBuilder[request] {
	b.name = name
	return b
}

// Complete builds the controller and adds it to the manager.
func (b *TypedBuilder[request]) Complete(r reconcile.TypedReconciler[request]) error {
	_, err := b.Build(r)
	return err
}

// Build builds the controller, adds it to the manager and returns it.
// Every mistake it can see is reported at once, joined into one error: the
// builder's own (For twice, neither For nor Named, Owns without For, nil
// objects, handlers, predicates or sources, a nil reconciler), a type the
// scheme does not know in For, Owns or Watches, controller.Options that
// controller.New would reject, and, once all of these are right, every
// watched kind the API server does not serve. A builder of a request type
// other than reconcile.Request is refused with an error wrapping
// controller.ErrUnsupportedRequest, before anything else is checked.
//
// Zero controller options take the manager's defaults when it is a
// controller.ConfigProvider (manager.Options.Controller): the workers of
// config.Controller.GroupKindConcurrency for For's kind first, then
// DefaultFromConfig.
func (b *TypedBuilder[request]) Build(tr reconcile.TypedReconciler[request]) (*controller.Controller, error) {
	typedOpts, ok := any(b.opts).(controller.Options)
	if !ok {
		return nil, fmt.Errorf("builder: %w", controller.UnsupportedRequestError(reflect.TypeFor[request]()))
	}
	var r reconcile.Reconciler
	if tr != nil {
		r, _ = any(tr).(reconcile.Reconciler)
	}
	if err := b.validate(r); err != nil {
		return nil, err
	}
	name := b.controllerName()
	srcs, err := b.sources()
	if err != nil {
		return nil, err
	}
	opts := typedOpts
	opts.Reconciler = r
	if ctor, ok := any(b.logConstructor).(func(*reconcile.Request) logr.Logger); ok && ctor != nil && opts.LogConstructor == nil {
		opts.LogConstructor = ctor
	}
	if b.forInput != nil && opts.ForKind.Empty() { // the logger's controllerGroup, controllerKind and <Kind>
		if gvk, err := apiutil.GVKForObject(b.forInput.obj, b.mgr.GetScheme()); err == nil {
			opts.ForKind = gvk.GroupKind()
		}
	}
	if err := b.shard(name, &opts); err != nil { // sharding.go
		return nil, err
	}
	if opts.RateLimiter == nil && b.usesFleet() { // each cluster backs off on its own (clusters.go)
		opts.RateLimiter = controller.PerClusterRateLimiter(nil)
	}
	b.defaultFromManager(&opts)
	if opts.Logger.GetSink() == nil {
		opts.Logger = b.mgr.GetLogger()
	}
	if opts.Metrics == nil {
		opts.Metrics = b.mgr.Metrics()
	}
	if tp, ok := b.mgr.(controller.TracerProvider); ok && opts.Tracer == nil {
		opts.Tracer = tp.GetTracer()
	}
	// Watch before adding to the manager, so that a failed watch (an
	// uninstalled CRD, say) leaves no half-built controller behind.
	ctrl, err := controller.NewUnmanaged(name, opts)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, src := range srcs {
		if err := ctrl.Watch(src); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := b.mgr.Add(ctrl); err != nil {
		return nil, fmt.Errorf("builder: controller %q: add to manager: %w", name, err)
	}
	if err := b.engageFleet(ctrl); err != nil { // clusters.go
		return nil, err
	}
	return ctrl, nil
}

// validate returns every mistake made with the builder, joined: those of
// the calls themselves, the kinds the scheme does not know, and the
// controller options.
func (b *TypedBuilder[request]) validate(r reconcile.Reconciler) error {
	errs := append([]error(nil), b.errs...)
	if b.mgr == nil {
		errs = append(errs, errors.New("builder: ControllerManagedBy was given a nil manager"))
	}
	if r == nil {
		errs = append(errs, errors.New("builder: Complete/Build needs a reconciler, got nil"))
	}
	if b.forInput == nil && b.name == "" {
		errs = append(errs, errors.New("builder: one of For or Named must be called"))
	}
	if b.forInput == nil && len(b.owns) > 0 {
		errs = append(errs, errors.New("builder: Owns needs For: the owner kind is For's kind"))
	}
	for i, p := range b.globalPredicates {
		if p == nil {
			errs = append(errs, fmt.Errorf("builder: WithEventFilter was given a nil predicate (call %d)", i+1))
		}
	}
	if b.forInput != nil {
		errs = append(errs, b.checkInput("For", *b.forInput)...)
	}
	for _, in := range b.owns {
		errs = append(errs, b.checkInput("Owns", in)...)
	}
	for _, in := range b.watches {
		errs = append(errs, b.checkInput("Watches", in)...)
		if in.handler == nil {
			errs = append(errs, fmt.Errorf("builder: Watches(%T) was given a nil handler", in.obj))
		}
	}
	for _, src := range b.rawSources {
		if isNilSource(src) {
			errs = append(errs, errors.New("builder: WatchesRawSource was given a nil source"))
		}
	}
	if b.mgr != nil && b.usesFleet() {
		if _, ok := b.mgr.(controller.FleetManager); !ok {
			errs = append(errs, fmt.Errorf("builder: OnFleet or OnClusters needs a manager with a fleet (manager.Options.Clusters); %T has none", b.mgr))
		}
	}
	errs = append(errs, b.checkOptions(r))
	return errors.Join(errs...)
}

// checkInput returns the mistakes of one For, Owns or Watches call: a nil
// object, a type the scheme does not know, a nil predicate.
func (b *TypedBuilder[request]) checkInput(verb string, in watchInput) []error {
	var errs []error
	switch {
	case in.obj == nil:
		errs = append(errs, fmt.Errorf("builder: %s was given a nil object", verb))
	case b.mgr != nil:
		if _, err := apiutil.GVKForObject(in.obj, b.mgr.GetScheme()); err != nil {
			errs = append(errs, fmt.Errorf("builder: %s(%T): %w", verb, in.obj, err))
		}
	}
	for _, p := range in.predicates {
		if p == nil {
			errs = append(errs, fmt.Errorf("builder: %s(%T) was given a nil predicate", verb, in.obj))
		}
	}
	return errs
}

// checkOptions returns what controller.NewUnmanaged would reject in the
// builder's options, other than the reconciler (validate reports that one)
// and the name (For or Named gives it). It builds a controller that is
// thrown away: with no Metrics registerer that has no side effect.
func (b *TypedBuilder[request]) checkOptions(r reconcile.Reconciler) error {
	probe, _ := any(b.opts).(controller.Options) // Build checked the request type
	probe.Reconciler = r
	if probe.Reconciler == nil {
		probe.Reconciler = reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, nil
		})
	}
	probe.Metrics = nil
	name := b.name
	if name == "" && b.mgr != nil && b.forInput != nil && b.forInput.obj != nil {
		name = b.controllerName()
	}
	if name == "" {
		name = "(unnamed)"
	}
	_, err := controller.NewUnmanaged(name, probe)
	return err
}

// controllerName returns Named's name or the lower-cased kind of For
// ("" when For's type is not in the scheme; validate reports that).
func (b *TypedBuilder[request]) controllerName() string {
	if b.name != "" {
		return b.name
	}
	gvk, err := apiutil.GVKForObject(b.forInput.obj, b.mgr.GetScheme())
	if err != nil {
		return ""
	}
	return strings.ToLower(gvk.Kind)
}

// sources returns the sources of every For, Owns, Watches and
// WatchesRawSource call.
func (b *TypedBuilder[request]) sources() ([]source.Source, error) {
	var srcs []source.Source
	var errs []error
	c := b.mgr.GetCache()
	scheme := b.mgr.GetScheme()
	kind := func(in watchInput, h handler.EventHandler, reconciled bool) {
		if !in.local() { // the fleet's clusters only (clusters.go)
			return
		}
		obj, err := in.project(in.obj, scheme)
		if err != nil {
			errs = append(errs, fmt.Errorf("builder: OnlyMetadata %T: %w", in.obj, err))
			return
		}
		preds := append(append([]predicate.Predicate(nil), b.globalPredicates...), in.predicates...)
		srcs = append(srcs, b.kindSource(in, source.Kind(c, obj, h, preds...), reconciled)) // crd.go
	}
	if b.forInput != nil {
		kind(*b.forInput, &handler.EnqueueRequestForObject{}, true)
	}
	for _, in := range b.owns {
		opt := handler.OnlyControllerOwner()
		if in.everyOwner {
			opt = handler.AllOwners()
		}
		kind(in, handler.EnqueueRequestForOwner(scheme, b.mgr.GetRESTMapper(), b.forInput.obj, opt), false)
	}
	for _, in := range b.watches {
		kind(in, in.handler, false)
	}
	for _, src := range b.rawSources {
		s, _ := any(src).(source.Source) // Build checked the request type
		srcs = append(srcs, s)
	}
	return srcs, errors.Join(errs...)
}
