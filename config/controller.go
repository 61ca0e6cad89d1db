package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
)

// Controller configures the controllers of a manager as defaults: a
// controller's own controller.Options win over each field. The zero value
// means controller.Options' defaults.
type Controller struct {
	// SkipNameValidation lets two controllers of the manager share a name
	// (the manager rejects a second controller of a name otherwise, as
	// controller-runtime does); the metrics and logs of such controllers
	// mix. Nil: false. controller.Options.SkipNameValidation wins.
	SkipNameValidation *bool

	// GroupKindConcurrency is the number of workers of a controller built
	// by controller/builder, by the kind of its For, keyed as
	// schema.GroupKind's String: "ReplicaSet.apps", "ConfigMap" for the
	// core group. It wins over MaxConcurrentReconciles; a controller's
	// own controller.Options.MaxConcurrentReconciles wins over it. Nil: no
	// per-kind counts.
	GroupKindConcurrency map[string]int

	// MaxConcurrentReconciles is the number of workers of each controller
	// whose options leave it 0. Zero: 1.
	MaxConcurrentReconciles int

	// CacheSyncTimeout bounds how long each controller waits for its
	// sources to sync. Zero: controller.DefaultCacheSyncTimeout (2
	// minutes).
	CacheSyncTimeout time.Duration

	// RecoverPanic turns a panicking Reconcile into an error. Nil: true.
	RecoverPanic *bool

	// NeedLeaderElection says whether controllers run only on the leader.
	// Nil: true.
	NeedLeaderElection *bool

	// EnableWarmup is accepted for controller-runtime's sake and changes
	// nothing: in controller-runtime it starts a controller's sources
	// before leadership so that its informers are filled on a standby;
	// kubeloop's controllers always obtain their informers when they are
	// built (controller.Watch calls the source's Prepare), so a standby's
	// cache is already warm, and they register their handlers and fill
	// their queue when they start leading.
	EnableWarmup *bool

	// UsePriorityQueue is accepted for controller-runtime's sake and
	// changes nothing: kubeloop's controller queue (workqueue.Queue) is
	// always a priority queue, with initial-list and resync requests at
	// handler.LowPriority, whatever the value.
	UsePriorityQueue *bool

	// Logger is the logger of each controller whose options leave theirs
	// zero. Zero: the manager's logger.
	Logger logr.Logger

	// ReconciliationTimeout bounds each Reconcile call through its
	// context's deadline (controller.Options.ReconcileTimeout). Zero: no
	// bound.
	ReconciliationTimeout time.Duration
}

// Validate returns every problem of c, joined: negative counts and
// durations, and GroupKindConcurrency entries with an empty key or a
// negative count.
func (c Controller) Validate() error {
	var errs []error
	if c.MaxConcurrentReconciles < 0 {
		errs = append(errs, fmt.Errorf("config: Controller.MaxConcurrentReconciles %d is negative", c.MaxConcurrentReconciles))
	}
	if c.CacheSyncTimeout < 0 {
		errs = append(errs, fmt.Errorf("config: Controller.CacheSyncTimeout %s is negative", c.CacheSyncTimeout))
	}
	if c.ReconciliationTimeout < 0 {
		errs = append(errs, fmt.Errorf("config: Controller.ReconciliationTimeout %s is negative", c.ReconciliationTimeout))
	}
	for key, n := range c.GroupKindConcurrency {
		switch {
		case key == "":
			errs = append(errs, errors.New(`config: Controller.GroupKindConcurrency has an empty key (want "Kind.group", or "Kind" for the core group)`))
		case n < 0:
			errs = append(errs, fmt.Errorf("config: Controller.GroupKindConcurrency[%q] %d is negative", key, n))
		}
	}
	return errors.Join(errs...)
}
