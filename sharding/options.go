package sharding

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/lease"
	"github.com/kubeloop/kubeloop/log"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// Label keys. One domain, one key per ring, so that an object can be in
// rings of different operators at once.
const (
	// ShardLabelPrefix + ring is the label that names the object's shard.
	ShardLabelPrefix = spec.ShardLabelPrefix
	// DrainLabelPrefix + ring marks an object whose shard must hand it
	// over; its value is the Unix time in milliseconds of the request.
	DrainLabelPrefix = spec.DrainLabelPrefix
	// RingLabel is set on every shard Lease to its ring's name.
	RingLabel = spec.RingLabel
	// ShardNameLabel is set on every shard Lease to its shard's name.
	ShardNameLabel = spec.ShardNameLabel
)

// ShardLabel returns the label key that names an object's shard in ring.
func ShardLabel(ring string) string { return ShardLabelPrefix + ring }

// DrainLabel returns the label key that marks an object of ring draining.
func DrainLabel(ring string) string { return DrainLabelPrefix + ring }

// Defaults of Options.
const (
	DefaultLeaseDuration  = 15 * time.Second
	DefaultRenewDeadline  = 10 * time.Second
	DefaultRetryPeriod    = 2 * time.Second
	DefaultSweepInterval  = 5 * time.Minute
	DefaultDrainCheck     = time.Second
	DefaultWebhookTimeout = 2 * time.Second
	DefaultSweepPageSize  = 500
)

// Options configures a Ring. Ring, Objects and Namespace (outside a
// cluster) are required; every other zero field has the default its doc
// names.
type Options struct {
	// Ring names the ring. It is part of label keys, Lease names and the
	// webhook's path, so it must be a DNS label (lower-case letters,
	// digits and '-', at most 63 characters). Required.
	Ring string

	// Objects are prototypes of the sharded kinds that this operator
	// reconciles (the kinds of its controllers' For), for example
	// &corev1.ConfigMap{}. Each must be in the scheme. Their objects are
	// handed over between shards with the drain handshake, which the
	// wrapper of Reconciler acknowledges. Required (at least one) unless
	// Clusters is set.
	Objects []client.Object

	// Controlled are prototypes of sharded kinds that are not reconciled
	// themselves: children (the kinds of Owns) that carry a controller
	// ownerReference to an object of Objects. They are assigned to their
	// owner's shard, cached with the same label selector, and moved as
	// soon as their owner sits on its new shard. Zero: none.
	Controlled []client.Object

	// Clusters says that the ring places the clusters of a fleet on its
	// shards (multicluster.Sharded; the manager sets it when both
	// Options.Sharding and Options.Clusters are set), so Objects may be
	// empty. Zero: Objects is required.
	Clusters bool

	// Namespace holds the shard Leases and the sharder's election Lease.
	// Zero: the pod's namespace (read from the service account mount);
	// required outside a cluster.
	Namespace string

	// Shard is this replica's shard name: a Lease name part and a label
	// value, so a DNS label. Zero: the host name (shortened, made a DNS
	// label) and 6 random hex digits, new for every process.
	Shard string

	// LeaseDuration is how long a shard's Lease stays valid after its last
	// renewal, as every other replica counts it on its own clock from when
	// it saw that renewal; once it passed, the sharder reassigns the
	// shard's objects. The Lease stores it rounded up to whole seconds
	// (1.9 s as 2 s). Zero: 15 s.
	LeaseDuration time.Duration
	// RenewDeadline is how long a shard keeps reconciling since its last
	// successful renewal: past it the shard stops reconciling sharded
	// objects (it is fenced) and rejoins (see ExitOnLeaseLoss); a shard
	// that rejoins waits RenewDeadline more before it reconciles again.
	// It must be
	// less than LeaseDuration (leader election's rule), and the difference
	// bounds both the clock rate differences between replicas (their
	// offsets do not matter) and the time an in-flight reconcile has to
	// notice its cancelled context. Zero: 10 s.
	RenewDeadline time.Duration
	// RetryPeriod is the interval between renewals, and between reads of
	// the ring's Leases. RenewDeadline must exceed 1.2*RetryPeriod.
	// Zero: 2 s.
	RetryPeriod time.Duration

	// SweepInterval is how often the sharder lists the sharded objects
	// (metadata only, in pages of SweepPageSize, which API servers from
	// v1.31 serve from their watch cache) to assign what
	// the webhook missed; it also sweeps at once when a shard joins or
	// leaves. Zero: 5 minutes.
	SweepInterval time.Duration
	// DrainCheckInterval is how soon the sharder sweeps again while
	// objects are draining, to assign acknowledged ones the webhook
	// missed. Zero: 1 s.
	DrainCheckInterval time.Duration
	// SweepPageSize is the page size of the sweep's lists. Zero: 500.
	SweepPageSize int64

	// VirtualNodes is the number of points per shard on the hash ring.
	// Zero: DefaultVirtualNodes.
	VirtualNodes int

	// ExitOnLeaseLoss makes Start return an error wrapping ErrLeaseLost
	// when the shard loses its Lease (the manager then stops, and the
	// process is expected to exit and restart). Zero: the shard rejoins
	// the ring, keeping its caches warm (see Start).
	ExitOnLeaseLoss bool

	// Webhook configures the mutating webhook that assigns objects at
	// admission and the MutatingWebhookConfiguration the sharder keeps.
	// Ignored in ServerSide mode.
	Webhook WebhookOptions

	// Mode is how objects are assigned to shards: Labels (a label per
	// object, set by the webhook and the sharder's sweep) or ServerSide
	// (hash ranges the API server filters by, Kubernetes 1.37's
	// ShardedListAndWatch; see the package doc). Zero: Labels.
	Mode Mode
	// Key is what ServerSide mode hashes: ShardByUID (metadata.uid; even
	// spread, children do not follow their owner) or ShardByNamespace
	// (metadata.namespace; a namespace's objects, children included,
	// share a shard; the objects of a cluster-scoped kind, whose
	// namespace is empty, all share one). Zero: ShardByUID. Must be zero
	// in Labels mode.
	Key ShardKey

	// Logger receives the ring's logs, with the keys "ring" and "shard".
	// Zero: log.Default(), through log/slog's default handler (the manager
	// passes its own).
	Logger logr.Logger
	// Metrics receives the kubeloop_sharding_* metrics. Zero: none.
	Metrics prometheus.Registerer
}

// WebhookOptions configures the assignment webhook.
type WebhookOptions struct {
	// Disabled turns the webhook off: no handler, no configuration;
	// objects are assigned by the sweep alone. Zero: enabled.
	Disabled bool
	// ConfigurationName names the MutatingWebhookConfiguration. Zero:
	// "sharding-kubeloop-dev-<ring>".
	ConfigurationName string
	// Service is the clientConfig's Service; its Path is the webhook's
	// path. With Service or URL set, the sharder creates and updates the
	// MutatingWebhookConfiguration; with neither, it leaves the
	// configuration to the operator's manifests. Zero: no Service.
	Service *admissionregistrationv1.ServiceReference
	// URL is the clientConfig's base URL, for example
	// "https://127.0.0.1:9443"; the webhook's path is appended.
	URL string
	// CABundle is the PEM of the CA that signed the webhook server's
	// certificate. Zero: none (the API server's trust roots).
	CABundle []byte
	// TimeoutSeconds is the API server's timeout for the call. Zero: 2.
	TimeoutSeconds int32
	// NamespaceSelector and ObjectSelector narrow the webhook. Zero:
	// everything.
	NamespaceSelector *metav1.LabelSelector
	ObjectSelector    *metav1.LabelSelector
}

// Mode is how a ring assigns objects to shards.
type Mode int

const (
	// Labels assigns each object with the shard label (the webhook, the
	// sharder's sweep and the drain handshake on objects). The default.
	Labels Mode = iota
	// ServerSide gives each shard ranges of the 64-bit FNV-1a hash of
	// Options.Key and lists and watches with the API server's
	// shardSelector: no webhook, no labels, no sweep, no sharder.
	ServerSide
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case Labels:
		return "labels"
	case ServerSide:
		return "server-side"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ShardKey is the field ServerSide mode hashes.
type ShardKey string

// The keys of ServerSide mode.
const (
	// ShardByUID hashes metadata.uid.
	ShardByUID ShardKey = "uid"
	// ShardByNamespace hashes metadata.namespace.
	ShardByNamespace ShardKey = "namespace"
)

// field is the key's shardSelector field path.
func (k ShardKey) field() string { return "object.metadata." + string(k) }

// Path returns the webhook's path for ring.
func Path(ring string) string { return "/shard-" + ring }

// serviceAccountNamespaceFile holds the pod's namespace inside a cluster.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// defaulted returns a copy of o with zero fields set. It is the single
// defaulting site.
func (o Options) defaulted() (Options, error) {
	if o.Namespace == "" {
		data, err := os.ReadFile(serviceAccountNamespaceFile)
		if err != nil {
			return o, fmt.Errorf("%w: Namespace is required outside a cluster", ErrInvalidOptions)
		}
		o.Namespace = strings.TrimSpace(string(data))
	}
	if o.Shard == "" {
		o.Shard = defaultShardName()
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = DefaultLeaseDuration
	}
	if o.RenewDeadline == 0 {
		o.RenewDeadline = DefaultRenewDeadline
	}
	if o.RetryPeriod == 0 {
		o.RetryPeriod = DefaultRetryPeriod
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = DefaultSweepInterval
	}
	if o.DrainCheckInterval == 0 {
		o.DrainCheckInterval = DefaultDrainCheck
	}
	if o.SweepPageSize == 0 {
		o.SweepPageSize = DefaultSweepPageSize
	}
	if o.VirtualNodes == 0 {
		o.VirtualNodes = DefaultVirtualNodes
	}
	if o.Webhook.ConfigurationName == "" {
		o.Webhook.ConfigurationName = "sharding-kubeloop-dev-" + o.Ring
	}
	if o.Webhook.TimeoutSeconds == 0 {
		o.Webhook.TimeoutSeconds = int32(DefaultWebhookTimeout / time.Second)
	}
	if o.Logger.GetSink() == nil {
		o.Logger = log.Default()
	}
	if o.Mode == ServerSide && o.Key == "" {
		o.Key = ShardByUID
	}
	return o, nil
}

// validate returns every problem of a defaulted Options, joined and
// wrapping ErrInvalidOptions.
func (o Options) validate() error {
	var errs []error
	if o.Ring == "" {
		errs = append(errs, errors.New("Ring is required"))
	} else if msgs := validation.IsDNS1123Label(o.Ring); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("ring %q is not a valid label value and DNS label: %s", o.Ring, strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsDNS1123Label(o.Shard); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("shard %q is not a valid label value and DNS label: %s", o.Shard, strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("namespace %q is invalid: %s", o.Namespace, strings.Join(msgs, "; ")))
	}
	if len(o.Objects) == 0 && !o.Clusters {
		errs = append(errs, errors.New("Objects must name at least one sharded kind"))
	}
	for i, obj := range append(append([]client.Object(nil), o.Objects...), o.Controlled...) {
		if obj == nil {
			errs = append(errs, fmt.Errorf("sharded kind #%d is nil", i))
		}
	}
	if err := lease.Validate(o.LeaseDuration, o.RenewDeadline, o.RetryPeriod); err != nil {
		errs = append(errs, err)
	}
	if o.SweepInterval < 0 || o.DrainCheckInterval < 0 || o.SweepPageSize < 0 || o.VirtualNodes < 0 {
		errs = append(errs, errors.New("SweepInterval, DrainCheckInterval, SweepPageSize and VirtualNodes must not be negative"))
	}
	if o.Webhook.Service != nil && o.Webhook.URL != "" {
		errs = append(errs, errors.New("Webhook.Service and Webhook.URL are exclusive"))
	}
	if o.Webhook.TimeoutSeconds < 1 || o.Webhook.TimeoutSeconds > 30 {
		errs = append(errs, fmt.Errorf("Webhook.TimeoutSeconds %d must be between 1 and 30", o.Webhook.TimeoutSeconds))
	}
	errs = append(errs, o.validateMode()...)
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(errs...))
}

// validateMode checks Mode and Key.
func (o Options) validateMode() []error {
	switch o.Mode {
	case Labels:
		if o.Key != "" {
			return []error{fmt.Errorf("Key %q is for Mode ServerSide; ring %q is in Mode Labels", o.Key, o.Ring)}
		}
	case ServerSide:
		switch o.Key {
		case ShardByUID:
			if len(o.Controlled) > 0 {
				return []error{fmt.Errorf("ring %q: Controlled kinds need Key ShardByNamespace in Mode ServerSide: "+
					"by uid a child hashes apart from its owner (leave Controlled empty to cache children whole)", o.Ring)}
			}
		case ShardByNamespace:
		default:
			return []error{fmt.Errorf("ring %q: Key %q is neither %q nor %q", o.Ring, o.Key, ShardByUID, ShardByNamespace)}
		}
	default:
		return []error{fmt.Errorf("ring %q: %s is not a mode; use Labels or ServerSide", o.Ring, o.Mode)}
	}
	return nil
}

// defaultShardName is the host name made a DNS label of at most 56
// characters, a dash and 6 random hex digits.
func defaultShardName() string {
	host, _ := os.Hostname()
	var b strings.Builder
	for _, r := range strings.ToLower(host) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '-' || r == '.' || r == '_':
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 56 {
		name = strings.TrimRight(name[:56], "-")
	}
	if name == "" {
		name = "shard"
	}
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	return name + "-" + hex.EncodeToString(rnd[:])
}
