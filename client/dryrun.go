package client

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
)

// NewDryRunClient returns a client whose every write (Create, Update,
// Patch, Apply, Delete, DeleteAllOf and every subresource write) is a
// server-side dry run (DryRunAll): the API server validates and admits it,
// webhooks included, and answers what it would store, but persists
// nothing. Reads pass through. A write through it is not remembered for
// read-your-own-writes, since nothing was written.
func NewDryRunClient(c Client) Client { return &dryRunClient{Client: c} }

type dryRunClient struct{ Client }

var _ Client = (*dryRunClient)(nil)

func (d *dryRunClient) Create(ctx context.Context, obj Object, opts ...CreateOption) error {
	return d.Client.Create(ctx, obj, append(opts, DryRunAll)...)
}

func (d *dryRunClient) Update(ctx context.Context, obj Object, opts ...UpdateOption) error {
	return d.Client.Update(ctx, obj, append(opts, DryRunAll)...)
}

func (d *dryRunClient) Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error {
	return d.Client.Patch(ctx, obj, patch, append(opts, DryRunAll)...)
}

func (d *dryRunClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...ApplyOption) error {
	return d.Client.Apply(ctx, obj, append(opts, DryRunAll)...)
}

func (d *dryRunClient) Delete(ctx context.Context, obj Object, opts ...DeleteOption) error {
	return d.Client.Delete(ctx, obj, append(opts, DryRunAll)...)
}

func (d *dryRunClient) DeleteAllOf(ctx context.Context, obj Object, opts ...DeleteAllOfOption) error {
	return d.Client.DeleteAllOf(ctx, obj, append(opts, DryRunAll)...)
}

func (d *dryRunClient) Status() SubResourceWriter { return d.SubResource("status") }

func (d *dryRunClient) SubResource(subResource string) SubResourceClient {
	return &dryRunSubResource{SubResourceClient: d.Client.SubResource(subResource)}
}

type dryRunSubResource struct{ SubResourceClient }

func (s *dryRunSubResource) Create(ctx context.Context, obj, sub Object, opts ...SubResourceCreateOption) error {
	return s.SubResourceClient.Create(ctx, obj, sub, append(opts, DryRunAll)...)
}

func (s *dryRunSubResource) Update(ctx context.Context, obj Object, opts ...SubResourceUpdateOption) error {
	return s.SubResourceClient.Update(ctx, obj, append(opts, DryRunAll)...)
}

func (s *dryRunSubResource) Patch(ctx context.Context, obj Object, patch Patch, opts ...SubResourcePatchOption) error {
	return s.SubResourceClient.Patch(ctx, obj, patch, append(opts, DryRunAll)...)
}

func (s *dryRunSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...SubResourceApplyOption) error {
	return s.SubResourceClient.Apply(ctx, obj, append(opts, DryRunAll)...)
}
