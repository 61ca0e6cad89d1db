package client

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/client/internal/scoped"
)

// ErrNamespaceMismatch is returned (wrapped) by a client from
// NewNamespacedClient for an object, key, list or apply configuration of
// a namespaced kind that names another namespace than the client's.
var ErrNamespaceMismatch = scoped.ErrMismatch

// NewNamespacedClient returns a client that works in namespace ns only:
// for namespaced kinds it fills the namespace of objects, keys, lists,
// DeleteAllOf and apply configurations that name none, and refuses those
// that name another (ErrNamespaceMismatch). Cluster-scoped kinds pass
// through untouched. Status() and SubResource() are scoped the same way.
// (controller-runtime's List silently replaces another namespace; this one
// refuses it.)
func NewNamespacedClient(c Client, ns string) *NamespacedClient {
	return &NamespacedClient{Client: c, scope: scoped.Scope{Namespace: ns, GVKFor: c.GroupVersionKindFor, Mapper: c.RESTMapper}}
}

// NamespacedClient is the client NewNamespacedClient returns.
type NamespacedClient struct {
	Client
	scope scoped.Scope
}

var _ Client = (*NamespacedClient)(nil)

// Namespace returns the client's namespace.
func (n *NamespacedClient) Namespace() string { return n.scope.Namespace }

// Get reads the object named key, in the client's namespace for a
// namespaced kind.
func (n *NamespacedClient) Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error {
	ns, _, err := n.scope.Of("get", obj, key.Namespace)
	if err != nil {
		return err
	}
	key.Namespace = ns
	return n.Client.Get(ctx, key, obj, opts...)
}

// List lists in the client's namespace for a namespaced kind.
func (n *NamespacedClient) List(ctx context.Context, list ObjectList, opts ...ListOption) error {
	given := (&ListOptions{}).ApplyOptions(opts).Namespace
	ns, namespaced, err := n.scope.Of("list", list, given)
	if err != nil {
		return err
	}
	if namespaced {
		opts = append(opts, InNamespace(ns))
	}
	return n.Client.List(ctx, list, opts...)
}

// Create creates obj in the client's namespace for a namespaced kind.
func (n *NamespacedClient) Create(ctx context.Context, obj Object, opts ...CreateOption) error {
	if err := n.scope.Object("create", obj); err != nil {
		return err
	}
	return n.Client.Create(ctx, obj, opts...)
}

// Update updates obj in the client's namespace for a namespaced kind.
func (n *NamespacedClient) Update(ctx context.Context, obj Object, opts ...UpdateOption) error {
	if err := n.scope.Object("update", obj); err != nil {
		return err
	}
	return n.Client.Update(ctx, obj, opts...)
}

// Patch patches obj in the client's namespace for a namespaced kind.
func (n *NamespacedClient) Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error {
	if err := n.scope.Object("patch", obj); err != nil {
		return err
	}
	return n.Client.Patch(ctx, obj, patch, opts...)
}

// Delete deletes obj in the client's namespace for a namespaced kind.
func (n *NamespacedClient) Delete(ctx context.Context, obj Object, opts ...DeleteOption) error {
	if err := n.scope.Object("delete", obj); err != nil {
		return err
	}
	return n.Client.Delete(ctx, obj, opts...)
}

// DeleteAllOf deletes in the client's namespace for a namespaced kind.
func (n *NamespacedClient) DeleteAllOf(ctx context.Context, obj Object, opts ...DeleteAllOfOption) error {
	given := (&DeleteAllOfOptions{}).ApplyOptions(opts).Namespace
	ns, namespaced, err := n.scope.Of("delete all of", obj, given)
	if err != nil {
		return err
	}
	if namespaced {
		opts = append(opts, InNamespace(ns))
	}
	return n.Client.DeleteAllOf(ctx, obj, opts...)
}

// Apply applies obj in the client's namespace for a namespaced kind.
func (n *NamespacedClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...ApplyOption) error {
	if err := n.scope.Apply("apply", obj); err != nil {
		return err
	}
	return n.Client.Apply(ctx, obj, opts...)
}

// Status returns the status writer, scoped to the client's namespace.
func (n *NamespacedClient) Status() SubResourceWriter { return n.SubResource("status") }

// SubResource returns a subresource client scoped to the client's
// namespace.
func (n *NamespacedClient) SubResource(subResource string) SubResourceClient {
	return &namespacedSubResource{n: n, inner: n.Client.SubResource(subResource)}
}

type namespacedSubResource struct {
	n     *NamespacedClient
	inner SubResourceClient
}

var _ SubResourceClient = (*namespacedSubResource)(nil)

func (s *namespacedSubResource) Get(ctx context.Context, obj, sub Object, opts ...SubResourceGetOption) error {
	if err := s.n.scope.Object("get subresource of", obj); err != nil {
		return err
	}
	return s.inner.Get(ctx, obj, sub, opts...)
}

func (s *namespacedSubResource) Create(ctx context.Context, obj, sub Object, opts ...SubResourceCreateOption) error {
	if err := s.n.scope.Object("create subresource of", obj); err != nil {
		return err
	}
	return s.inner.Create(ctx, obj, sub, opts...)
}

func (s *namespacedSubResource) Update(ctx context.Context, obj Object, opts ...SubResourceUpdateOption) error {
	if err := s.n.scope.Object("update subresource of", obj); err != nil {
		return err
	}
	return s.inner.Update(ctx, obj, opts...)
}

func (s *namespacedSubResource) Patch(ctx context.Context, obj Object, patch Patch, opts ...SubResourcePatchOption) error {
	if err := s.n.scope.Object("patch subresource of", obj); err != nil {
		return err
	}
	return s.inner.Patch(ctx, obj, patch, opts...)
}

func (s *namespacedSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...SubResourceApplyOption) error {
	if err := s.n.scope.Apply("apply subresource of", obj); err != nil {
		return err
	}
	return s.inner.Apply(ctx, obj, opts...)
}
