package clusterapi

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/engage"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/kubeconfigs"
)

// targets reads the Clusters and Secrets from c and returns the Clusters
// to engage now.
func (p *Provider) targets(ctx context.Context, c cache.Cache, gvk schema.GroupVersionKind, w *waiting) ([]engage.Target, error) {
	opts := []client.ListOption{client.UnsafeDisableDeepCopy}
	if p.opts.Namespace != "" {
		opts = append(opts, client.InNamespace(p.opts.Namespace))
	}
	clusters := &unstructured.UnstructuredList{}
	clusters.SetGroupVersionKind(gvk.GroupVersion().WithKind("ClusterList"))
	if err := c.List(ctx, clusters, opts...); err != nil {
		return nil, err
	}
	var secrets corev1.SecretList
	if err := c.List(ctx, &secrets, opts...); err != nil {
		return nil, err
	}
	byKey := make(map[string]*corev1.Secret, len(secrets.Items))
	for i := range secrets.Items {
		s := &secrets.Items[i]
		byKey[s.Namespace+"/"+s.Name] = s
	}
	policy := kubeconfigs.Policy{AllowLocalCredentials: p.opts.AllowLocalCredentials}
	ready := p.opts.Ready
	if ready == nil {
		ready = provisioned
	}
	seen := make(map[string]bool, len(clusters.Items))
	var targets []engage.Target
	for i := range clusters.Items {
		u := &clusters.Items[i]
		name := u.GetNamespace() + "/" + u.GetName()
		seen[name] = true
		secretKey := name + KubeconfigSuffix
		switch sec := byKey[secretKey]; {
		case u.GetDeletionTimestamp() != nil:
			w.note(name, "")
		case !p.opts.EngageUnprovisioned && !ready(u):
			w.note(name, "waiting for the Cluster to report a working control plane")
		case sec == nil:
			w.note(name, "waiting for its kubeconfig Secret "+secretKey)
		default:
			w.note(name, "")
			targets = append(targets, target(name, sec, policy))
		}
	}
	w.forget(seen)
	return targets, nil
}

// target is the cluster name of the kubeconfig in sec.
func target(name string, sec *corev1.Secret, policy kubeconfigs.Policy) engage.Target {
	source := "Cluster " + name + ", Secret " + sec.Namespace + "/" + sec.Name
	data, ok := sec.Data[KubeconfigDataKey]
	if !ok {
		return engage.Target{Name: name, Source: source, Key: "no data key",
			Err: fmt.Errorf("Secret %s/%s has no data key %q", sec.Namespace, sec.Name, KubeconfigDataKey)}
	}
	return engage.Target{Name: name, Source: source, Key: engage.Hash(data), Config: func() (*rest.Config, error) {
		cfg, err := kubeconfigs.FromBytes(data, policy)
		if err != nil {
			return nil, fmt.Errorf("Secret %s/%s, data key %q: %w", sec.Namespace, sec.Name, KubeconfigDataKey, err)
		}
		return cfg, nil
	}}
}

// provisioned reports whether a Cluster (v1beta1 or v1beta2) says its
// control plane works; see the package doc for the signals.
func provisioned(u *unstructured.Unstructured) bool {
	status, _ := u.Object["status"].(map[string]any)
	if status == nil {
		return false
	}
	if phase, _ := status["phase"].(string); phase == "Provisioned" {
		return true
	}
	if ready, _ := status["controlPlaneReady"].(bool); ready {
		return true
	}
	if init, _ := status["initialization"].(map[string]any); init != nil {
		if ready, _ := init["controlPlaneInitialized"].(bool); ready {
			return true
		}
	}
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		cond, _ := c.(map[string]any)
		switch t, _ := cond["type"].(string); t {
		case "ControlPlaneInitialized", "ControlPlaneAvailable", "ControlPlaneReady":
			if s, _ := cond["status"].(string); s == "True" {
				return true
			}
		}
	}
	return false
}

// waiting logs, once per reason, why a Cluster is not engaged yet.
type waiting struct {
	log    logr.Logger
	logged map[string]string // cluster -> reason logged
}

// note records cluster's reason ("" for none) and logs a new one.
func (w *waiting) note(cluster, reason string) {
	if w.logged[cluster] == reason {
		return
	}
	if reason == "" {
		delete(w.logged, cluster)
		return
	}
	w.logged[cluster] = reason
	w.log.Info("cluster not engaged yet", "cluster", cluster, "reason", reason)
}

// forget drops the clusters not in seen.
func (w *waiting) forget(seen map[string]bool) {
	for name := range w.logged {
		if !seen[name] {
			delete(w.logged, name)
		}
	}
}
