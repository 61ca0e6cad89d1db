// Package config loads the rest.Config a controller talks to the API
// server with. It registers no flags: pass a path from your own flag.
//
// Load looks, in order, at:
//  1. the path given, when not empty;
//  2. the KUBECONFIG environment variable (a list of files, merged as
//     kubectl does);
//  3. the in-cluster service account (KUBERNETES_SERVICE_HOST and the
//     mounted token);
//  4. $HOME/.kube/config.
//
// Guarantees:
//   - The first source that exists is used; an error in it is returned,
//     not skipped.
//   - Client-side rate limiting is off (QPS -1) unless the kubeconfig sets
//     it: the API server's priority and fairness protects it.
//   - No global state: nothing is cached between calls.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ErrNoConfig is returned when no source holds a configuration.
var ErrNoConfig = errors.New("config: no kubeconfig path, KUBECONFIG, in-cluster config or ~/.kube/config found")

// Load returns the configuration from path, or from the first of the other
// sources (see the package doc) when path is empty.
func Load(path string) (*rest.Config, error) {
	return load(path, "")
}

// LoadContext is Load with a kubeconfig context other than the current one.
func LoadContext(path, context string) (*rest.Config, error) {
	return load(path, context)
}

// GetConfigWithContext is LoadContext("", context), under
// controller-runtime's name.
func GetConfigWithContext(context string) (*rest.Config, error) { return LoadContext("", context) }

// GetConfig is Load(""), under controller-runtime's name.
func GetConfig() (*rest.Config, error) { return Load("") }

// GetConfigOrDie is GetConfig that prints the error and exits with status
// 1, for main functions.
func GetConfigOrDie() *rest.Config {
	cfg, err := GetConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return cfg
}

func load(path, context string) (*rest.Config, error) {
	cfg, err := find(path, context)
	if err != nil {
		return nil, err
	}
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS = -1
	}
	return cfg, nil
}

func find(path, context string) (*rest.Config, error) {
	if path != "" {
		return fromFiles(&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, context, path)
	}
	if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		return fromFiles(&clientcmd.ClientConfigLoadingRules{Precedence: filepath.SplitList(env)}, context, "KUBECONFIG="+env)
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" && context == "" {
		cfg, err := rest.InClusterConfig()
		if err == nil {
			return cfg, nil
		}
		if !errors.Is(err, rest.ErrNotInCluster) {
			return nil, fmt.Errorf("config: in-cluster: %w", err)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)
		if _, err := os.Stat(p); err == nil {
			return fromFiles(&clientcmd.ClientConfigLoadingRules{ExplicitPath: p}, context, p)
		}
	}
	return nil, ErrNoConfig
}

func fromFiles(rules *clientcmd.ClientConfigLoadingRules, context, source string) (*rest.Config, error) {
	overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("config: load %s: %w", source, err)
	}
	return cfg, nil
}
