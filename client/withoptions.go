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
func NewDryRunClient(c Client) Client { return &optionsClient{Client: c, last: DryRunAll} }

// WithFieldOwner returns a client whose writes (Create, Update, Patch,
// Apply and every subresource write) name owner as their field manager
// unless the call passes its own FieldOwner, which wins. Reads and deletes
// pass through.
func WithFieldOwner(c Client, owner string) Client {
	return &optionsClient{Client: c, first: FieldOwner(owner)}
}

// optionsClient adds an option to the writes whose option interface it
// implements: first before the call's options (a default the call may
// override), last after them (a setting the call cannot undo).
type optionsClient struct {
	Client
	first, last any // an option value, or nil
}

var _ Client = (*optionsClient)(nil)

// withOptions returns opts between first and last, each added when it is
// an O.
func withOptions[O any](first any, opts []O, last any) []O {
	out := make([]O, 0, len(opts)+2)
	if o, ok := first.(O); ok {
		out = append(out, o)
	}
	out = append(out, opts...)
	if o, ok := last.(O); ok {
		out = append(out, o)
	}
	return out
}

func (c *optionsClient) Create(ctx context.Context, obj Object, opts ...CreateOption) error {
	return c.Client.Create(ctx, obj, withOptions(c.first, opts, c.last)...)
}

func (c *optionsClient) Update(ctx context.Context, obj Object, opts ...UpdateOption) error {
	return c.Client.Update(ctx, obj, withOptions(c.first, opts, c.last)...)
}

func (c *optionsClient) Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error {
	return c.Client.Patch(ctx, obj, patch, withOptions(c.first, opts, c.last)...)
}

func (c *optionsClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...ApplyOption) error {
	return c.Client.Apply(ctx, obj, withOptions(c.first, opts, c.last)...)
}

func (c *optionsClient) Delete(ctx context.Context, obj Object, opts ...DeleteOption) error {
	return c.Client.Delete(ctx, obj, withOptions(c.first, opts, c.last)...)
}

func (c *optionsClient) DeleteAllOf(ctx context.Context, obj Object, opts ...DeleteAllOfOption) error {
	return c.Client.DeleteAllOf(ctx, obj, withOptions(c.first, opts, c.last)...)
}

func (c *optionsClient) Status() SubResourceWriter { return c.SubResource("status") }

func (c *optionsClient) SubResource(subResource string) SubResourceClient {
	return &optionsSubResource{SubResourceClient: c.Client.SubResource(subResource), first: c.first, last: c.last}
}

type optionsSubResource struct {
	SubResourceClient
	first, last any
}

var _ SubResourceClient = (*optionsSubResource)(nil)

func (s *optionsSubResource) Create(ctx context.Context, obj, sub Object, opts ...SubResourceCreateOption) error {
	return s.SubResourceClient.Create(ctx, obj, sub, withOptions(s.first, opts, s.last)...)
}

func (s *optionsSubResource) Update(ctx context.Context, obj Object, opts ...SubResourceUpdateOption) error {
	return s.SubResourceClient.Update(ctx, obj, withOptions(s.first, opts, s.last)...)
}

func (s *optionsSubResource) Patch(ctx context.Context, obj Object, patch Patch, opts ...SubResourcePatchOption) error {
	return s.SubResourceClient.Patch(ctx, obj, patch, withOptions(s.first, opts, s.last)...)
}

func (s *optionsSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...SubResourceApplyOption) error {
	return s.SubResourceClient.Apply(ctx, obj, withOptions(s.first, opts, s.last)...)
}
