package builder

import (
	"errors"
	"fmt"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
)

// OnFleet makes a For, Owns or Watches watch every cluster of the
// manager's fleet (manager.Options.Clusters), present and future, instead
// of the manager's own cluster: each cluster that joins gets the watch,
// and its Requests carry its name in Request.Cluster. Reconcile reads and
// writes through that cluster's client (the manager's GetCluster). Without
// an On* option a watch is of the manager's own cluster only, as in a
// single-cluster controller.
var OnFleet Option = OnClusters(func(name string) bool { return name != "" })

// OnClusters makes a For, Owns or Watches watch each cluster whose name
// match accepts: the manager's own cluster when match("") is true, and
// each cluster of the fleet that joins for which match(name) is true
// (decided when it joins). OnClusters(func(string) bool { return true })
// watches the manager's cluster and the whole fleet.
func OnClusters(match func(name string) bool) Option {
	return optionFunc(func(o *options) { o.clusters = match })
}

// local reports whether in watches the manager's own cluster.
func (in watchInput) local() bool { return in.clusters == nil || in.clusters("") }

// fleet reports whether in watches clusters of the fleet.
func (in watchInput) fleet() bool { return in.clusters != nil }

// usesFleet reports whether any For, Owns or Watches watches the fleet.
func (b *TypedBuilder[request]) usesFleet() bool {
	if b.forInput != nil && b.forInput.fleet() {
		return true
	}
	for _, ins := range [][]watchInput{b.owns, b.watches} {
		for _, in := range ins {
			if in.fleet() {
				return true
			}
		}
	}
	return false
}

// clusterWatches returns the watches to make on each cluster of the fleet.
func (b *TypedBuilder[request]) clusterWatches() []controller.ClusterWatch {
	scheme := b.mgr.GetScheme()
	var cws []controller.ClusterWatch
	add := func(in watchInput, h func(controller.Cluster) handler.EventHandler) {
		if !in.fleet() {
			return
		}
		match := in.clusters
		preds := append(append([]predicate.Predicate(nil), b.globalPredicates...), in.predicates...)
		cws = append(cws, controller.ClusterWatch{
			Matches: func(name string) bool { return name != "" && match(name) },
			Source: func(cl controller.Cluster) (source.Source, error) {
				obj, err := in.project(in.obj, scheme)
				if err != nil {
					return nil, err
				}
				k := source.Kind(cl.GetCache(), obj, h(cl), preds...)
				if !in.waitForCRD {
					return k, nil
				}
				// Reconciled stays false: one cluster without the CRD must
				// not make the controller drop every cluster's Requests.
				return source.WaitForCRD(k, cl.GetRESTMapper(), source.CRDOptions{Scheme: scheme}), nil
			},
		})
	}
	if b.forInput != nil {
		add(*b.forInput, func(controller.Cluster) handler.EventHandler { return &handler.EnqueueRequestForObject{} })
	}
	for _, in := range b.owns {
		opt := handler.OnlyControllerOwner()
		if in.everyOwner {
			opt = handler.AllOwners()
		}
		owner := b.forInput.obj
		add(in, func(cl controller.Cluster) handler.EventHandler {
			return handler.EnqueueRequestForOwner(scheme, cl.GetRESTMapper(), owner, opt)
		})
	}
	for _, in := range b.watches {
		h := in.handler
		add(in, func(controller.Cluster) handler.EventHandler { return h })
	}
	return cws
}

// engageFleet adds the cluster watches to ctrl and registers it with the
// manager's fleet.
func (b *TypedBuilder[request]) engageFleet(ctrl *controller.Controller) error {
	cws := b.clusterWatches()
	if len(cws) == 0 {
		return nil
	}
	fm, ok := b.mgr.(controller.FleetManager)
	if !ok {
		return fmt.Errorf("builder: controller %q: OnFleet or OnClusters needs a manager with a fleet (manager.Options.Clusters); %T has none",
			ctrl.ControllerName(), b.mgr)
	}
	var errs []error
	for _, cw := range cws {
		errs = append(errs, ctrl.WatchClusters(cw))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := fm.EngageFleet(ctrl); err != nil {
		return fmt.Errorf("builder: controller %q: %w", ctrl.ControllerName(), err)
	}
	return nil
}
