package controller

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/reconcile"
)

// ErrWatchNotFound is returned (wrapped) by RemoveWatch for a source the
// controller does not watch.
var ErrWatchNotFound = errors.New("controller: source not watched")

// watch is one source added by Watch. It has its own context, so that
// RemoveWatch can stop it alone, and its own door to the queue, so that
// nothing it adds arrives after RemoveWatch returned.
type watch struct {
	src source.Source
	// cluster is the fleet cluster the source watches; "" is the
	// manager's own (clusters.go).
	cluster string
	// Guarded by the controller's mu.
	removed bool
	ctx     context.Context // set when started; ends on removal
	cancel  context.CancelFunc
	door    *watchQueue
}

// waitingSource is a source whose kind can be not served, such as
// source.WaitForCRD's: the readiness check and kubeloop_source_waiting
// report it.
type waitingSource interface {
	Kind() string
	Waiting() bool
}

// droppingSource is a source that can ask the controller to drop the
// Requests it takes from the queue: source.WaitForCRD's for the reconciled
// kind while that kind is not served.
type droppingSource interface {
	DropsRequests() bool
}

// addWatchLocked records src. The caller holds c.mu.
func (c *Controller) addWatchLocked(src source.Source) *watch {
	w := &watch{src: src}
	c.watches = append(c.watches, w)
	c.updateDroppersLocked()
	return w
}

// removeWatchLocked forgets w. The caller holds c.mu.
func (c *Controller) removeWatchLocked(w *watch) {
	c.watches = slices.DeleteFunc(c.watches, func(x *watch) bool { return x == w })
	c.updateDroppersLocked()
}

func (c *Controller) updateDroppersLocked() {
	var ds []droppingSource
	for _, w := range c.watches {
		if d, ok := w.src.(droppingSource); ok {
			ds = append(ds, d)
		}
	}
	c.droppers.Store(&ds)
}

// startWatchLocked starts w's source under its own context, a child of
// ctx, unless RemoveWatch removed it. The caller holds c.mu.
func (c *Controller) startWatchLocked(ctx context.Context, w *watch) error {
	if w.removed {
		return nil
	}
	if w.cluster != "" {
		ctx = reconcile.WithCluster(ctx, w.cluster)
	}
	w.ctx, w.cancel = context.WithCancel(ctx)
	w.door = &watchQueue{Queue: c.queue, q: c.queue, cluster: w.cluster}
	if err := w.src.Start(w.ctx, c.traceDoor(w.door)); err != nil {
		w.cancel()
		return err
	}
	return nil
}

// waitForSync waits until w's source has synced, or ctx ends. A watch
// removed meanwhile has nothing to wait for.
func (c *Controller) waitForSync(ctx context.Context, w *watch) error {
	c.mu.Lock()
	wctx := w.ctx
	c.mu.Unlock()
	if wctx == nil { // removed before it started
		return nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(wctx, func() { cancel(errors.New("watch removed")) })
	defer stop()
	err := w.src.WaitForSync(ctx)
	if err != nil {
		c.mu.Lock()
		removed := w.removed
		c.mu.Unlock()
		if removed {
			return nil
		}
	}
	return err
}

// RemoveWatch stops watching src, which Watch added: its context ends, so
// its handler registration with the informer is removed (the informer
// itself stays in the cache, which may share it with other watches; use
// the cache's RemoveInformer to drop it), and once RemoveWatch returns,
// src adds no more Requests to the queue. Requests it added before stay
// queued. It may be called before or while the controller runs. src must
// be the value given to Watch, of a comparable type (source.Kind's and
// source.Channel's are; wrap a source.Func in a pointer to remove it);
// otherwise, or if src is not watched, the error wraps ErrWatchNotFound.
func (c *Controller) RemoveWatch(src source.Source) error {
	if src == nil || !reflect.TypeOf(src).Comparable() {
		return fmt.Errorf("%w: controller %q: RemoveWatch(%T): the source cannot be compared", ErrWatchNotFound, c.name, src)
	}
	c.mu.Lock()
	i := slices.IndexFunc(c.watches, func(w *watch) bool { return w.src == src })
	if i < 0 {
		c.mu.Unlock()
		return fmt.Errorf("%w: controller %q: %v", ErrWatchNotFound, c.name, src)
	}
	w := c.watches[i]
	w.removed = true
	c.removeWatchLocked(w)
	door, cancel := w.door, w.cancel
	c.mu.Unlock()
	if door != nil {
		door.close()
	}
	if cancel != nil {
		cancel()
	}
	c.log.Info("Removed a watch", "source", fmt.Sprint(src))
	return nil
}

// WaitingKinds returns the kinds that the controller's sources wait for
// (source.WaitForCRD, builder.WaitForCRD): their CRD is not installed, not
// established yet, or was deleted. It is sorted, and nil when none waits;
// before Start every such source waits.
func (c *Controller) WaitingKinds() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var kinds []string
	for _, w := range c.watches {
		if ws, ok := w.src.(waitingSource); ok && ws.Waiting() {
			kinds = append(kinds, ws.Kind())
		}
	}
	slices.Sort(kinds)
	return slices.Compact(kinds)
}

// dropsRequests reports whether a source asks the controller to drop the
// Requests it takes from the queue: the reconciled kind is not served.
func (c *Controller) dropsRequests() bool {
	ds := c.droppers.Load()
	if ds == nil {
		return false
	}
	for _, d := range *ds {
		if d.DropsRequests() {
			return true
		}
	}
	return false
}

// waitingDesc describes kubeloop_source_waiting.
var waitingDesc = prometheus.NewDesc("kubeloop_source_waiting",
	"1 while a source of the controller waits for its kind to be served (its CRD is not installed or not established), 0 while the kind is served",
	[]string{"controller", "kind"}, nil)

// waitingCollector reports kubeloop_source_waiting for the running
// controllers of one registry: one collector per registry, shared by its
// controllers, read at scrape time.
type waitingCollector struct {
	mu    sync.Mutex
	ctrls []*Controller
}

var _ prometheus.Collector = (*waitingCollector)(nil)

// registerWaiting adds c to the waiting collector of reg, registering one
// if reg has none.
func registerWaiting(reg prometheus.Registerer, c *Controller) error {
	col := &waitingCollector{}
	if err := reg.Register(col); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return fmt.Errorf("register kubeloop_source_waiting: %w", err)
		}
		existing, ok := are.ExistingCollector.(*waitingCollector)
		if !ok {
			return fmt.Errorf("register kubeloop_source_waiting: another collector has the name: %w", err)
		}
		col = existing
	}
	col.mu.Lock()
	col.ctrls = append(col.ctrls, c)
	col.mu.Unlock()
	return nil
}

// Describe sends the metric's description.
func (w *waitingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- waitingDesc }

// Collect sends one sample per waiting-capable source of each running
// controller.
func (w *waitingCollector) Collect(ch chan<- prometheus.Metric) {
	w.mu.Lock()
	ctrls := slices.Clone(w.ctrls)
	w.mu.Unlock()
	type key struct{ controller, kind string }
	values := map[key]float64{}
	var order []key
	for _, c := range ctrls {
		c.mu.Lock()
		if c.state == stateRunning {
			for _, wt := range c.watches {
				ws, ok := wt.src.(waitingSource)
				if !ok {
					continue
				}
				k := key{c.name, ws.Kind()}
				if _, ok := values[k]; !ok {
					order = append(order, k)
				}
				if ws.Waiting() { // two sources of one kind: waiting if either waits
					values[k] = 1
				} else {
					values[k] += 0
				}
			}
		}
		c.mu.Unlock()
	}
	for _, k := range order {
		ch <- prometheus.MustNewConstMetric(waitingDesc, prometheus.GaugeValue, values[k], k.controller, k.kind)
	}
}
