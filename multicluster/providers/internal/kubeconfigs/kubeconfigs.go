// Package kubeconfigs turns kubeconfig bytes into rest.Configs for the
// providers, with one policy for what a kubeconfig from an untrusted
// place (a Secret, a ClusterProfile) may ask of the operator's process.
//
// Guarantees:
//   - Errors say what is wrong in words a user can act on: which
//     context, cluster or user is missing, or which forbidden field is
//     set.
//   - Unless Policy.AllowLocalCredentials, a kubeconfig whose selected
//     user runs an exec plugin or an auth provider, or whose selected
//     cluster or user names a local file (certificate-authority,
//     client-certificate, client-key, tokenFile), is rejected: whoever may
//     write the Secret could otherwise run commands in, or read files of,
//     the operator's pod (its service account token, for one).
//   - Nothing falls back to the in-cluster config or the default
//     kubeconfig: an empty kubeconfig is an error.
package kubeconfigs

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Policy says what a kubeconfig may use beyond its own bytes.
type Policy struct {
	// AllowLocalCredentials lets the kubeconfig run exec plugins and auth
	// providers and read local files (certificate paths, tokenFile).
	// False rejects such a kubeconfig.
	AllowLocalCredentials bool
}

// Parse decodes a kubeconfig. It fails on bytes that are not one, and on
// a kubeconfig without contexts.
func Parse(data []byte) (*clientcmdapi.Config, error) {
	if len(data) == 0 {
		return nil, errors.New("the kubeconfig is empty")
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig does not parse: %w", err)
	}
	if len(cfg.Contexts) == 0 {
		return nil, errors.New("the kubeconfig has no contexts")
	}
	return cfg, nil
}

// Contexts returns the names of cfg's contexts, sorted.
func Contexts(cfg *clientcmdapi.Config) []string {
	names := make([]string, 0, len(cfg.Contexts))
	for name := range cfg.Contexts {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// RESTConfig returns the rest.Config of context ctxName of cfg ("" means
// its current-context), checked against p.
func RESTConfig(cfg *clientcmdapi.Config, ctxName string, p Policy) (*rest.Config, error) {
	if ctxName == "" {
		ctxName = cfg.CurrentContext
		if ctxName == "" {
			if len(cfg.Contexts) != 1 {
				return nil, fmt.Errorf("the kubeconfig has %d contexts and no current-context", len(cfg.Contexts))
			}
			ctxName = Contexts(cfg)[0]
		}
	}
	kctx, ok := cfg.Contexts[ctxName]
	if !ok {
		return nil, fmt.Errorf("the kubeconfig has no context %q", ctxName)
	}
	cluster, ok := cfg.Clusters[kctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("context %q names cluster %q, which the kubeconfig does not have", ctxName, kctx.Cluster)
	}
	if cluster.Server == "" {
		return nil, fmt.Errorf("cluster %q of context %q has no server", kctx.Cluster, ctxName)
	}
	user := cfg.AuthInfos[kctx.AuthInfo]
	if kctx.AuthInfo != "" && user == nil {
		return nil, fmt.Errorf("context %q names user %q, which the kubeconfig does not have", ctxName, kctx.AuthInfo)
	}
	if !p.AllowLocalCredentials {
		if err := checkSelfContained(ctxName, kctx, cluster, user); err != nil {
			return nil, err
		}
	}
	rc, err := clientcmd.NewNonInteractiveClientConfig(*cfg, ctxName, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("context %q: %w", ctxName, err)
	}
	return rc, nil
}

// checkSelfContained rejects what would reach outside the kubeconfig's
// bytes.
func checkSelfContained(ctxName string, kctx *clientcmdapi.Context, cluster *clientcmdapi.Cluster, user *clientcmdapi.AuthInfo) error {
	const hint = " (local credentials are not allowed for this provider; see its AllowLocalCredentials option)"
	var errs []error
	if cluster.CertificateAuthority != "" {
		errs = append(errs, fmt.Errorf("cluster %q names a local file certificate-authority %q%s", kctx.Cluster, cluster.CertificateAuthority, hint))
	}
	if user != nil {
		switch {
		case user.Exec != nil:
			errs = append(errs, fmt.Errorf("user %q of context %q runs an exec plugin %q%s", kctx.AuthInfo, ctxName, user.Exec.Command, hint))
		case user.AuthProvider != nil:
			errs = append(errs, fmt.Errorf("user %q of context %q uses auth provider %q%s", kctx.AuthInfo, ctxName, user.AuthProvider.Name, hint))
		}
		for field, path := range map[string]string{"client-certificate": user.ClientCertificate, "client-key": user.ClientKey, "tokenFile": user.TokenFile} {
			if path != "" {
				errs = append(errs, fmt.Errorf("user %q names a local file %s %q%s", kctx.AuthInfo, field, path, hint))
			}
		}
	}
	return errors.Join(errs...)
}

// FromBytes is Parse then RESTConfig of the current context.
func FromBytes(data []byte, p Policy) (*rest.Config, error) {
	cfg, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return RESTConfig(cfg, "", p)
}
