package clusterapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/log"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/engage"
)

const (
	// Group is cluster-api's API group.
	Group = "cluster.x-k8s.io"
	// ClusterNameLabel is the label cluster-api puts on the Secrets it
	// writes for a Cluster; the default SecretSelector requires it.
	ClusterNameLabel = "cluster.x-k8s.io/cluster-name"
	// KubeconfigSuffix ends the name of a Cluster's kubeconfig Secret.
	KubeconfigSuffix = "-kubeconfig"
	// KubeconfigDataKey is the data key of the kubeconfig in that Secret.
	KubeconfigDataKey = "value"
)

// discoveryRetry is how often Run asks for cluster.x-k8s.io while it is
// not served.
const discoveryRetry = 10 * time.Second

// Options configures a Provider. Every field's zero value is valid.
type Options struct {
	// Namespace restricts the provider to one namespace's Clusters and
	// Secrets. "" means every namespace.
	Namespace string
	// Selector picks the Clusters, on the server. Nil means every
	// Cluster.
	Selector labels.Selector
	// SecretSelector picks the Secrets watched for kubeconfigs, on the
	// server. Nil means those with the label ClusterNameLabel;
	// labels.Everything() watches every Secret (for kubeconfig Secrets
	// written by hand without the label).
	SecretSelector labels.Selector
	// Version is the version of cluster.x-k8s.io to read Clusters in,
	// "v1beta1" or "v1beta2". "" means the API server's preferred one,
	// found at Run.
	Version string
	// EngageUnprovisioned engages a Cluster as soon as its kubeconfig
	// Secret exists, without waiting for it to report a working control
	// plane. False waits (see the package doc).
	EngageUnprovisioned bool
	// Ready replaces the provisioned check of the package doc: a Cluster
	// for which it returns false is not engaged (an engaged one is
	// disengaged). It must not modify the Cluster, whose spec is not
	// cached. Nil means that check; it may not be set together with
	// EngageUnprovisioned.
	Ready func(cluster *unstructured.Unstructured) bool
	// AllowLocalCredentials lets a kubeconfig run exec plugins and auth
	// providers and read local files. False rejects such a kubeconfig.
	AllowLocalCredentials bool
	// Logger receives the provider's logs. The zero value means the
	// logger of Run's context (log.FromContext), named
	// "clusterapi-provider".
	Logger logr.Logger
}

// Provider engages cluster-api's Clusters; see the package doc.
type Provider struct {
	cfg  *rest.Config
	opts Options
}

var _ multicluster.Provider = (*Provider)(nil)

// New returns a Provider that reads the management cluster cfg points
// at. It fails when cfg is nil or Options.Version is not one it knows.
func New(cfg *rest.Config, opts Options) (*Provider, error) {
	var errs []error
	if cfg == nil {
		errs = append(errs, errors.New("clusterapi provider: rest.Config is nil"))
	}
	switch opts.Version {
	case "", "v1beta1", "v1beta2":
	default:
		errs = append(errs, fmt.Errorf("clusterapi provider: Options.Version %q is neither v1beta1 nor v1beta2", opts.Version))
	}
	if opts.Ready != nil && opts.EngageUnprovisioned {
		errs = append(errs, errors.New("clusterapi provider: set Options.Ready or Options.EngageUnprovisioned, not both"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if opts.SecretSelector == nil {
		req, err := labels.NewRequirement(ClusterNameLabel, selection.Exists, nil)
		if err != nil {
			return nil, fmt.Errorf("clusterapi provider: %w", err)
		}
		opts.SecretSelector = labels.NewSelector().Add(*req)
	}
	return &Provider{cfg: cfg, opts: opts}, nil
}

// Run watches Clusters and their kubeconfig Secrets and engages the
// Clusters through s until ctx ends. It returns an error only when an
// informer cannot be created.
func (p *Provider) Run(ctx context.Context, s multicluster.Sink) error {
	lg := p.opts.Logger
	if lg.GetSink() == nil {
		lg = log.FromContext(ctx).WithName("clusterapi-provider")
	}
	version, err := p.version(ctx, lg)
	if err != nil || version == "" {
		return err // ctx ended, or discovery cannot be built
	}
	gvk := schema.GroupVersionKind{Group: Group, Version: version, Kind: "Cluster"}
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(gvk)
	secret := &corev1.Secret{}
	opts := cache.Options{
		Logger:                      lg,
		ReaderFailOnMissingInformer: true,
		ByObject: map[client.Object]cache.ByObject{
			cluster: {Label: p.opts.Selector, Transform: dropSpec},
			secret:  {Label: p.opts.SecretSelector, Transform: keepKubeconfigOnly},
		},
	}
	if p.opts.Namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{p.opts.Namespace: {}}
	}
	c, err := cache.New(p.cfg, opts)
	if err != nil {
		return fmt.Errorf("clusterapi provider: %w", err)
	}
	set := engage.NewSet(s, lg)
	defer set.Close()
	w := &waiting{log: lg, logged: make(map[string]string)}
	err = engage.Watch(ctx, c, lg, []client.Object{cluster, secret}, func(ctx context.Context) {
		targets, err := p.targets(ctx, c, gvk, w)
		if err != nil {
			lg.Error(err, "list Clusters and Secrets from the provider's cache")
			return
		}
		set.Sync(ctx, targets)
	})
	if err != nil {
		return fmt.Errorf("clusterapi provider: %w", err)
	}
	return nil
}

// version returns Options.Version or the served preferred version of
// cluster.x-k8s.io, asking every discoveryRetry until it is served; ""
// when ctx ended first.
func (p *Provider) version(ctx context.Context, lg logr.Logger) (string, error) {
	if p.opts.Version != "" {
		return p.opts.Version, nil
	}
	dc, err := discovery.NewDiscoveryClientForConfig(p.cfg)
	if err != nil {
		return "", fmt.Errorf("clusterapi provider: discovery: %w", err)
	}
	for {
		groups, err := dc.ServerGroups()
		if err == nil {
			for _, g := range groups.Groups {
				if g.Name == Group {
					return g.PreferredVersion.Version, nil
				}
			}
			err = fmt.Errorf("the API server does not serve %s: is cluster-api installed?", Group)
		}
		lg.Error(err, "waiting for cluster-api's API", "retry", discoveryRetry)
		select {
		case <-ctx.Done():
			return "", nil
		case <-time.After(discoveryRetry):
		}
	}
}

// dropSpec keeps a Cluster's metadata and status: the provider reads
// nothing else.
func dropSpec(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		delete(u.Object, "spec")
	}
	return obj, nil
}

// keepKubeconfigOnly drops every Secret's data but a kubeconfig
// Secret's "value", so the cache holds no other secret.
func keepKubeconfigOnly(obj any) (any, error) {
	if s, ok := obj.(*corev1.Secret); ok {
		v, ok := s.Data[KubeconfigDataKey]
		s.Data, s.StringData = nil, nil
		if ok && strings.HasSuffix(s.Name, KubeconfigSuffix) {
			s.Data = map[string][]byte{KubeconfigDataKey: v}
		}
	}
	return obj, nil
}
