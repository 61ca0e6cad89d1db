// Package interceptor wraps a client.Client so that tests can replace or
// observe individual calls, for example to inject a conflict on the third
// Update or a timeout on a List.
//
// Guarantees:
//   - A nil function in Funcs passes the call through to the wrapped client
//     unchanged.
//   - Each function receives the wrapped client, so it can call through
//     before or after changing the arguments or the result.
//   - The wrapped client is a client.WithWatch, as controller-runtime's:
//     Watch calls Funcs.Watch, else the wrapped client's Watch when it has
//     one (the fake's does), else fails with client.ErrNotSupported.
package interceptor

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeloop/kubeloop/client"
)

// Funcs holds the functions that replace the calls of a client. The names
// and signatures are controller-runtime's, with client.Client where it has
// client.WithWatch, except Watch's, which takes a client.WithWatch.
type Funcs struct {
	Get               func(ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error
	List              func(ctx context.Context, c client.Client, list client.ObjectList, opts ...client.ListOption) error
	Create            func(ctx context.Context, c client.Client, obj client.Object, opts ...client.CreateOption) error
	Update            func(ctx context.Context, c client.Client, obj client.Object, opts ...client.UpdateOption) error
	Patch             func(ctx context.Context, c client.Client, obj client.Object, patch client.Patch, opts ...client.PatchOption) error
	Delete            func(ctx context.Context, c client.Client, obj client.Object, opts ...client.DeleteOption) error
	DeleteAllOf       func(ctx context.Context, c client.Client, obj client.Object, opts ...client.DeleteAllOfOption) error
	Apply             func(ctx context.Context, c client.Client, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error
	SubResourceGet    func(ctx context.Context, c client.Client, subResourceName string, obj client.Object, subResource client.Object, opts ...client.SubResourceGetOption) error
	SubResourceCreate func(ctx context.Context, c client.Client, subResourceName string, obj client.Object, subResource client.Object, opts ...client.SubResourceCreateOption) error
	SubResourceUpdate func(ctx context.Context, c client.Client, subResourceName string, obj client.Object, opts ...client.SubResourceUpdateOption) error
	SubResourcePatch  func(ctx context.Context, c client.Client, subResourceName string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error
	SubResourceApply  func(ctx context.Context, c client.Client, subResourceName string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error
	// Watch replaces Watch. c is the wrapped client as a client.WithWatch,
	// as controller-runtime's: its Watch fails with client.ErrNotSupported
	// when the wrapped client does not watch.
	Watch func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error)
}

// NewClient returns c with the calls that funcs sets replaced. The result
// watches when c does (see the package guarantees), so it is a
// client.WithWatch like controller-runtime's.
func NewClient(c client.Client, funcs Funcs) client.WithWatch {
	return &interceptedClient{Client: c, funcs: funcs}
}

type interceptedClient struct {
	client.Client
	funcs Funcs
}

var _ client.WithWatch = (*interceptedClient)(nil)

// Watch calls Funcs.Watch, else the wrapped client's Watch.
func (c *interceptedClient) Watch(ctx context.Context, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
	if c.funcs.Watch != nil {
		return c.funcs.Watch(ctx, watcher{c.Client}, list, opts...)
	}
	return watcher{c.Client}.Watch(ctx, list, opts...)
}

// watcher is the wrapped client as a client.WithWatch: its Watch is the
// wrapped client's when it has one, else fails with ErrNotSupported.
type watcher struct{ client.Client }

func (w watcher) Watch(ctx context.Context, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
	if ww, ok := w.Client.(client.WithWatch); ok {
		return ww.Watch(ctx, list, opts...)
	}
	return nil, fmt.Errorf("watch %T: the wrapped client %T does not watch: %w", list, w.Client, client.ErrNotSupported)
}

func (c *interceptedClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if c.funcs.Get != nil {
		return c.funcs.Get(ctx, c.Client, key, obj, opts...)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *interceptedClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if c.funcs.List != nil {
		return c.funcs.List(ctx, c.Client, list, opts...)
	}
	return c.Client.List(ctx, list, opts...)
}

func (c *interceptedClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if c.funcs.Create != nil {
		return c.funcs.Create(ctx, c.Client, obj, opts...)
	}
	return c.Client.Create(ctx, obj, opts...)
}

func (c *interceptedClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if c.funcs.Update != nil {
		return c.funcs.Update(ctx, c.Client, obj, opts...)
	}
	return c.Client.Update(ctx, obj, opts...)
}

func (c *interceptedClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if c.funcs.Patch != nil {
		return c.funcs.Patch(ctx, c.Client, obj, patch, opts...)
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *interceptedClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if c.funcs.Delete != nil {
		return c.funcs.Delete(ctx, c.Client, obj, opts...)
	}
	return c.Client.Delete(ctx, obj, opts...)
}

func (c *interceptedClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	if c.funcs.DeleteAllOf != nil {
		return c.funcs.DeleteAllOf(ctx, c.Client, obj, opts...)
	}
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}

func (c *interceptedClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	if c.funcs.Apply != nil {
		return c.funcs.Apply(ctx, c.Client, obj, opts...)
	}
	return c.Client.Apply(ctx, obj, opts...)
}

func (c *interceptedClient) Status() client.SubResourceWriter { return c.SubResource("status") }

func (c *interceptedClient) SubResource(name string) client.SubResourceClient {
	return &subResource{parent: c, name: name, inner: c.Client.SubResource(name)}
}

type subResource struct {
	parent *interceptedClient
	name   string
	inner  client.SubResourceClient
}

func (s *subResource) Get(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceGetOption) error {
	if f := s.parent.funcs.SubResourceGet; f != nil {
		return f(ctx, s.parent.Client, s.name, obj, sub, opts...)
	}
	return s.inner.Get(ctx, obj, sub, opts...)
}

func (s *subResource) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	if f := s.parent.funcs.SubResourceCreate; f != nil {
		return f(ctx, s.parent.Client, s.name, obj, sub, opts...)
	}
	return s.inner.Create(ctx, obj, sub, opts...)
}

func (s *subResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if f := s.parent.funcs.SubResourceUpdate; f != nil {
		return f(ctx, s.parent.Client, s.name, obj, opts...)
	}
	return s.inner.Update(ctx, obj, opts...)
}

func (s *subResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if f := s.parent.funcs.SubResourcePatch; f != nil {
		return f(ctx, s.parent.Client, s.name, obj, patch, opts...)
	}
	return s.inner.Patch(ctx, obj, patch, opts...)
}

func (s *subResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	if f := s.parent.funcs.SubResourceApply; f != nil {
		return f(ctx, s.parent.Client, s.name, obj, opts...)
	}
	return s.inner.Apply(ctx, obj, opts...)
}
