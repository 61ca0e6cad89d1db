// Package watchnamespaces limits the manager's cache to the namespaces of
// WATCH_NAMESPACE the way operator-sdk projects do (1Password's
// onepassword-operator among them): a NewCache that sets the cache
// options' DefaultNamespaces and calls cache.New.
package watchnamespaces

import (
	"strings"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Options returns the manager options for watchNamespace, a comma
// separated list ("" means every namespace).
func Options(watchNamespace string) ctrl.Options {
	options := ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	}
	if watchNamespace != "" {
		namespaceMap := make(map[string]cache.Config)
		for _, namespace := range strings.Split(watchNamespace, ",") {
			namespaceMap[namespace] = cache.Config{}
		}
		options.NewCache = func(config *rest.Config, opts cache.Options) (cache.Cache, error) {
			opts.DefaultNamespaces = namespaceMap
			return cache.New(config, opts)
		}
	}
	return options
}
