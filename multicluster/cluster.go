package multicluster

import (
	"errors"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/controller"
)

// Cluster is one cluster of a fleet, as light as a cluster can be: a
// cache, a client that reads from that cache and writes to the cluster's
// API server, a REST mapper and an HTTP client. It runs no servers and no
// leader election; the fleet starts its cache when the cluster is engaged
// and stops it when the cluster leaves. Get it in a Reconcile with the
// manager's GetCluster(ctx, req.Cluster).
type Cluster struct {
	name   string
	cfg    *rest.Config
	http   *http.Client
	conns  *conns // nil for a cluster made of Parts
	scheme *runtime.Scheme
	mapper meta.RESTMapper
	cache  cache.Cache
	client client.Client
}

var _ controller.Cluster = (*Cluster)(nil)

// Parts are the pieces of a cluster that exists already: the manager
// describes its own cluster with them (NewCluster).
type Parts struct {
	// Config points at the cluster's API server.
	Config *rest.Config
	// HTTPClient carries the cluster's requests.
	HTTPClient *http.Client
	// Scheme maps Go types to kinds.
	Scheme *runtime.Scheme
	// Mapper maps kinds to resources.
	Mapper meta.RESTMapper
	// Cache is the cluster's cache. Required.
	Cache cache.Cache
	// Client is the cluster's client. Required.
	Client client.Client
}

// NewCluster returns a Cluster named name made of p, whose lifecycle is
// the caller's: the manager's own cluster (name "") is one.
func NewCluster(name string, p Parts) (*Cluster, error) {
	if p.Cache == nil || p.Client == nil {
		return nil, fmt.Errorf("multicluster: cluster %q: NewCluster needs a Cache and a Client", name)
	}
	return &Cluster{name: name, cfg: p.Config, http: p.HTTPClient, scheme: p.Scheme,
		mapper: p.Mapper, cache: p.Cache, client: p.Client}, nil
}

// buildCluster makes the cluster name of cfg with the fleet's scheme and
// cache and client options. It contacts nothing: the mapper discovers on
// first use and the cache lists nothing until started.
func buildCluster(name string, cfg *rest.Config, o *Options) (*Cluster, error) {
	cfg = rest.CopyConfig(cfg)
	// The cluster's own connections, closed when it leaves. A Proxy
	// (the default one, made explicit) keeps client-go's process-wide
	// transport cache from holding the cluster's transport forever.
	cs := newConns()
	if cfg.Dial == nil {
		cfg.Dial = cs.DialContext
	}
	if cfg.Proxy == nil {
		cfg.Proxy = http.ProxyFromEnvironment
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("multicluster: cluster %q: HTTP client: %w", name, err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("multicluster: cluster %q: REST mapper: %w", name, err)
	}
	co := o.Cache
	co.Scheme, co.Mapper, co.HTTPClient = o.Scheme, mapper, hc
	co.Logger = o.Logger.WithName("cache").WithValues("cluster", name)
	ca, err := cache.New(cfg, co)
	if err != nil {
		return nil, fmt.Errorf("multicluster: cluster %q: %w", name, err)
	}
	clo := o.Client
	clo.Scheme, clo.Mapper, clo.HTTPClient = o.Scheme, mapper, hc
	cached := client.CacheOptions{}
	if clo.Cache != nil {
		cached = *clo.Cache
	}
	cached.Reader, cached.Progress, cached.Shared = ca, ca, ca
	clo.Cache = &cached
	cl, err := client.New(cfg, clo)
	if err != nil {
		return nil, fmt.Errorf("multicluster: cluster %q: client: %w", name, err)
	}
	return &Cluster{name: name, cfg: cfg, http: hc, conns: cs, scheme: o.Scheme, mapper: mapper, cache: ca, client: cl}, nil
}

// Name returns the cluster's name, as its Provider reported it; "" for
// the manager's own cluster.
func (c *Cluster) Name() string { return c.name }

// GetClient returns the cluster's client: reads come from its cache,
// writes go to its API server, and it reads its own writes.
func (c *Cluster) GetClient() client.Client { return c.client }

// GetCache returns the cluster's cache.
func (c *Cluster) GetCache() cache.Cache { return c.cache }

// GetFieldIndexer returns the cluster's cache as a field indexer. To index
// every cluster, present and future, use Fleet.IndexField.
func (c *Cluster) GetFieldIndexer() client.FieldIndexer { return c.cache }

// GetRESTMapper returns the cluster's REST mapper.
func (c *Cluster) GetRESTMapper() meta.RESTMapper { return c.mapper }

// GetScheme returns the scheme the cluster's client and cache use: the
// fleet's, shared by every cluster.
func (c *Cluster) GetScheme() *runtime.Scheme { return c.scheme }

// GetConfig returns a copy of the rest.Config the cluster was engaged
// with.
func (c *Cluster) GetConfig() *rest.Config {
	if c.cfg == nil {
		return nil
	}
	return rest.CopyConfig(c.cfg)
}

// GetHTTPClient returns the HTTP client of the cluster's requests.
func (c *Cluster) GetHTTPClient() *http.Client { return c.http }

// ErrClusterNotFound is wrapped by GetCluster's error for a cluster that
// is not engaged (it never joined, or it left).
var ErrClusterNotFound = errors.New("multicluster: cluster not found")
