package fleet

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/reconcile"
)

const (
	// StampLabel selects the ConfigMaps the operator stamps (value "true").
	StampLabel = "fleet.kubeloop.dev/stamp"
	// StampedBy is the value of data.stampedBy.
	StampedBy = "kubeloop-fleet"
	// HubName is data.cluster in the manager's own cluster.
	HubName = "hub"
)

// Stamper is the operator's Reconciler.
type Stamper struct {
	// Clusters gives the cluster of a Request: the manager.
	Clusters interface {
		GetCluster(ctx context.Context, name string) (*multicluster.Cluster, error)
	}
}

// Reconcile stamps the ConfigMap req names in the cluster req.Cluster.
func (s *Stamper) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cl, err := s.Clusters.GetCluster(ctx, req.Cluster)
	if errors.Is(err, multicluster.ErrClusterNotFound) {
		return reconcile.Result{}, nil // the cluster left: nothing to do there
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	var cm corev1.ConfigMap
	if err := cl.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	name := req.Cluster
	if name == "" {
		name = HubName
	}
	if cm.Data["cluster"] == name && cm.Data["stampedBy"] == StampedBy {
		return reconcile.Result{}, nil
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["cluster"], cm.Data["stampedBy"] = name, StampedBy
	if err := cl.GetClient().Update(ctx, &cm); err != nil {
		return reconcile.Result{}, fmt.Errorf("stamp configmap %s in cluster %s: %w", req.NamespacedName, name, err)
	}
	return reconcile.Result{}, nil
}

// SetupWithManager adds the stamping controller to mgr, which must have
// Options.Clusters: it watches the labelled ConfigMaps of the manager's
// own cluster and of every cluster of the fleet, and serves the clusters
// fairly.
func SetupWithManager(mgr *manager.Manager) error {
	labelled := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[StampLabel] == "true" })
	return builder.ControllerManagedBy(mgr).
		Named("fleet-stamper").
		For(&corev1.ConfigMap{}, builder.OnClusters(func(string) bool { return true }), builder.WithPredicates(labelled)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4, FairnessKey: controller.FairByCluster}).
		Complete(&Stamper{Clusters: mgr})
}
