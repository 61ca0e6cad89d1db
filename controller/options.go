package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/config"
	"github.com/kubeloop/kubeloop/internal/logfilter"
	"github.com/kubeloop/kubeloop/log"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/trace"
	"github.com/kubeloop/kubeloop/workqueue"
)

// Manager is what a controller needs from the manager that runs it. The
// manager package implements it; tests may implement it themselves.
type Manager interface {
	// GetClient returns the client that reads from the cache.
	GetClient() client.Client
	// GetCache returns the cache whose informers feed the sources.
	GetCache() cache.Cache
	// GetScheme returns the scheme that maps Go types to kinds.
	GetScheme() *runtime.Scheme
	// GetRESTMapper returns the mapper from kinds to resources.
	GetRESTMapper() meta.RESTMapper
	// GetLogger returns the manager's logger.
	GetLogger() logr.Logger
	// Metrics returns the registerer of the manager's metrics.
	Metrics() prometheus.Registerer
	// Add runs runnable when the manager starts (after winning leader
	// election if runnable needs it). It rejects a second controller with
	// the same ControllerName.
	Add(runnable interface{ Start(context.Context) error }) error
}

// Defaults of Options.
const (
	DefaultCacheSyncTimeout = 2 * time.Minute
)

// Options configures a Controller: the TypedOptions of reconcile.Request.
type Options = TypedOptions[reconcile.Request]

// TypedOptions configures a Controller. The zero value is valid except for
// Reconciler, which is required. The request type parameter is
// controller-runtime's: kubeloop's controllers queue reconcile.Request, so
// use Options (NewTyped refuses any other request type). Fields left zero
// take the manager's config.Controller (manager.Options.Controller) when
// the controller is built with New or controller/builder; see
// DefaultFromConfig.
type TypedOptions[request comparable] struct {
	// Reconciler is called for every Request. Required.
	Reconciler reconcile.TypedReconciler[request]

	// MaxConcurrentReconciles is the number of workers; 0 means 1.
	MaxConcurrentReconciles int

	// RateLimiter decides the backoff of failed Requests; nil means
	// workqueue.DefaultRateLimiter (5ms doubling to 1000s per Request, at
	// most 10 qps with a burst of 100 overall).
	RateLimiter workqueue.RateLimiter[request]

	// CacheSyncTimeout bounds how long Start waits for each source to sync;
	// 0 means DefaultCacheSyncTimeout (2 minutes).
	CacheSyncTimeout time.Duration

	// ReconcileTimeout bounds each Reconcile call through its context; 0
	// means no bound. Timeouts are counted in
	// controller_runtime_reconcile_timeouts_total.
	ReconcileTimeout time.Duration

	// RecoverPanic turns a panicking Reconcile into an error; nil means
	// true. With false, a panic crashes the process.
	RecoverPanic *bool

	// NeedLeaderElection says whether the manager runs the controller only
	// on the leader; nil means true.
	NeedLeaderElection *bool

	// Logger is the base of the per-reconcile loggers; the zero Logger
	// means the manager's logger (New) or one writing through log/slog's
	// default handler (NewUnmanaged). The controller adds
	// controller-runtime's keys (see ForKind). logr.Discard() equals the
	// zero Logger, so to silence a controller give a sink that drops
	// lines, such as funcr.New(func(string, string) {}, funcr.Options{}).
	Logger logr.Logger

	// ForKind is the kind the controller reconciles, for its log lines,
	// which then carry controller-runtime's keys of a builder-made
	// controller: every line "controller", "controllerGroup" and
	// "controllerKind"; a reconcile's lines also "<Kind>": {"name",
	// "namespace"} (a klog.ObjectRef), "namespace", "name" and
	// "reconcileID". controller/builder sets it to For's kind. Zero
	// (unknown) leaves out controllerGroup and controllerKind and puts the
	// object reference under "object", as controller-runtime's
	// controller.New does.
	ForKind schema.GroupKind

	// LogConstructor, when set, makes the controller's loggers instead,
	// as controller-runtime's: called with nil for the controller's own
	// logger and with the Request for each reconcile, whose logger then
	// gets "reconcileID" added and is the one log.FromContext returns in
	// Reconcile. It replaces the keys of Logger and ForKind and is called
	// on every reconcile (the built-in logger attaches its values only
	// when a line is logged). Nil means Logger with controller-runtime's
	// keys.
	LogConstructor func(req *request) logr.Logger

	// Metrics registers the controller's metrics; nil means the manager's
	// registerer (New) or no registration (NewUnmanaged).
	Metrics prometheus.Registerer

	// FairnessKey groups Requests into tenants that the queue serves
	// round-robin, so that one tenant's burst delays another tenant's
	// Request by at most one Request per tenant with Requests waiting, not
	// by the whole burst; FairByNamespace makes each namespace a tenant.
	// It is called once for each Request the queue takes in, under the
	// queue's lock: it must be cheap and must not block. Nil means one
	// group: first in, first out within each priority.
	FairnessKey func(request) string

	// Tracer traces the controller: a span for each reconcile, linked to
	// the watch events that led to it, and in it a child span for each
	// request the reconciler's client sends to the API server (see
	// package trace). Nil means the manager's (manager.Options.Tracer, see
	// TracerProvider) with New and controller/builder, and no tracing
	// otherwise; then tracing costs the controller one nil check per event
	// and per reconcile.
	Tracer trace.Tracer

	// SkipNameValidation lets the manager run this controller beside
	// another of the same name (it rejects a second controller of a name
	// otherwise, as controller-runtime does); their metrics and logs mix.
	// Nil means the manager's config.Controller.SkipNameValidation, else
	// false.
	SkipNameValidation *bool
}

// DefaultFromConfig sets the fields of o left zero (nil) from cfg, the
// manager's defaults for every controller, as controller-runtime's does:
// Logger, SkipNameValidation, MaxConcurrentReconciles (when cfg's is
// positive), CacheSyncTimeout (when positive), RecoverPanic,
// NeedLeaderElection and ReconcileTimeout (from ReconciliationTimeout).
// cfg.EnableWarmup and cfg.UsePriorityQueue change nothing here (see
// config.Controller); cfg.GroupKindConcurrency is applied by
// controller/builder, which knows the kind of For. New and the builder
// call it; NewUnmanaged does not.
func (o *TypedOptions[request]) DefaultFromConfig(cfg config.Controller) {
	if o.Logger.GetSink() == nil {
		o.Logger = cfg.Logger
	}
	if o.SkipNameValidation == nil {
		o.SkipNameValidation = cfg.SkipNameValidation
	}
	if o.MaxConcurrentReconciles == 0 && cfg.MaxConcurrentReconciles > 0 {
		o.MaxConcurrentReconciles = cfg.MaxConcurrentReconciles
	}
	if o.CacheSyncTimeout == 0 && cfg.CacheSyncTimeout > 0 {
		o.CacheSyncTimeout = cfg.CacheSyncTimeout
	}
	if o.RecoverPanic == nil {
		o.RecoverPanic = cfg.RecoverPanic
	}
	if o.NeedLeaderElection == nil {
		o.NeedLeaderElection = cfg.NeedLeaderElection
	}
	if o.ReconcileTimeout == 0 && cfg.ReconciliationTimeout > 0 {
		o.ReconcileTimeout = cfg.ReconciliationTimeout
	}
}

// ConfigProvider is implemented by a Manager that holds defaults for its
// controllers (kubeloop's manager.Manager, from Options.Controller). New
// and controller/builder apply them with DefaultFromConfig when the
// manager given to them implements it.
type ConfigProvider interface {
	// GetControllerOptions returns the defaults of every controller.
	GetControllerOptions() config.Controller
}

// validate returns every problem of o, joined.
func (o *TypedOptions[request]) validate(name string) error {
	var errs []error
	if name == "" {
		errs = append(errs, errors.New("controller: name must not be empty"))
	}
	if o.Reconciler == nil {
		errs = append(errs, fmt.Errorf("controller %q: Options.Reconciler must not be nil", name))
	}
	if o.MaxConcurrentReconciles < 0 {
		errs = append(errs, fmt.Errorf("controller %q: Options.MaxConcurrentReconciles %d is negative", name, o.MaxConcurrentReconciles))
	}
	if o.CacheSyncTimeout < 0 {
		errs = append(errs, fmt.Errorf("controller %q: Options.CacheSyncTimeout %s is negative", name, o.CacheSyncTimeout))
	}
	if o.ReconcileTimeout < 0 {
		errs = append(errs, fmt.Errorf("controller %q: Options.ReconcileTimeout %s is negative", name, o.ReconcileTimeout))
	}
	return errors.Join(errs...)
}

// withDefaults returns o with every zero field replaced by its default.
// It is the one defaulting site.
func (o TypedOptions[request]) withDefaults() TypedOptions[request] {
	if o.MaxConcurrentReconciles == 0 {
		o.MaxConcurrentReconciles = 1
	}
	if o.RateLimiter == nil {
		o.RateLimiter = workqueue.DefaultRateLimiter[request]()
	}
	if o.CacheSyncTimeout == 0 {
		o.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
	if o.RecoverPanic == nil {
		o.RecoverPanic = ptr(true)
	}
	if o.NeedLeaderElection == nil {
		o.NeedLeaderElection = ptr(true)
	}
	if o.Logger.GetSink() == nil {
		o.Logger = log.Default()
	}
	// client-go logs request and response bodies, Secrets included, at
	// V(8) through this logger; they never reach it.
	o.Logger = logfilter.WithoutBodies(o.Logger)
	return o
}

func ptr[T any](v T) *T { return &v }
