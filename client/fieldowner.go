package client

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
)

// WithFieldOwner returns a client whose writes (Create, Update, Patch,
// Apply and every subresource write) name owner as their field manager
// unless the call passes its own FieldOwner, which wins. Reads and deletes
// pass through.
func WithFieldOwner(c Client, owner string) Client {
	return &fieldOwnerClient{Client: c, owner: FieldOwner(owner)}
}

type fieldOwnerClient struct {
	Client
	owner FieldOwner
}

var _ Client = (*fieldOwnerClient)(nil)

// prepend puts the default owner before opts, so a later FieldOwner wins.
func prepend[O any](first O, opts []O) []O {
	return append([]O{first}, opts...)
}

func (f *fieldOwnerClient) Create(ctx context.Context, obj Object, opts ...CreateOption) error {
	return f.Client.Create(ctx, obj, prepend[CreateOption](f.owner, opts)...)
}

func (f *fieldOwnerClient) Update(ctx context.Context, obj Object, opts ...UpdateOption) error {
	return f.Client.Update(ctx, obj, prepend[UpdateOption](f.owner, opts)...)
}

func (f *fieldOwnerClient) Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error {
	return f.Client.Patch(ctx, obj, patch, prepend[PatchOption](f.owner, opts)...)
}

func (f *fieldOwnerClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...ApplyOption) error {
	return f.Client.Apply(ctx, obj, prepend[ApplyOption](f.owner, opts)...)
}

func (f *fieldOwnerClient) Status() SubResourceWriter { return f.SubResource("status") }

func (f *fieldOwnerClient) SubResource(subResource string) SubResourceClient {
	return &fieldOwnerSubResource{SubResourceClient: f.Client.SubResource(subResource), owner: f.owner}
}

type fieldOwnerSubResource struct {
	SubResourceClient
	owner FieldOwner
}

func (s *fieldOwnerSubResource) Create(ctx context.Context, obj, sub Object, opts ...SubResourceCreateOption) error {
	return s.SubResourceClient.Create(ctx, obj, sub, prepend[SubResourceCreateOption](s.owner, opts)...)
}

func (s *fieldOwnerSubResource) Update(ctx context.Context, obj Object, opts ...SubResourceUpdateOption) error {
	return s.SubResourceClient.Update(ctx, obj, prepend[SubResourceUpdateOption](s.owner, opts)...)
}

func (s *fieldOwnerSubResource) Patch(ctx context.Context, obj Object, patch Patch, opts ...SubResourcePatchOption) error {
	return s.SubResourceClient.Patch(ctx, obj, patch, prepend[SubResourcePatchOption](s.owner, opts)...)
}

func (s *fieldOwnerSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...SubResourceApplyOption) error {
	return s.SubResourceClient.Apply(ctx, obj, prepend[SubResourceApplyOption](s.owner, opts)...)
}
