package manager

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/config"
	"github.com/kubeloop/kubeloop/internal/logfilter"
	"github.com/kubeloop/kubeloop/log"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/sharding"
	"github.com/kubeloop/kubeloop/trace"
	"github.com/kubeloop/kubeloop/webhook"
)

// DefaultGracefulShutdownTimeout bounds the shutdown when
// Options.GracefulShutdownTimeout is zero.
const DefaultGracefulShutdownTimeout = 30 * time.Second

// Options configures a Manager. The zero value is valid: built-in types, a
// discovery-backed REST mapper, a cache of every namespace, no leader
// election, no HTTP servers, a 30 s graceful shutdown.
type Options struct {
	// Scheme maps Go types to kinds for the client, the cache and events.
	// Nil: a new scheme holding every built-in Kubernetes type (never the
	// shared client-go scheme, so registering types on it is safe).
	Scheme *runtime.Scheme

	// MapperProvider builds the REST mapper from the manager's rest.Config
	// and HTTP client. Nil: apiutil.NewDynamicRESTMapper, which discovers
	// lazily and re-discovers on a miss.
	MapperProvider func(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error)

	// Cache configures the manager's cache. Its zero Scheme, Mapper,
	// HTTPClient and Logger take the manager's; see cache.Options for the
	// other fields.
	Cache cache.Options

	// Client configures the manager's client. Its zero Scheme, Mapper and
	// HTTPClient take the manager's. Client.Cache.Reader is always the
	// manager's cache; the other CacheOptions fields (DisableFor,
	// Unstructured, ReadYourOwnWritesTimeout) are honoured, and a nil
	// Client.Cache means their defaults.
	Client client.Options

	// Controller holds the defaults of every controller the manager builds
	// (controller.New, controller/builder): each field a controller's own
	// controller.Options leaves zero takes its value here; see
	// config.Controller and controller.TypedOptions.DefaultFromConfig.
	// Zero: controller.Options' defaults. Negative counts and durations
	// are rejected.
	Controller config.Controller

	// Tracer traces every controller of the manager whose own
	// controller.Options.Tracer is nil (see package trace and
	// controller.TracerProvider): a span per reconcile, linked to the
	// watch events that caused it, with the client's requests as child
	// spans. Nil: no tracing. github.com/kubeloop/kubeloop/otel adapts an
	// OpenTelemetry TracerProvider.
	Tracer trace.Tracer

	// Logger is the manager's logger; runnables find it in their context
	// (logr.FromContextOrDiscard). Zero: a logger writing through
	// log/slog's default handler.
	Logger logr.Logger

	// LeaderElection runs leader-only runnables (controllers, by default)
	// only while this replica holds the Lease LeaderElectionID. False: they
	// run as soon as the caches have synced.
	LeaderElection bool
	// LeaderElectionID names the Lease. Required with LeaderElection.
	LeaderElectionID string
	// LeaderElectionNamespace holds the Lease. Zero: the pod's namespace
	// (read from the service account mount); required outside a cluster.
	LeaderElectionNamespace string
	// LeaderElectionIdentity is this replica's holder identity. Zero:
	// hostname + "_" + a random UUID.
	LeaderElectionIdentity string
	// LeaderElectionReleaseOnCancel gives the lease up on a normal
	// shutdown, once every leader-only runnable has returned, so a standby
	// takes over within about one RetryPeriod. The process must exit right
	// after Start returns. Zero: the lease expires after LeaseDuration.
	LeaderElectionReleaseOnCancel bool
	// LeaderElectionRecampaign keeps the process alive when the lease is
	// lost (a network cut, an API server down or slow): the manager stops
	// the leader-only runnables and waits until every one has returned
	// (within GracefulShutdownTimeout), keeps the caches and the runnables
	// that need no leadership running, and campaigns again with the same
	// identity. When it wins, the leader-only runnables start again; the
	// caches were never stopped, so their informers list nothing again.
	//
	// EVERY LEADER-ONLY RUNNABLE'S Start IS CALLED AGAIN EACH TERM, with a
	// new context, including one that returned nil in an earlier term. A
	// runnable added with Add must therefore be restartable: its Start may
	// be called again once the previous call returned. Controllers
	// (controller.Controller, the builder's) are: each term they start
	// their sources again with a new, empty queue, and the sources hand
	// over every object their informers hold as an initial add (from the
	// informers' stores), so every object is reconciled again, as after a
	// restart, without a relist. A runnable whose Start cannot run twice
	// must not be leader-only here.
	//
	// Never two leaders: the elector stops leading RenewDeadline after its
	// last renewal, before any standby may take over, and the manager
	// campaigns again only after every leader-only runnable of the lost
	// term has returned. If one has not returned within
	// GracefulShutdownTimeout, Start stops as without this option and
	// returns an error wrapping leaderelection.ErrLeaderElectionLost that
	// names it. leader_election_master_status is 0 between terms; the
	// log lines of the election name the term.
	//
	// False (the default, as in controller-runtime): a lost lease cancels
	// every context at once and Start returns an error wrapping
	// leaderelection.ErrLeaderElectionLost; the process is expected to exit.
	LeaderElectionRecampaign bool
	// LeaderElectionLabels are set on the Lease. Zero: none.
	LeaderElectionLabels map[string]string
	// LeaseDuration, RenewDeadline and RetryPeriod are the election
	// timings. Zero: 15 s, 10 s and 2 s. See leaderelection.Options.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration

	// Metrics configures the metrics HTTP server. Zero: no server (the
	// registry still exists; see Manager.MetricsRegistry).
	Metrics MetricsOptions

	// HealthProbeBindAddress is the address of the /healthz and /readyz
	// server, for example ":8081". "" or "0": no server.
	HealthProbeBindAddress string
	// ReadinessEndpointName is the readiness path. Zero: "/readyz".
	ReadinessEndpointName string
	// LivenessEndpointName is the liveness path. Zero: "/healthz".
	LivenessEndpointName string

	// PprofBindAddress is the address of a net/http/pprof-compatible
	// profiling server at /debug/pprof/. It is unauthenticated and may
	// expose sensitive data: bind it to loopback. "" or "0": no server.
	PprofBindAddress string

	// WebhookServer serves the admission and conversion webhooks
	// registered with webhook.ManagedBy(mgr, ...). It starts with the
	// caches (a conversion webhook may be needed for them to sync), needs
	// no leadership, and is in readiness as the "webhook" check. Nil: no
	// server until GetWebhookServer is first called, which then creates one
	// with webhook.Options' defaults (port 9443) and the manager's metrics
	// and logger. A Server given here whose webhook.Options left Metrics or
	// Logger zero gets the manager's registry and logger too.
	WebhookServer *webhook.Server

	// Sharding makes this replica one shard of a ring: the cache holds
	// only the sharded objects assigned to it, the webhook server assigns
	// new objects, and one replica of the ring runs the sharder (see the
	// sharding package). Zero (no Ring, no Objects): not sharded.
	Sharding sharding.Options

	// Clusters discovers a fleet of clusters that the manager's
	// controllers watch besides its own cluster (builder.OnFleet,
	// builder.OnClusters): each cluster it engages gets a light
	// multicluster.Cluster (cache, client, mapper) built with Scheme and
	// the Cache and Client options as templates, and GetCluster returns it
	// for Request.Cluster. Providers are in multicluster/providers. Nil:
	// no fleet; GetCluster("") still returns the manager's own cluster.
	Clusters multicluster.Provider

	// GracefulShutdownTimeout bounds the shutdown that follows the end of
	// Start's context, a runnable error or the loss of the lease. Zero:
	// 30 s. Negative: wait for every runnable however long it takes.
	GracefulShutdownTimeout time.Duration
}

// MetricsOptions configures the metrics HTTP server, which serves the
// manager's registry at /metrics.
type MetricsOptions struct {
	// BindAddress is the server's address, for example ":8080". "" or
	// "0": no server.
	BindAddress string
	// ExtraHandlers are served beside /metrics, keyed by path. Zero:
	// none. A handler for "/metrics" is rejected.
	ExtraHandlers map[string]http.Handler
	// FilterProvider wraps every handler of the metrics server, /metrics
	// and ExtraHandlers alike; WithAuthenticationAndAuthorization requires
	// a token allowed to get the path. Nil: no filter, anyone who reaches
	// the address reads the metrics.
	FilterProvider MetricsFilterProvider

	// SecureServing serves HTTPS: with the pair in CertDir, or a
	// self-signed certificate generated at Start when CertDir is empty
	// (the kubebuilder scaffold's --metrics-secure). False: plain HTTP.
	SecureServing bool
	// CertDir holds the serving certificate and key, in PEM. They are
	// re-read when their contents change (looked at, at most once a second,
	// on a TLS handshake; webhook.CertWatcher), so a rotated pair (for
	// example from cert-manager) is served without a restart. "": a
	// self-signed certificate. Requires SecureServing.
	CertDir string
	// CertName is the certificate file in CertDir. "": "tls.crt".
	CertName string
	// KeyName is the private key file in CertDir. "": "tls.key".
	KeyName string
	// TLSOpts change the TLS configuration after its defaults (TLS 1.2 at
	// least, HTTP/1.1 only, the certificate) are set. Nil: none. Requires
	// SecureServing.
	TLSOpts []func(*tls.Config)

	// NativeHistogramBucketFactor, above 1, makes the library's histograms
	// native histograms too, with controller-runtime's settings: each
	// bucket at most this factor wider than the one before
	// (controller-runtime uses 1.1), at most 100 buckets, reset at most
	// once an hour. Their classic buckets stay as they are, so a scraper
	// that does not negotiate native histograms (Prometheus without
	// scrape_native_histograms, or the text format) sees no change. It
	// covers controller_runtime_reconcile_time_seconds,
	// controller_runtime_webhook_latency_seconds,
	// rest_client_request_duration_seconds and
	// rest_client_rate_limiter_duration_seconds (of the controllers and
	// webhook servers that take the manager's registerer); workqueue_*
	// histograms stay classic (the queue counts into fixed buckets
	// itself), and so do collectors you register yourself. Zero: classic
	// buckets only, as before. Values in (0, 1] and negative ones are
	// rejected.
	NativeHistogramBucketFactor float64
}

// defaulted returns a copy of o with every zero field set. It is the
// single defaulting site.
func (o Options) defaulted() Options {
	if o.Logger.GetSink() == nil {
		o.Logger = log.Default()
	}
	// client-go logs request and response bodies, Secrets included, at
	// V(8) through this logger; they never reach it.
	o.Logger = logfilter.WithoutBodies(o.Logger)
	if o.ReadinessEndpointName == "" {
		o.ReadinessEndpointName = "/readyz"
	}
	if o.LivenessEndpointName == "" {
		o.LivenessEndpointName = "/healthz"
	}
	if o.GracefulShutdownTimeout == 0 {
		o.GracefulShutdownTimeout = DefaultGracefulShutdownTimeout
	}
	if o.Metrics.CertName == "" {
		o.Metrics.CertName = "tls.crt"
	}
	if o.Metrics.KeyName == "" {
		o.Metrics.KeyName = "tls.key"
	}
	return o
}

// validate returns every problem of a defaulted Options, joined. The
// leader election fields are checked by leaderelection.New.
func (o Options) validate() error {
	var errs []error
	if o.LeaderElection && o.LeaderElectionID == "" {
		errs = append(errs, errors.New("LeaderElectionID is required with LeaderElection"))
	}
	for name, p := range map[string]string{"ReadinessEndpointName": o.ReadinessEndpointName, "LivenessEndpointName": o.LivenessEndpointName} {
		if !strings.HasPrefix(p, "/") {
			errs = append(errs, fmt.Errorf("%s %q must start with /", name, p))
		}
	}
	if enabled(o.HealthProbeBindAddress) && o.ReadinessEndpointName == o.LivenessEndpointName {
		errs = append(errs, fmt.Errorf("ReadinessEndpointName and LivenessEndpointName are both %q", o.ReadinessEndpointName))
	}
	for p, h := range o.Metrics.ExtraHandlers {
		switch {
		case p == "/metrics":
			errs = append(errs, errors.New("Metrics.ExtraHandlers cannot replace /metrics"))
		case !strings.HasPrefix(p, "/"):
			errs = append(errs, fmt.Errorf("Metrics.ExtraHandlers path %q must start with /", p))
		case h == nil:
			errs = append(errs, fmt.Errorf("Metrics.ExtraHandlers[%q] is nil", p))
		}
	}
	if err := o.Controller.Validate(); err != nil {
		errs = append(errs, err)
	}
	if f := o.Metrics.NativeHistogramBucketFactor; f != 0 && !(f > 1) {
		errs = append(errs, fmt.Errorf("Metrics.NativeHistogramBucketFactor %v must be 0 (classic buckets only) or greater than 1", f))
	}
	if !o.Metrics.SecureServing && (o.Metrics.CertDir != "" || len(o.Metrics.TLSOpts) > 0) {
		errs = append(errs, errors.New("Metrics.CertDir and Metrics.TLSOpts need Metrics.SecureServing"))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("manager: invalid options: %w", errors.Join(errs...))
}

// enabled reports whether a bind address turns a server on.
func enabled(addr string) bool { return addr != "" && addr != "0" }
