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
)

// Default timings, the ones Kubernetes' own controllers use.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// jitterFactor is client-go's leaderelection.JitterFactor: a retry waits up
// to RetryPeriod*jitterFactor.
const jitterFactor = 1.2

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

	// LeaseDuration is how long standbys wait, after last observing a
	// renewal, before they take the lease over. The Lease stores it in
	// whole seconds (spec.leaseDurationSeconds) and standbys wait what the
	// Lease says, so a fraction of a second is rounded up (1.9s is written
	// as 2s); it must be at least one second. Zero: 15s.
	LeaseDuration time.Duration

	// RenewDeadline is how long the leader keeps leading without a
	// successful renewal: it stops (Run returns ErrLeaderElectionLost) once
	// RenewDeadline has passed since its last renewal. Must be less than
	// LeaseDuration as the Lease stores it (rounded up to whole seconds),
	// so that a leader has stopped before a standby may take over. Zero:
	// 10s.
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

	// Logger receives the elector's log lines (client-go's elector logs
	// through it too). Zero: discard.
	Logger logr.Logger

	// Metrics receives leader_election_master_status{name}. Zero: no
	// metrics.
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
	if o.LeaseDuration < time.Second {
		errs = append(errs, fmt.Errorf("LeaseDuration %s must be at least 1s", o.LeaseDuration))
	}
	if o.RenewDeadline <= 0 {
		errs = append(errs, fmt.Errorf("RenewDeadline %s must be positive", o.RenewDeadline))
	}
	if o.RetryPeriod <= 0 {
		errs = append(errs, fmt.Errorf("RetryPeriod %s must be positive", o.RetryPeriod))
	}
	if stored := o.storedLeaseDuration(); stored <= o.RenewDeadline {
		if stored == o.LeaseDuration {
			errs = append(errs, fmt.Errorf("LeaseDuration %s must be greater than RenewDeadline %s", o.LeaseDuration, o.RenewDeadline))
		} else {
			errs = append(errs, fmt.Errorf("LeaseDuration %s, stored in the Lease as %s (whole seconds, rounded up), must be greater than RenewDeadline %s",
				o.LeaseDuration, stored, o.RenewDeadline))
		}
	}
	if o.RenewDeadline <= time.Duration(jitterFactor*float64(o.RetryPeriod)) {
		errs = append(errs, fmt.Errorf("RenewDeadline %s must be greater than 1.2*RetryPeriod (%s)", o.RenewDeadline, time.Duration(jitterFactor*float64(o.RetryPeriod))))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("leaderelection: invalid options: %w", errors.Join(errs...))
}

// storedLeaseDuration is LeaseDuration as the Lease stores it and as
// standbys judge expiry: whole seconds, rounded up, so that standbys never
// wait less than LeaseDuration (client-go would write it truncated).
func (o Options) storedLeaseDuration() time.Duration {
	if o.LeaseDuration <= 0 {
		return o.LeaseDuration
	}
	return (o.LeaseDuration + time.Second - 1).Truncate(time.Second)
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
