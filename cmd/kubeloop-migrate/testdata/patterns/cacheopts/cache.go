// Package cacheopts restricts the manager's cache: ConfigMaps (every kind
// by default) in team-a only, Secrets in team-b only.
package cacheopts

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// CacheOptions are the cache's namespaces.
func CacheOptions() cache.Options {
	return cache.Options{
		DefaultNamespaces: map[string]cache.Config{
			"team-a": {},
		},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {
				Namespaces: map[string]cache.Config{
					"team-b": {},
				},
			},
		},
	}
}

// NewManager returns a manager for cfg with CacheOptions.
func NewManager(cfg *rest.Config) (ctrl.Manager, error) {
	return ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme.Scheme,
		Cache:                  CacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
}
