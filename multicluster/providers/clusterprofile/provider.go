package clusterprofile

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/log"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/engage"
)

const (
	// Group and Version are the Cluster Inventory API's.
	Group   = "multicluster.x-k8s.io"
	Version = "v1alpha1"
	// LabelClusterManager is the label a cluster manager puts on its
	// ClusterProfiles; select on it with Options.Selector.
	LabelClusterManager = "x-k8s.io/cluster-manager"
	// SecretLabelConsumer and SecretLabelProfile label a cluster
	// manager's kubeconfig Secret: the consumer it is for and the
	// ClusterProfile it belongs to.
	SecretLabelConsumer = "x-k8s.io/cluster-inventory-consumer"
	SecretLabelProfile  = "x-k8s.io/cluster-profile"
	// SecretDataKey is the data key of the kubeconfig in that Secret.
	SecretDataKey = "Config"
)

// GVK is the ClusterProfile kind read.
var GVK = schema.GroupVersionKind{Group: Group, Version: Version, Kind: "ClusterProfile"}

// ArgsPolicy says what to do with a profile's additional-args extension.
type ArgsPolicy string

// EnvPolicy says what to do with a profile's additional-envs extension.
type EnvPolicy string

// The policies of KEP-5339, with the cluster-inventory-api's names.
const (
	// ArgsIgnore (or "") ignores the profile's arguments.
	ArgsIgnore ArgsPolicy = "Ignore"
	// ArgsAppend appends them to AccessProvider.Exec.Args.
	ArgsAppend ArgsPolicy = "Append"
	// EnvIgnore (or "") ignores the profile's variables.
	EnvIgnore EnvPolicy = "Ignore"
	// EnvAppendIfNotExists adds those Exec.Env does not set.
	EnvAppendIfNotExists EnvPolicy = "AppendIfNotExists"
	// EnvReplace adds them all, replacing Exec.Env's of the same name.
	EnvReplace EnvPolicy = "Replace"
)

// AccessProvider is a kind of access this operator can obtain credentials
// for, matched by Name against a profile's status.accessProviders. Exactly
// one of Exec and Credentials is set.
type AccessProvider struct {
	// Name is the access provider's name in the profiles ("google",
	// "kubeconfig-secretreader", ...).
	Name string
	// Exec is the exec plugin that obtains credentials, as in the
	// cluster-inventory-api's provider file. InteractiveMode is forced to
	// Never.
	Exec *clientcmdapi.ExecConfig
	// ProfileArgs and ProfileEnv say how the profile's KEP-5339
	// extensions change Exec's arguments and environment. "" ignores
	// them.
	ProfileArgs ArgsPolicy
	ProfileEnv  EnvPolicy
	// Credentials completes cfg, which holds the profile's endpoint (host,
	// CA, TLS server name, proxy), with credentials for it. It is called
	// when the profile is engaged or what it yields changed, with the
	// profile (not to be modified); an error is logged as the profile's
	// and it is tried again when the profile changes.
	Credentials func(ctx context.Context, profile *unstructured.Unstructured, cfg *rest.Config) error
}

// Options configures a Provider. At least one of AccessProviders and
// SecretConsumer is set; every other field's zero value is valid.
type Options struct {
	// Namespace restricts the provider to one namespace's ClusterProfiles
	// (and Secrets). "" means every namespace.
	Namespace string
	// Selector picks the ClusterProfiles, on the server. Nil means every
	// one.
	Selector labels.Selector
	// AccessProviders are the access providers this operator can use, in
	// order of preference.
	AccessProviders []AccessProvider
	// SecretConsumer, when set, reads a profile's kubeconfig from the
	// Secret the cluster manager wrote for this consumer, when no access
	// provider matched. "" means no Secrets are read.
	SecretConsumer string
	// Ready gates engagement: a profile for which it returns false is not
	// engaged (and an engaged one is disengaged). It must not modify the
	// profile. Nil means every profile that yields a config is engaged;
	// ControlPlaneHealthy is multicluster-runtime's default gate.
	Ready func(profile *unstructured.Unstructured) bool
	// AllowLocalCredentials lets a Secret's kubeconfig run exec plugins
	// and auth providers and read local files. False rejects such a
	// kubeconfig.
	AllowLocalCredentials bool
	// Logger receives the provider's logs. The zero value means the
	// logger of Run's context (log.FromContext), named
	// "clusterprofile-provider".
	Logger logr.Logger
}

// Provider engages the clusters of ClusterProfiles; see the package doc.
type Provider struct {
	cfg  *rest.Config
	opts Options
}

var _ multicluster.Provider = (*Provider)(nil)

// New returns a Provider that reads the hub cluster cfg points at. It
// fails when cfg is nil or opts is invalid, naming every problem.
func New(cfg *rest.Config, opts Options) (*Provider, error) {
	var errs []error
	if cfg == nil {
		errs = append(errs, errors.New("rest.Config is nil"))
	}
	if len(opts.AccessProviders) == 0 && opts.SecretConsumer == "" {
		errs = append(errs, errors.New("set Options.AccessProviders or Options.SecretConsumer"))
	}
	seen := map[string]bool{}
	for i, ap := range opts.AccessProviders {
		at := fmt.Sprintf("Options.AccessProviders[%d] %q", i, ap.Name)
		switch {
		case ap.Name == "":
			errs = append(errs, fmt.Errorf("%s has no Name", at))
		case seen[ap.Name]:
			errs = append(errs, fmt.Errorf("%s is listed twice", at))
		}
		seen[ap.Name] = true
		if (ap.Exec == nil) == (ap.Credentials == nil) {
			errs = append(errs, fmt.Errorf("%s: set exactly one of Exec and Credentials", at))
		}
		switch ap.ProfileArgs {
		case "", ArgsIgnore, ArgsAppend:
		default:
			errs = append(errs, fmt.Errorf("%s: unknown ProfileArgs %q", at, ap.ProfileArgs))
		}
		switch ap.ProfileEnv {
		case "", EnvIgnore, EnvAppendIfNotExists, EnvReplace:
		default:
			errs = append(errs, fmt.Errorf("%s: unknown ProfileEnv %q", at, ap.ProfileEnv))
		}
	}
	for i, err := range errs {
		errs[i] = fmt.Errorf("clusterprofile provider: %w", err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, opts: opts}, nil
}

// Run watches ClusterProfiles (and their Secrets) and engages their
// clusters through s until ctx ends. It returns an error only when an
// informer cannot be created.
func (p *Provider) Run(ctx context.Context, s multicluster.Sink) error {
	lg := p.opts.Logger
	if lg.GetSink() == nil {
		lg = log.FromContext(ctx).WithName("clusterprofile-provider")
	}
	profile := &unstructured.Unstructured{}
	profile.SetGroupVersionKind(GVK)
	objs := []client.Object{profile}
	byObject := map[client.Object]cache.ByObject{profile: {Label: p.opts.Selector}}
	if p.opts.SecretConsumer != "" {
		secret := &corev1.Secret{}
		objs = append(objs, secret)
		byObject[secret] = cache.ByObject{
			Label:     labels.SelectorFromSet(labels.Set{SecretLabelConsumer: p.opts.SecretConsumer}),
			Transform: keepConfigOnly,
		}
	}
	opts := cache.Options{Logger: lg, ByObject: byObject, ReaderFailOnMissingInformer: true}
	if p.opts.Namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{p.opts.Namespace: {}}
	}
	c, err := cache.New(p.cfg, opts)
	if err != nil {
		return fmt.Errorf("clusterprofile provider: %w", err)
	}
	set := engage.NewSet(s, lg)
	defer set.Close()
	notReady := map[string]bool{}
	err = engage.Watch(ctx, c, lg, objs, func(ctx context.Context) {
		targets, err := p.targets(ctx, c, lg, notReady)
		if err != nil {
			lg.Error(err, "list ClusterProfiles from the provider's cache")
			return
		}
		set.Sync(ctx, targets)
	})
	if err != nil {
		return fmt.Errorf("clusterprofile provider: %w", err)
	}
	return nil
}

// ControlPlaneHealthy reports whether a ClusterProfile's condition
// ControlPlaneHealthy is True: a gate for Options.Ready.
func ControlPlaneHealthy(profile *unstructured.Unstructured) bool {
	status, _ := profile.Object["status"].(map[string]any)
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		cond, _ := c.(map[string]any)
		if t, _ := cond["type"].(string); t == "ControlPlaneHealthy" {
			s, _ := cond["status"].(string)
			return s == "True"
		}
	}
	return false
}

// keepConfigOnly drops a Secret's data but its kubeconfig.
func keepConfigOnly(obj any) (any, error) {
	if s, ok := obj.(*corev1.Secret); ok {
		v, ok := s.Data[SecretDataKey]
		s.Data, s.StringData = nil, nil
		if ok {
			s.Data = map[string][]byte{SecretDataKey: v}
		}
	}
	return obj, nil
}
