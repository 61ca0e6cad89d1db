package clusterprofile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"sigs.k8s.io/yaml"
)

// The cluster entry extensions the provider reads.
const (
	// ExecExtension is client-go's reserved extension whose value is
	// passed to an exec plugin as its cluster config.
	ExecExtension = "client.authentication.k8s.io/exec"
	// ArgsExtension (a list of strings) and EnvExtension (a map of
	// strings) are KEP-5339's profile-sourced exec arguments and
	// environment.
	ArgsExtension = "clusterprofiles.multicluster.x-k8s.io/exec/additional-args"
	EnvExtension  = "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs"
)

// offered returns a profile's access providers by name, with
// status.accessProviders overriding the deprecated
// status.credentialProviders, and their names sorted.
func offered(u *unstructured.Unstructured) (map[string]map[string]any, []string) {
	status, _ := u.Object["status"].(map[string]any)
	byName := map[string]map[string]any{}
	for _, field := range []string{"credentialProviders", "accessProviders"} {
		list, _ := status[field].([]any)
		for _, item := range list {
			entry, _ := item.(map[string]any)
			if name, _ := entry["name"].(string); name != "" {
				byName[name] = entry
			}
		}
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	slices.Sort(names)
	return byName, names
}

// restConfigFor builds the rest.Config of an access provider entry
// ({name, cluster}) for ap: the endpoint from the entry, credentials from
// ap.Exec (Credentials is applied by the caller).
func restConfigFor(ap AccessProvider, entry map[string]any) (*rest.Config, error) {
	raw, err := json.Marshal(entry["cluster"])
	if err != nil {
		return nil, fmt.Errorf("access provider %q: cluster: %w", ap.Name, err)
	}
	var cluster clientcmdv1.Cluster
	if err := json.Unmarshal(raw, &cluster); err != nil {
		return nil, fmt.Errorf("access provider %q: the cluster entry does not parse: %w", ap.Name, err)
	}
	if cluster.Server == "" {
		return nil, fmt.Errorf("access provider %q: the cluster entry has no server", ap.Name)
	}
	if cluster.CertificateAuthority != "" {
		return nil, fmt.Errorf("access provider %q: the cluster entry names a local file certificate-authority %q; use certificate-authority-data", ap.Name, cluster.CertificateAuthority)
	}
	cfg := &rest.Config{
		Host: cluster.Server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:     cluster.CertificateAuthorityData,
			ServerName: cluster.TLSServerName,
			Insecure:   cluster.InsecureSkipTLSVerify,
		},
		DisableCompression: cluster.DisableCompression,
	}
	if cluster.ProxyURL != "" {
		proxy, err := url.Parse(cluster.ProxyURL)
		if err != nil {
			return nil, fmt.Errorf("access provider %q: proxy-url: %w", ap.Name, err)
		}
		cfg.Proxy = http.ProxyURL(proxy)
	}
	if ap.Exec == nil {
		return cfg, nil
	}
	exec := ap.Exec.DeepCopy()
	exec.InteractiveMode = clientcmdapi.NeverExecInteractiveMode
	for _, ext := range cluster.Extensions {
		data := ext.Extension.Raw
		switch ext.Name {
		case ExecExtension:
			exec.Config = &runtime.Unknown{Raw: data, ContentType: runtime.ContentTypeJSON}
		case ArgsExtension:
			if err := applyArgs(exec, data, ap.ProfileArgs); err != nil {
				return nil, fmt.Errorf("access provider %q: extension %s: %w", ap.Name, ext.Name, err)
			}
		case EnvExtension:
			if err := applyEnv(exec, data, ap.ProfileEnv); err != nil {
				return nil, fmt.Errorf("access provider %q: extension %s: %w", ap.Name, ext.Name, err)
			}
		}
	}
	cfg.ExecProvider = exec
	return cfg, nil
}

// applyArgs appends the profile's arguments when policy says so.
func applyArgs(exec *clientcmdapi.ExecConfig, data []byte, policy ArgsPolicy) error {
	if policy != ArgsAppend {
		return nil
	}
	var args []string
	if err := yaml.Unmarshal(data, &args); err != nil {
		return fmt.Errorf("not a list of strings: %w", err)
	}
	exec.Args = append(exec.Args, args...)
	return nil
}

// applyEnv merges the profile's variables into exec.Env as policy says.
func applyEnv(exec *clientcmdapi.ExecConfig, data []byte, policy EnvPolicy) error {
	if policy != EnvAppendIfNotExists && policy != EnvReplace {
		return nil
	}
	var vars map[string]string
	if err := yaml.Unmarshal(data, &vars); err != nil {
		return fmt.Errorf("not a map of strings: %w", err)
	}
	names := make([]string, 0, len(vars))
	for name := range vars {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		i := slices.IndexFunc(exec.Env, func(e clientcmdapi.ExecEnvVar) bool { return e.Name == name })
		switch {
		case i < 0:
			exec.Env = append(exec.Env, clientcmdapi.ExecEnvVar{Name: name, Value: vars[name]})
		case policy == EnvReplace:
			exec.Env[i].Value = vars[name]
		}
	}
	return nil
}
