package leaderelection

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubeloop/kubeloop/internal/lease"
)

// Default timings, the ones Kubernetes' own controllers use.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// serviceAccountNamespaceFile holds the pod's namespace inside a cluster.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Options configures an Elector. Only ID is required (and Namespace outside a
// cluster).
type Options struct {
	// ID is the name of the Lease. Required. Every replica of one
	// controller uses the same ID.
	ID string

	// Namespace holds the Lease. Zero: the pod's namespace read from the
	// service account mount; outside a cluster it must be set.
	Namespace string

	// Identity names this candidate in the Lease's holderIdentity. Zero:
	// hostname + "_" + a random UUID, unique per process so that a
	// restarted process never mistakes its predecessor's lease for its own.
	Identity string

	// LeaseDuration is how long standbys wait, by their own clock after
	// last observing a change of the Lease, before they take it over. The
	// Lease stores it in whole seconds (spec.leaseDurationSeconds) and
	// standbys wait what the Lease says, so a fraction of a second is
	// rounded up (1.9s is written as 2s, 0.5s as 1s). Must be greater than
	// RenewDeadline. Zero: 15s.
	LeaseDuration time.Duration

	// RenewDeadline is how long the leader keeps leading without a
	// successful renewal: it stops (IsLeader turns false, Run returns
	// ErrLeaderElectionLost) once RenewDeadline has passed since its last
	// successful renewal was sent. Must be less than LeaseDuration (as in
	// client-go), so that a leader has stopped before a standby may take
	// over. Zero: 10s.
	RenewDeadline time.Duration

	// RetryPeriod is the interval between attempts to acquire or renew
	// (jittered by up to 20%). RenewDeadline must exceed 1.2*RetryPeriod.
	// Zero: 2s.
	RetryPeriod time.Duration

	// ReleaseOnCancel gives the lease up when Run's ctx ends while leading,
	// so a standby takes over within about a RetryPeriod. Only safe when
	// every piece of leader-only work has stopped before ctx is cancelled.
	// Zero: keep the lease until it expires.
	ReleaseOnCancel bool

	// Labels are set on the Lease by its holder; keys and values must be
	// valid label keys and values (New checks them, as the API server
	// would reject every write of the Lease). Zero: none.
	Labels map[string]string

	// HTTPClient carries the lease requests; its transport is reused and
	// its Timeout replaced by max(1s, RenewDeadline/2). Zero: built from
	// the rest.Config.
	HTTPClient *http.Client

	// Logger receives the elector's log lines. Zero: discard.
	Logger logr.Logger

	// Metrics receives leader_election_master_status{name} and
	// leader_election_slowpath_total{name}. Zero: no metrics.
	Metrics prometheus.Registerer
}

// defaulted returns a copy of o with every zero field set to its default.
// It is the single defaulting site.
func (o Options) defaulted() (Options, error) {
	if o.Namespace == "" {
		ns, err := inClusterNamespace(serviceAccountNamespaceFile)
		if err != nil {
			return o, err
		}
		o.Namespace = ns
	}
	if o.Identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return o, fmt.Errorf("leaderelection: default identity: %w", err)
		}
		o.Identity = host + "_" + string(uuid.NewUUID())
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
	return o, nil
}

// validate returns every problem of a defaulted Options, joined.
func (o Options) validate() error {
	var errs []error
	if o.ID == "" {
		errs = append(errs, errors.New("ID (the Lease name) is required"))
	} else if msgs := validation.IsDNS1123Subdomain(o.ID); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("ID %q is not a valid Lease name: %s", o.ID, strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("namespace %q is invalid: %s", o.Namespace, strings.Join(msgs, "; ")))
	}
	for _, k := range slices.Sorted(maps.Keys(o.Labels)) {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("label key %q is invalid: %s", k, strings.Join(msgs, "; ")))
		}
		if msgs := validation.IsValidLabelValue(o.Labels[k]); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("label %s value %q is invalid: %s", k, o.Labels[k], strings.Join(msgs, "; ")))
		}
	}
	if err := lease.Validate(o.LeaseDuration, o.RenewDeadline, o.RetryPeriod); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("leaderelection: invalid options: %w", errors.Join(errs...))
}

// requestTimeout bounds one lease request, so that a single hung request
// cannot by itself exhaust RenewDeadline.
func (o Options) requestTimeout() time.Duration {
	return max(time.Second, o.RenewDeadline/2)
}

// inClusterNamespace reads the pod's namespace from the service account
// mount at path.
func inClusterNamespace(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", errors.New("leaderelection: Namespace is required when not running in a cluster")
	}
	if err != nil {
		return "", fmt.Errorf("leaderelection: read namespace: %w", err)
	}
	ns := strings.TrimSpace(string(data))
	if ns == "" {
		return "", fmt.Errorf("leaderelection: read namespace: %s is empty", path)
	}
	return ns, nil
}
