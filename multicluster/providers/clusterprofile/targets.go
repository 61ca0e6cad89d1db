package clusterprofile

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/engage"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/kubeconfigs"
)

// targets reads the ClusterProfiles (and Secrets) from c and returns the
// clusters they yield now.
// notReady holds the profiles Options.Ready turned down, to log each once.
func (p *Provider) targets(ctx context.Context, c cache.Cache, lg logr.Logger, notReady map[string]bool) ([]engage.Target, error) {
	opts := []client.ListOption{client.UnsafeDisableDeepCopy}
	if p.opts.Namespace != "" {
		opts = append(opts, client.InNamespace(p.opts.Namespace))
	}
	profiles := &unstructured.UnstructuredList{}
	profiles.SetGroupVersionKind(GVK.GroupVersion().WithKind("ClusterProfileList"))
	if err := c.List(ctx, profiles, opts...); err != nil {
		return nil, err
	}
	secrets := map[string][]*corev1.Secret{} // by "<namespace>/<profile>"
	if p.opts.SecretConsumer != "" {
		var list corev1.SecretList
		if err := c.List(ctx, &list, opts...); err != nil {
			return nil, err
		}
		for i := range list.Items {
			s := &list.Items[i]
			if profile := s.Labels[SecretLabelProfile]; profile != "" {
				key := s.Namespace + "/" + profile
				secrets[key] = append(secrets[key], s)
			}
		}
	}
	targets := make([]engage.Target, 0, len(profiles.Items))
	seen := make(map[string]bool, len(profiles.Items))
	for i := range profiles.Items {
		u := &profiles.Items[i]
		name := u.GetNamespace() + "/" + u.GetName()
		seen[name] = true
		if u.GetDeletionTimestamp() != nil {
			continue
		}
		if p.opts.Ready != nil && !p.opts.Ready(u) {
			if !notReady[name] {
				notReady[name] = true
				lg.Info("cluster not engaged: Options.Ready says the ClusterProfile is not ready", "cluster", name)
			}
			continue
		}
		delete(notReady, name)
		targets = append(targets, p.target(ctx, name, u, secrets[name]))
	}
	for name := range notReady {
		if !seen[name] {
			delete(notReady, name)
		}
	}
	return targets, nil
}

// target is what one profile yields: the first access provider of
// Options.AccessProviders it offers, else its Secret, else an error.
func (p *Provider) target(ctx context.Context, name string, u *unstructured.Unstructured, secrets []*corev1.Secret) engage.Target {
	source := "ClusterProfile " + name
	byName, names := offered(u)
	for _, ap := range p.opts.AccessProviders {
		entry, ok := byName[ap.Name]
		if !ok {
			continue
		}
		raw, err := json.Marshal(entry)
		if err != nil {
			return engage.Target{Name: name, Source: source, Key: "unmarshalable", Err: fmt.Errorf("%s: %w", source, err)}
		}
		return engage.Target{Name: name, Source: source + ", access provider " + ap.Name, Key: engage.Hash([]byte(ap.Name), raw),
			Config: func() (*rest.Config, error) {
				cfg, err := restConfigFor(ap, entry)
				if err == nil && ap.Credentials != nil {
					err = ap.Credentials(ctx, u.DeepCopy(), cfg)
				}
				if err != nil {
					return nil, fmt.Errorf("%s: %w", source, err)
				}
				return cfg, nil
			}}
	}
	if p.opts.SecretConsumer != "" && len(secrets) > 0 {
		return p.secretTarget(name, source, secrets)
	}
	known := make([]string, 0, len(p.opts.AccessProviders))
	for _, ap := range p.opts.AccessProviders {
		known = append(known, ap.Name)
	}
	why := fmt.Sprintf("%s offers access providers %v, none of which this operator has credentials for %v", source, names, known)
	if p.opts.SecretConsumer != "" {
		why += fmt.Sprintf(", and no Secret labelled %s=%s, %s=%s", SecretLabelConsumer, p.opts.SecretConsumer, SecretLabelProfile, u.GetName())
	}
	return engage.Target{Name: name, Source: source, Key: engage.Hash([]byte(strings.Join(names, ","))), Err: fmt.Errorf("%s", why)}
}

// secretTarget is the kubeconfig of a profile's one Secret.
func (p *Provider) secretTarget(name, source string, secrets []*corev1.Secret) engage.Target {
	if len(secrets) > 1 {
		var found []string
		for _, s := range secrets {
			found = append(found, s.Name)
		}
		return engage.Target{Name: name, Source: source, Key: "several Secrets " + strings.Join(found, ","),
			Err: fmt.Errorf("%s: Secrets %v are all labelled for it; keep one", source, found)}
	}
	s := secrets[0]
	source += ", Secret " + s.Namespace + "/" + s.Name
	data, ok := s.Data[SecretDataKey]
	if !ok {
		return engage.Target{Name: name, Source: source, Key: "no data key",
			Err: fmt.Errorf("%s: the Secret has no data key %q", source, SecretDataKey)}
	}
	policy := kubeconfigs.Policy{AllowLocalCredentials: p.opts.AllowLocalCredentials}
	return engage.Target{Name: name, Source: source, Key: engage.Hash([]byte("secret"), data), Config: func() (*rest.Config, error) {
		cfg, err := kubeconfigs.FromBytes(data, policy)
		if err != nil {
			return nil, fmt.Errorf("%s, data key %q: %w", source, SecretDataKey, err)
		}
		return cfg, nil
	}}
}
