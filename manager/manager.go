package manager

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/manager/healthz"
	"github.com/kubeloop/kubeloop/manager/internal/recorders"
	"github.com/kubeloop/kubeloop/manager/internal/restmetrics"
	"github.com/kubeloop/kubeloop/manager/internal/runnables"
	"github.com/kubeloop/kubeloop/manager/internal/serving"
	"github.com/kubeloop/kubeloop/sharding"
	"github.com/kubeloop/kubeloop/webhook"
)

// Manager runs a controller process: it owns the cache, the clients, the
// metrics registry, the event broadcaster, the probe and metrics servers
// and the leader election, and starts and stops every Runnable added to it.
// Create it with New; Start it once.
type Manager struct {
	opts       Options
	cfg        *rest.Config
	httpClient *http.Client
	scheme     *runtime.Scheme
	mapper     meta.RESTMapper
	cache      cache.Cache
	client     client.Client
	apiReader  client.Reader
	logger     logr.Logger
	registry   *prometheus.Registry
	events     *recorders.Recorders
	healthz    healthz.Handler
	readyz     healthz.Handler

	metricsFilter MetricsFilter // nil without Options.Metrics.FilterProvider

	// The lifecycle (start.go, phase.go): Start's run loop writes phase
	// and campaign; the groups and failures have their own locks.
	phase        atomic.Int32             // a phase
	electors     func() (elector, error)  // nil without leader election; the next term's elector (election.go)
	campaign     atomic.Pointer[campaign] // the current term's election; nil without leader election or before Start
	caches       *runnables.Group         // the manager's cache, user-added caches, webhook servers
	others       *runnables.Group         // runnables that need no leadership
	leaders      *runnables.Group         // leader-only runnables
	failures     *runnables.Failures      // runnables' errors
	cachesSynced atomic.Bool
	elected      chan struct{} // closed when the first term begins

	// mu guards what Add, from any goroutine, and the HTTP servers touch.
	mu              sync.Mutex
	controllerNames map[string]struct{}
	extraCaches     []cache.Cache
	servers         []*serving.Server

	webhookMu     sync.Mutex
	webhookServer *webhook.Server

	ring *sharding.Ring // nil without Options.Sharding

	crdSources *crdSources // the crd-sources readiness check, once a controller is added (sources.go)

	clusters clusters // the manager's own cluster and Options.Clusters' fleet (clusters.go)
}

var _ controller.Manager = (*Manager)(nil)

// New builds a manager for the cluster cfg points at: REST mapper, cache,
// cached client, API reader, metrics registry and (with LeaderElection)
// elector. It contacts nothing but what the mapper needs; nothing runs
// until Start.
func New(cfg *rest.Config, opts Options) (*Manager, error) {
	if cfg == nil {
		return nil, errors.New("manager: rest.Config is nil")
	}
	opts = opts.defaulted()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	m := &Manager{
		opts:            opts,
		logger:          opts.Logger,
		registry:        newRegistry(),
		elected:         make(chan struct{}),
		controllerNames: make(map[string]struct{}),
		failures:        runnables.NewFailures(opts.Logger),
	}
	m.caches = runnables.New("caches", runnableName, m.fail)
	m.others = runnables.New("runnables", runnableName, m.fail)
	m.leaders = runnables.New("leader-only runnables", runnableName, m.fail)

	// Every request of the manager goes through one instrumented config
	// and one HTTP client (one connection pool).
	m.cfg = rest.CopyConfig(cfg)
	restmetrics.Instrument(m.cfg, m.Metrics())
	hc, err := rest.HTTPClientFor(m.cfg)
	if err != nil {
		return nil, fmt.Errorf("manager: http client: %w", err)
	}
	m.httpClient = hc

	m.scheme = opts.Scheme
	if m.scheme == nil {
		m.scheme = runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(m.scheme); err != nil {
			return nil, fmt.Errorf("manager: scheme: %w", err)
		}
	}
	newMapper := opts.MapperProvider
	if newMapper == nil {
		newMapper = apiutil.NewDynamicRESTMapper
	}
	if m.mapper, err = newMapper(m.cfg, m.httpClient); err != nil {
		return nil, fmt.Errorf("manager: REST mapper: %w", err)
	}

	if opts.Metrics.FilterProvider != nil {
		if m.metricsFilter, err = opts.Metrics.FilterProvider(m.cfg, m.httpClient); err != nil {
			return nil, fmt.Errorf("manager: metrics filter: %w", err)
		}
	}

	if err := m.newRing(); err != nil {
		return nil, err
	}
	if err := m.buildCacheAndClients(); err != nil {
		return nil, err
	}
	if err := m.newClusters(); err != nil { // clusters.go
		return nil, err
	}
	if err := m.registerCacheMetrics(); err != nil { // cachemetrics.go
		return nil, fmt.Errorf("manager: cache metrics: %w", err)
	}

	evc, err := eventsv1client.NewForConfigAndClient(m.cfg, m.httpClient)
	if err != nil {
		return nil, fmt.Errorf("manager: events client: %w", err)
	}
	m.events = recorders.New(m.scheme, evc, m.logger)

	if opts.LeaderElection {
		if m.electors, err = m.leaseElectors(); err != nil { // election.go
			return nil, err
		}
	}

	if err := m.readyz.AddCheck("cache", m.cacheCheck); err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	if opts.WebhookServer != nil {
		if err := m.addWebhookServerLocked(opts.WebhookServer); err != nil {
			return nil, err
		}
	}
	if err := m.startRing(); err != nil {
		return nil, err
	}
	return m, nil
}

// buildCacheAndClients builds the cache, the cached client and the API
// reader from the options, filling their zero fields with the manager's.
func (m *Manager) buildCacheAndClients() error {
	co := m.opts.Cache
	fill(&co.Scheme, m.scheme)
	fill(&co.Mapper, m.mapper)
	fill(&co.HTTPClient, m.httpClient)
	if co.Logger.GetSink() == nil {
		co.Logger = m.logger.WithName("cache")
	}
	informers, err := cache.New(m.cfg, co)
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	m.cache = informers

	clo := m.opts.Client
	fill(&clo.Scheme, m.scheme)
	fill(&clo.Mapper, m.mapper)
	fill(&clo.HTTPClient, m.httpClient)
	reader := clo
	reader.Cache = nil
	if m.apiReader, err = client.New(m.cfg, reader); err != nil {
		return fmt.Errorf("manager: API reader: %w", err)
	}
	cached := client.CacheOptions{}
	if clo.Cache != nil {
		cached = *clo.Cache
	}
	// The client's whole view of the cache: it reads, reports its
	// progress (read-your-own-writes without polling) and shares objects.
	cached.Reader, cached.Progress, cached.Shared = informers, informers, informers
	clo.Cache = &cached
	if m.client, err = client.New(m.cfg, clo); err != nil {
		return fmt.Errorf("manager: client: %w", err)
	}
	return nil
}

// fill sets *field to v when it is zero (nil), the manager's default for
// an option of the cache or the client.
func fill[T comparable](field *T, v T) {
	var zero T
	if *field == zero {
		*field = v
	}
}

// GetClient returns the manager's client: reads come from the cache,
// writes go to the API server, and a Get after a write through this client
// never returns an older version of the object.
func (m *Manager) GetClient() client.Client { return m.client }

// GetAPIReader returns a reader that always reads from the API server.
func (m *Manager) GetAPIReader() client.Reader { return m.apiReader }

// GetCache returns the manager's cache.
func (m *Manager) GetCache() cache.Cache { return m.cache }

// GetFieldIndexer returns the cache's field indexer, for indexes that
// List with client.MatchingFields uses.
func (m *Manager) GetFieldIndexer() client.FieldIndexer { return m.cache }

// GetScheme returns the scheme shared by the client, the cache and events.
func (m *Manager) GetScheme() *runtime.Scheme { return m.scheme }

// GetRESTMapper returns the REST mapper.
func (m *Manager) GetRESTMapper() meta.RESTMapper { return m.mapper }

// GetConfig returns a copy of the rest.Config given to New, instrumented
// so that its requests count in the manager's rest_client_* metrics.
func (m *Manager) GetConfig() *rest.Config { return rest.CopyConfig(m.cfg) }

// GetHTTPClient returns the HTTP client shared by the manager's clients.
func (m *Manager) GetHTTPClient() *http.Client { return m.httpClient }

// GetLogger returns the manager's logger.
func (m *Manager) GetLogger() logr.Logger { return m.logger }

// GetEventRecorder returns a recorder of events.k8s.io/v1 Events reported
// by the controller name. Events are written while the manager runs and
// dropped (logged at V(1)) before Start and after the shutdown.
func (m *Manager) GetEventRecorder(name string) events.EventRecorder {
	return m.events.For(name)
}

// MetricsRegistry returns the manager's registry, to gather from it (in
// tests, for example) or to serve it yourself.
func (m *Manager) MetricsRegistry() *prometheus.Registry { return m.registry }

// AddHealthzCheck adds a liveness check, served at LivenessEndpointName.
func (m *Manager) AddHealthzCheck(name string, check healthz.Checker) error {
	return m.healthz.AddCheck(name, check)
}

// AddReadyzCheck adds a readiness check, served at ReadinessEndpointName
// beside the built-in "cache" check.
func (m *Manager) AddReadyzCheck(name string, check healthz.Checker) error {
	return m.readyz.AddCheck(name, check)
}

// Elected returns a channel closed when leader-only runnables may start:
// when this replica first wins the election, or once the caches have
// synced without leader election. With LeaderElectionRecampaign it stays
// closed after a lost term; leader_election_master_status says whether
// this replica leads now.
func (m *Manager) Elected() <-chan struct{} { return m.elected }

// cacheCheck is the built-in readiness check: the caches have synced and
// every informer's last list or watch succeeded.
func (m *Manager) cacheCheck(*http.Request) error {
	errs := []error{m.cache.Healthy()}
	if !m.cachesSynced.Load() {
		errs = append([]error{errors.New("caches have not synced yet")}, errs...)
	}
	m.mu.Lock()
	extra := m.extraCaches
	m.mu.Unlock()
	for _, c := range extra {
		errs = append(errs, c.Healthy())
	}
	return errors.Join(errs...)
}
