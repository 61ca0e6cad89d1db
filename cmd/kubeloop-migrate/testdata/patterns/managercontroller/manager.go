// Package managercontroller builds a manager with controller-wide options
// (manager.Options.Controller: SkipNameValidation, GroupKindConcurrency)
// and no webhook server (webhook.Options{Port: -1}, the kubebuilder main's
// "-1 disables" flag value), and runs two controllers of the same name.
package managercontroller

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// NewManager returns a manager for cfg whose controllers skip the name
// uniqueness check and reconcile ConfigMaps with two workers.
func NewManager(cfg *rest.Config) (manager.Manager, error) {
	return ctrl.NewManager(cfg, manager.Options{
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(webhook.Options{Port: -1}),
		Controller: config.Controller{
			SkipNameValidation:   ptr.To(true),
			GroupKindConcurrency: map[string]int{"ConfigMap.": 2},
		},
	})
}

// Seen records which reconciler saw which ConfigMap.
type Seen struct {
	mu   sync.Mutex
	seen map[string]bool
}

// Has says whether reconciler who saw the ConfigMap name.
func (s *Seen) Has(who, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[who+"/"+name]
}

func (s *Seen) add(who, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.seen[who+"/"+name] = true
}

// ConfigMapReconciler records the ConfigMaps it reconciles.
type ConfigMapReconciler struct {
	Who  string
	Seen *Seen
}

// Reconcile records req.
func (r *ConfigMapReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.Seen.add(r.Who, req.Name)
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler under the controller name
// "configmaps".
func (r *ConfigMapReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		Named("configmaps").
		Complete(r)
}
