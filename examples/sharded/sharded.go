// Package sharded is an operator scaled out across replicas with
// kubeloop's sharding: every replica is a shard of the ring "demo", caches
// and reconciles only the ConfigMaps assigned to it, and one replica of
// the ring runs the sharder. The reconciler copies data["desired"] to
// data["observed"] after a configurable amount of "work", and records the
// start and end of every reconcile in a witness file, one per process, so
// that a test can check that no object was ever reconciled by two
// processes at once.
package sharded

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// Ring is the name of the example's ring.
const Ring = "demo"

// Reconciler makes data["observed"] equal data["desired"].
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// Shard names this process in the witness.
	Shard string
	// Work is how long each reconcile waits, standing for I/O.
	Work time.Duration
	// Workers is the controller's MaxConcurrentReconciles. Zero: 1.
	Workers int

	mu      sync.Mutex
	witness io.Writer // nil: no witness
}

// SetWitness makes the reconciler write "S|E <shard> <namespace/name>
// <unix nanoseconds>" lines to w at the start and end of each reconcile.
func (r *Reconciler) SetWitness(w io.Writer) { r.witness = w }

func (r *Reconciler) note(kind string, req reconcile.Request) {
	if r.witness == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.witness, "%s %s %s %d\n", kind, r.Shard, req.String(), time.Now().UnixNano())
}

// Reconcile copies desired to observed.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, req.NamespacedName, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	r.note("S", req)
	defer r.note("E", req)
	select {
	case <-time.After(r.Work):
	case <-ctx.Done():
		return reconcile.Result{}, ctx.Err()
	}
	if cm.Data["observed"] == cm.Data["desired"] && cm.Annotations["sharded.kubeloop.dev/by"] == r.Shard {
		return reconcile.Result{}, nil
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["observed"] = cm.Data["desired"]
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations["sharded.kubeloop.dev/by"] = r.Shard
	if err := r.Client.Update(ctx, cm); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

// SetupWithManager registers the controller with plain builder code: the
// manager shards ConfigMaps, so the builder puts the reconciler behind the
// ring's gate and runs the controller on every replica by itself.
// r.Workers workers per replica (zero: one).
func SetupWithManager(mgr *manager.Manager, r *Reconciler) error {
	if mgr.Sharding() == nil {
		return fmt.Errorf("sharded: the manager has no ring")
	}
	return builder.ControllerManagedBy(mgr).
		Named("sharded").
		For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		Complete(r)
}

// CachedHandler answers the number of ConfigMaps in the manager's cache
// (in the namespace of the query parameter "namespace", or all): with
// sharding, only this shard's.
func CachedHandler(mgr *manager.Manager) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var l corev1.ConfigMapList
		if err := mgr.GetCache().List(req.Context(), &l, client.InNamespace(req.URL.Query().Get("namespace"))); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, len(l.Items))
	})
}

// OpenWitness opens path for appending.
func OpenWitness(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
}
