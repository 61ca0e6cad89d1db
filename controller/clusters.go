package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

// Cluster is what a controller needs of one cluster of a fleet to watch
// it: its name (the Request.Cluster of its Requests), its cache, its
// client and its mapper. multicluster.Cluster implements it.
type Cluster interface {
	// Name returns the cluster's name; never "".
	Name() string
	// GetCache returns the cluster's cache, whose informers feed the
	// cluster's sources.
	GetCache() cache.Cache
	// GetClient returns the cluster's client: reads from its cache,
	// writes to its API server.
	GetClient() client.Client
	// GetRESTMapper returns the cluster's mapper.
	GetRESTMapper() meta.RESTMapper
}

// ClusterWatch is a watch that a controller makes on each cluster of a
// fleet that Matches accepts: Source builds the watch's source for that
// cluster. controller/builder makes one per For, Owns and Watches given
// builder.OnFleet or builder.OnClusters.
type ClusterWatch struct {
	// Matches reports whether to watch the cluster name (never "": the
	// manager's own cluster is watched with Watch). Nil means every
	// cluster.
	Matches func(name string) bool
	// Source returns the source to watch on cl. Required.
	Source func(cl Cluster) (source.Source, error)
}

// FleetManager is a Manager with a fleet of clusters
// (manager.Options.Clusters). EngageFleet makes the fleet engage c with
// every cluster present and future (EngageCluster) and disengage it from
// each cluster that leaves (DisengageCluster).
type FleetManager interface {
	Manager
	// EngageFleet registers c with the fleet.
	EngageFleet(c *Controller) error
}

// engagement is the controller's state for one engaged cluster.
type engagement struct {
	cl      Cluster
	ctx     context.Context // ends when the cluster leaves
	watches []*watch
}

// WatchClusters adds a watch made on every cluster cw.Matches accepts: on
// the clusters engaged already, at once, and on each cluster engaged later.
// Requests its sources add carry the cluster's name in Request.Cluster
// (a handler that names another, non-empty cluster keeps it), and their
// context names it (reconcile.ClusterFromContext).
func (c *Controller) WatchClusters(cw ClusterWatch) error {
	if cw.Source == nil {
		return fmt.Errorf("controller %q: WatchClusters: nil Source", c.name)
	}
	c.mu.Lock()
	c.clusterWatches = append(c.clusterWatches, cw)
	engaged := make([]*engagement, 0, len(c.engaged))
	for _, e := range c.engaged {
		engaged = append(engaged, e)
	}
	c.mu.Unlock()
	var errs []error
	for _, e := range engaged {
		errs = append(errs, c.engageWatch(e, cw))
	}
	return errors.Join(errs...)
}

// HasClusterWatches reports whether WatchClusters was called: whether the
// controller wants a fleet's clusters.
func (c *Controller) HasClusterWatches() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.clusterWatches) > 0
}

// EngageCluster starts the controller's cluster watches on cl, until ctx
// ends or DisengageCluster: each ClusterWatch that matches cl's name gets
// its source, prepared (its informer obtained, so that the cluster's
// cache fills it) and, while the controller runs, started. When ctx ends
// the cluster is disengaged (DisengageCluster). Sources of a
// cluster are not waited for by Start: a cluster that does not sync
// delays no other. Engaging an engaged name replaces the old engagement.
// A cluster no watch matches is engaged without sources: Requests naming
// it (from another cluster's map function) are reconciled, while Requests
// naming a cluster the controller is not engaged with are dropped.
func (c *Controller) EngageCluster(ctx context.Context, cl Cluster) error {
	name := cl.Name()
	if name == "" {
		return fmt.Errorf("controller %q: EngageCluster: a cluster without a name (\"\" is the manager's own)", c.name)
	}
	c.DisengageCluster(name)
	e := &engagement{cl: cl, ctx: ctx}
	c.mu.Lock()
	cws := slices.Clone(c.clusterWatches)
	if c.engaged == nil {
		c.engaged = map[string]*engagement{}
	}
	c.engaged[name] = e
	c.mu.Unlock()
	c.live.Store(name, e)
	var errs []error
	for _, cw := range cws {
		errs = append(errs, c.engageWatch(e, cw))
	}
	if err := errors.Join(errs...); err != nil {
		c.disengage(name, e)
		return err
	}
	context.AfterFunc(ctx, func() { c.disengage(name, e) })
	return nil
}

// engageWatch adds cw's source on e's cluster, if cw matches it.
func (c *Controller) engageWatch(e *engagement, cw ClusterWatch) error {
	name := e.cl.Name()
	if cw.Matches != nil && !cw.Matches(name) {
		return nil
	}
	src, err := cw.Source(e.cl)
	if err != nil {
		return fmt.Errorf("controller %q: cluster %q: source: %w", c.name, name, err)
	}
	if p, ok := src.(source.Preparer); ok {
		pctx, cancel := context.WithTimeout(e.ctx, c.cacheSyncTimeout)
		err := p.Prepare(pctx)
		cancel()
		if err != nil {
			return fmt.Errorf("controller %q: cluster %q: watch: %w", c.name, name, err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.engaged[name] != e { // disengaged meanwhile
		return nil
	}
	w := &watch{src: src, cluster: name}
	c.watches = append(c.watches, w)
	c.updateDroppersLocked()
	e.watches = append(e.watches, w)
	if c.state != stateRunning {
		return nil // the next Start starts it
	}
	if err := c.startWatchLocked(c.startCtx, w); err != nil {
		return fmt.Errorf("controller %q: cluster %q: start source: %w", c.name, name, err)
	}
	return nil
}

// DisengageCluster stops the controller's watches on the cluster name:
// their handler registrations end and they add nothing more once it
// returns. Requests of that cluster still queued are dropped when a
// worker takes them (not reconciled against a cluster that left), and a
// reconcile of it that fails is not retried. Disengaging a cluster that is
// not engaged does nothing.
func (c *Controller) DisengageCluster(name string) { c.disengage(name, nil) }

// disengage ends the engagement of name; when only is not nil, only if
// it is that engagement (not one that replaced it).
func (c *Controller) disengage(name string, only *engagement) {
	c.mu.Lock()
	e := c.engaged[name]
	if e == nil || (only != nil && e != only) {
		c.mu.Unlock()
		return
	}
	delete(c.engaged, name)
	c.live.Delete(name)
	for _, w := range e.watches {
		w.removed = true
	}
	c.watches = slices.DeleteFunc(c.watches, func(w *watch) bool { return w.removed && w.cluster == name })
	c.updateDroppersLocked()
	c.mu.Unlock()
	for _, w := range e.watches {
		if w.door != nil {
			w.door.close()
		}
		if w.cancel != nil {
			w.cancel()
		}
	}
	if fc, ok := c.rateLimiter.(interface{ ForgetCluster(string) }); ok {
		fc.ForgetCluster(name)
	}
}

// EngagedClusters returns the names of the clusters the controller is
// engaged with, sorted.
func (c *Controller) EngagedClusters() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.engaged))
	for n := range c.engaged {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// clusterGone reports whether req names a fleet cluster the controller is
// not engaged with (it left): such a Request is dropped. The manager's own
// cluster ("") is never gone, and costs one comparison.
func (c *Controller) clusterGone(req reconcile.Request) bool {
	if req.Cluster == "" {
		return false
	}
	_, ok := c.live.Load(req.Cluster)
	return !ok
}

// ClusterRateLimiter gives each cluster of a fleet a rate limiter of its
// own, so that one cluster's failures do not slow another's retries (the
// overall bucket of workqueue.DefaultRateLimiter would otherwise be
// shared). The manager's own cluster ("") is one cluster. A controller
// forgets a cluster's limiter when the cluster leaves.
type ClusterRateLimiter struct {
	newLimiter func() workqueue.RateLimiter[reconcile.Request]
	mu         sync.Mutex
	byCluster  map[string]workqueue.RateLimiter[reconcile.Request]
}

var _ workqueue.RateLimiter[reconcile.Request] = (*ClusterRateLimiter)(nil)

// PerClusterRateLimiter returns a ClusterRateLimiter whose limiters
// newLimiter makes; nil means workqueue.DefaultRateLimiter.
// controller/builder uses it for a controller that watches a fleet and
// has no Options.RateLimiter.
func PerClusterRateLimiter(newLimiter func() workqueue.RateLimiter[reconcile.Request]) *ClusterRateLimiter {
	if newLimiter == nil {
		newLimiter = func() workqueue.RateLimiter[reconcile.Request] {
			return workqueue.DefaultRateLimiter[reconcile.Request]()
		}
	}
	return &ClusterRateLimiter{newLimiter: newLimiter, byCluster: map[string]workqueue.RateLimiter[reconcile.Request]{}}
}

func (r *ClusterRateLimiter) limiter(cluster string) workqueue.RateLimiter[reconcile.Request] {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.byCluster[cluster]
	if l == nil {
		l = r.newLimiter()
		r.byCluster[cluster] = l
	}
	return l
}

// When returns the delay of req from its cluster's limiter.
func (r *ClusterRateLimiter) When(req reconcile.Request) time.Duration {
	return r.limiter(req.Cluster).When(req)
}

// Forget clears req's failures in its cluster's limiter. It makes no
// limiter: a cluster without one has no failures (or has left).
func (r *ClusterRateLimiter) Forget(req reconcile.Request) {
	r.mu.Lock()
	l := r.byCluster[req.Cluster]
	r.mu.Unlock()
	if l != nil {
		l.Forget(req)
	}
}

// NumRequeues returns req's failures in its cluster's limiter.
func (r *ClusterRateLimiter) NumRequeues(req reconcile.Request) int {
	r.mu.Lock()
	l := r.byCluster[req.Cluster]
	r.mu.Unlock()
	if l == nil {
		return 0
	}
	return l.NumRequeues(req)
}

// ForgetCluster drops the limiter of cluster and all its history.
func (r *ClusterRateLimiter) ForgetCluster(cluster string) {
	r.mu.Lock()
	delete(r.byCluster, cluster)
	r.mu.Unlock()
}

// Clusters returns how many clusters have a limiter.
func (r *ClusterRateLimiter) Clusters() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byCluster)
}
