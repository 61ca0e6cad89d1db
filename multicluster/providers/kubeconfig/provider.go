package kubeconfig

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/log"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/engage"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/kubeconfigs"
)

const (
	// DefaultLabel is the label whose value "true" selects a Secret when
	// Options.Selector is nil.
	DefaultLabel = "multicluster.kubeloop.dev/kubeconfig"
	// DefaultDataKey is the Secret data key that holds the kubeconfig
	// when Options.DataKey is "".
	DefaultDataKey = "kubeconfig"
)

// Options configures a Provider. Namespace is required; every other
// field's zero value is valid.
type Options struct {
	// Namespace is the namespace of the manager's cluster that holds the
	// Secrets. Required.
	Namespace string
	// Selector picks the Secrets, on the server. Nil means
	// DefaultLabel=true.
	Selector labels.Selector
	// DataKey is the key of the kubeconfig in the Secret's data. "" means
	// DefaultDataKey.
	DataKey string
	// NameLabel is a label whose value is the cluster's name. "" means
	// the Secret's name (or NameAnnotation). A selected Secret without
	// the label is logged and not engaged.
	NameLabel string
	// NameAnnotation is an annotation whose value is the cluster's name,
	// as NameLabel; at most one of the two may be set.
	NameAnnotation string
	// AllowLocalCredentials lets a kubeconfig run exec plugins and auth
	// providers and read local files. False rejects such a kubeconfig
	// (see the package doc).
	AllowLocalCredentials bool
	// Logger receives the provider's logs. The zero value means the
	// logger of Run's context (log.FromContext), named
	// "kubeconfig-provider".
	Logger logr.Logger
}

// Provider engages the clusters of kubeconfig Secrets; see the package
// doc.
type Provider struct {
	cfg  *rest.Config
	opts Options
}

var _ multicluster.Provider = (*Provider)(nil)

// New returns a Provider that reads Secrets from the cluster cfg points
// at (normally the manager's). It fails when cfg is nil or opts is
// invalid, naming every problem.
func New(cfg *rest.Config, opts Options) (*Provider, error) {
	var errs []error
	if cfg == nil {
		errs = append(errs, errors.New("kubeconfig provider: rest.Config is nil"))
	}
	if opts.Namespace == "" {
		errs = append(errs, errors.New("kubeconfig provider: Options.Namespace is required"))
	}
	if opts.NameLabel != "" && opts.NameAnnotation != "" {
		errs = append(errs, errors.New("kubeconfig provider: set Options.NameLabel or Options.NameAnnotation, not both"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if opts.Selector == nil {
		opts.Selector = labels.SelectorFromSet(labels.Set{DefaultLabel: "true"})
	}
	if opts.DataKey == "" {
		opts.DataKey = DefaultDataKey
	}
	return &Provider{cfg: cfg, opts: opts}, nil
}

// Run watches the Secrets and engages their clusters through s until ctx
// ends. It returns an error only when the Secrets' informer cannot be
// created.
func (p *Provider) Run(ctx context.Context, s multicluster.Sink) error {
	lg := p.opts.Logger
	if lg.GetSink() == nil {
		lg = log.FromContext(ctx).WithName("kubeconfig-provider")
	}
	secret := &corev1.Secret{}
	c, err := cache.New(p.cfg, cache.Options{
		Logger:                      lg,
		DefaultNamespaces:           map[string]cache.Config{p.opts.Namespace: {}},
		ByObject:                    map[client.Object]cache.ByObject{secret: {Label: p.opts.Selector, Transform: p.keepDataKeyOnly}},
		ReaderFailOnMissingInformer: true,
	})
	if err != nil {
		return fmt.Errorf("kubeconfig provider: %w", err)
	}
	set := engage.NewSet(s, lg)
	defer set.Close()
	err = engage.Watch(ctx, c, lg, []client.Object{secret}, func(ctx context.Context) {
		var list corev1.SecretList
		if err := c.List(ctx, &list, client.InNamespace(p.opts.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			lg.Error(err, "list kubeconfig Secrets from the provider's cache")
			return
		}
		targets := make([]engage.Target, 0, len(list.Items))
		for i := range list.Items {
			targets = append(targets, p.target(&list.Items[i]))
		}
		set.Sync(ctx, targets)
	})
	if err != nil {
		return fmt.Errorf("kubeconfig provider: %w", err)
	}
	return nil
}

// keepDataKeyOnly drops a Secret's data but the kubeconfig before it is
// cached: the provider reads nothing else.
func (p *Provider) keepDataKeyOnly(obj any) (any, error) {
	if s, ok := obj.(*corev1.Secret); ok {
		keys := slices.Sorted(maps.Keys(s.Data))
		v, ok := s.Data[p.opts.DataKey]
		s.Data, s.StringData = nil, nil
		if ok {
			s.Data = map[string][]byte{p.opts.DataKey: v}
		} else if len(keys) > 0 {
			// Keep the key names (without values) for the error that
			// says which keys the Secret has.
			s.Data = make(map[string][]byte, len(keys))
			for _, k := range keys {
				s.Data[k] = nil
			}
		}
	}
	return obj, nil
}

// target is the cluster of one Secret.
func (p *Provider) target(sec *corev1.Secret) engage.Target {
	source := "Secret " + sec.Namespace + "/" + sec.Name
	name := sec.Name
	switch {
	case p.opts.NameLabel != "":
		name = sec.Labels[p.opts.NameLabel]
		if name == "" {
			return engage.Target{Name: source, Source: source, Key: "no name",
				Err: fmt.Errorf("%s has no label %s naming its cluster", source, p.opts.NameLabel)}
		}
	case p.opts.NameAnnotation != "":
		name = sec.Annotations[p.opts.NameAnnotation]
		if name == "" {
			return engage.Target{Name: source, Source: source, Key: "no name",
				Err: fmt.Errorf("%s has no annotation %s naming its cluster", source, p.opts.NameAnnotation)}
		}
	}
	data, ok := sec.Data[p.opts.DataKey]
	if !ok {
		return engage.Target{Name: name, Source: source, Key: "no data key",
			Err: fmt.Errorf("%s has no data key %q (it has %v)", source, p.opts.DataKey, slices.Sorted(maps.Keys(sec.Data)))}
	}
	policy := kubeconfigs.Policy{AllowLocalCredentials: p.opts.AllowLocalCredentials}
	return engage.Target{Name: name, Source: source, Key: engage.Hash(data), Config: func() (*rest.Config, error) {
		cfg, err := kubeconfigs.FromBytes(data, policy)
		if err != nil {
			return nil, fmt.Errorf("%s, data key %q: %w", source, p.opts.DataKey, err)
		}
		return cfg, nil
	}}
}
