package multicluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/controller"
)

// Provider discovers the clusters of a fleet. Run discovers clusters until
// ctx ends and calls s.Engage for each cluster that joins, with a context
// that the provider cancels when that cluster leaves. When a cluster's
// connection details change, the provider cancels the old context and
// engages the cluster again with a new one. Run returns nil when ctx
// ends, and an error only when discovery cannot go on at all; a single
// cluster it cannot read is logged and retried, never fatal.
//
// Providers live in multicluster/providers/<name>. They read foreign kinds
// (cluster-api's Cluster, SIG-multicluster's ClusterProfile) as
// unstructured or metadata, so no provider adds a dependency.
type Provider interface {
	Run(ctx context.Context, s Sink) error
}

// ProviderFunc adapts a function to Provider.
type ProviderFunc func(ctx context.Context, s Sink) error

var _ Provider = ProviderFunc(nil)

// Run calls f(ctx, s).
func (f ProviderFunc) Run(ctx context.Context, s Sink) error { return f(ctx, s) }

// Sink is what a Provider engages clusters with; the fleet implements it,
// and provider tests give a recording one.
type Sink interface {
	// Engage starts serving cluster name with cfg until ctx ends; it
	// returns without waiting for the cluster's caches. It fails when name
	// is not a valid cluster name (see ValidateName) or cfg is nil; the
	// cluster is then not engaged. Engaging a name that is engaged already
	// replaces it: the old engagement is ended first.
	Engage(ctx context.Context, name string, cfg *rest.Config) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(ctx context.Context, name string, cfg *rest.Config) error

var _ Sink = SinkFunc(nil)

// Engage calls f(ctx, name, cfg).
func (f SinkFunc) Engage(ctx context.Context, name string, cfg *rest.Config) error {
	return f(ctx, name, cfg)
}

// ErrInvalidName is wrapped by ValidateName's errors.
var ErrInvalidName = errors.New("multicluster: invalid cluster name")

// ValidateName checks a cluster name as a Provider reports it. "" is the
// manager's own cluster (reconcile.Request.Cluster's zero value) and never
// a fleet member's name; a name holds no whitespace or control characters
// and is at most 253 bytes. Names are otherwise free-form: a composite
// provider prefixes them ("<prefix>/<name>").
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: the empty name is the manager's own cluster", ErrInvalidName)
	case len(name) > 253:
		return fmt.Errorf("%w: %q is longer than 253 bytes", ErrInvalidName, name[:40]+"...")
	case strings.IndexFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		return fmt.Errorf("%w: %q holds whitespace or a control character", ErrInvalidName, name)
	}
	return nil
}

// Engager is a controller that watches the fleet's clusters
// (*controller.Controller with cluster watches, see
// controller.WatchClusters): the fleet engages it with each cluster
// that joins and disengages it from each that leaves.
type Engager interface {
	EngageCluster(ctx context.Context, cl controller.Cluster) error
	DisengageCluster(name string)
}

var _ Engager = (*controller.Controller)(nil)
