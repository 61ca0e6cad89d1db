package envtest

import (
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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

// kubeConfigFromREST renders cfg as a kubeconfig file.
func kubeConfigFromREST(cfg *rest.Config) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{
		Server: cfg.Host, CertificateAuthority: cfg.CAFile, CertificateAuthorityData: cfg.CAData,
		InsecureSkipTLSVerify: cfg.Insecure, TLSServerName: cfg.ServerName,
	}
	kc.AuthInfos["envtest"] = &clientcmdapi.AuthInfo{
		ClientCertificate: cfg.CertFile, ClientCertificateData: cfg.CertData,
		ClientKey: cfg.KeyFile, ClientKeyData: cfg.KeyData,
		Token: cfg.BearerToken, TokenFile: cfg.BearerTokenFile,
		Username: cfg.Username, Password: cfg.Password,
	}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "envtest"}
	kc.CurrentContext = "envtest"
	out, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("envtest: render kubeconfig: %w", err)
	}
	return out, nil
}
