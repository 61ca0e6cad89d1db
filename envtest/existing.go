package envtest

import (
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// UseExistingClusterEnv names the environment variable that, set to
// "true", makes an Environment whose UseExistingCluster is nil use an
// existing cluster (controller-runtime's).
const UseExistingClusterEnv = "USE_EXISTING_CLUSTER"

func (e *Environment) useExistingCluster() bool {
	if e.UseExistingCluster != nil {
		return *e.UseExistingCluster
	}
	return strings.EqualFold(os.Getenv(UseExistingClusterEnv), "true")
}

// existingClusterConfig returns a copy of cfg, or the current kubeconfig's
// config: $KUBECONFIG, else ~/.kube/config, else the in-cluster config.
func existingClusterConfig(cfg *rest.Config) (*rest.Config, error) {
	if cfg != nil {
		return rest.CopyConfig(cfg), nil
	}
	loaded, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("envtest: UseExistingCluster: load kubeconfig: %w", err)
	}
	return loaded, nil
}
