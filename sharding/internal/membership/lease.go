package membership

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/lease"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// The ring holds its Leases (its shard Lease, and the sharder's election
// Lease while it campaigns) with the lease core, internal/lease, which
// leaderelection uses too, and judges the other shards' Leases with the
// core's Observer: by this replica's own clock, from when it saw each
// Lease change.

// ClientAPI is the lease core's Lease API over the ring's live client.
type ClientAPI struct{ C client.Client }

var _ lease.API = ClientAPI{}

// Get reads a Lease.
func (a ClientAPI) Get(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	if err := a.C.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, l); err != nil {
		return nil, err
	}
	return l, nil
}

// Create creates a Lease.
func (a ClientAPI) Create(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if err := a.C.Create(ctx, l); err != nil {
		return nil, err
	}
	return l, nil
}

// Update updates a Lease.
func (a ClientAPI) Update(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if err := a.C.Update(ctx, l); err != nil {
		return nil, err
	}
	return l, nil
}

// NewHolder returns a holder of the Lease name in s.Namespace for
// s.Holder, with s's timings (already validated), writing through api
// (nil: ClientAPI over s.C).
func NewHolder(s *spec.Spec, api lease.API, name string, labels map[string]string) (*lease.Holder, error) {
	if api == nil {
		api = ClientAPI{C: s.C}
	}
	return lease.NewHolder(lease.Config{
		API:           api,
		Namespace:     s.Namespace,
		Name:          name,
		Identity:      s.Holder,
		Labels:        labels,
		LeaseDuration: s.LeaseDuration,
		RenewDeadline: s.RenewDeadline,
		RetryPeriod:   s.RetryPeriod,
	})
}
