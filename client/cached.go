package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client/apiutil"
)

// cachedClient reads from a cache, writes through live, and remembers its
// own writes so that reads never go back in time (see New).
type cachedClient struct {
	live         Client
	cache        Reader
	disabled     map[schema.GroupKind]bool
	unstructured bool
	writes       *writeTracker
	kinds        sync.Map // reflect.Type -> Object: see kindOf
}

var _ Client = (*cachedClient)(nil)

// newCached wraps live with a cache. live may be any Client (the tests use
// the fake one as the API server).
func newCached(live Client, opts CacheOptions) (*cachedClient, error) {
	if opts.Reader == nil {
		return nil, errors.New("client: CacheOptions.Reader is nil")
	}
	c := &cachedClient{live: live, cache: opts.Reader, disabled: map[schema.GroupKind]bool{},
		unstructured: opts.Unstructured, writes: newWriteTracker(opts.ReadYourOwnWritesTimeout)}
	for _, obj := range opts.DisableFor {
		gvk, err := live.GroupVersionKindFor(obj)
		if err != nil {
			return nil, fmt.Errorf("client: CacheOptions.DisableFor: %w", err)
		}
		c.disabled[gvk.GroupKind()] = true
	}
	return c, nil
}

func (c *cachedClient) Scheme() *runtime.Scheme     { return c.live.Scheme() }
func (c *cachedClient) RESTMapper() meta.RESTMapper { return c.live.RESTMapper() }
func (c *cachedClient) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return c.live.GroupVersionKindFor(obj)
}
func (c *cachedClient) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	return c.live.IsObjectNamespaced(obj)
}

// cached reports whether reads of obj go to the cache, and obj's kind.
func (c *cachedClient) cached(obj runtime.Object) (bool, schema.GroupVersionKind) {
	gvk, err := c.live.GroupVersionKindFor(obj)
	if err != nil {
		return false, gvk // the live client reports the error
	}
	if _, isList := obj.(ObjectList); isList {
		gvk.Kind = trimList(gvk.Kind)
	}
	if apiutil.IsUnstructured(obj) && !c.unstructured {
		return false, gvk
	}
	return !c.disabled[gvk.GroupKind()], gvk
}

func trimList(kind string) string {
	if len(kind) > 4 && kind[len(kind)-4:] == "List" {
		return kind[:len(kind)-4]
	}
	return kind
}

// Get reads from the cache unless obj's kind bypasses it; see New for how
// it waits for the cache to catch up with this client's own writes.
func (c *cachedClient) Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error {
	if isNil(obj) {
		return nilError("get", obj)
	}
	useCache, gvk := c.cached(obj)
	if !useCache {
		return c.live.Get(ctx, key, obj, opts...)
	}
	wk := writeKey{gk: gvk.GroupKind(), namespace: key.Namespace, name: key.Name}
	if !c.writes.tracked(wk) {
		return c.cache.Get(ctx, key, obj, opts...)
	}
	caughtUp, err := c.writes.wait(ctx, wk, func() (Object, error) {
		return obj, c.cache.Get(ctx, key, obj, opts...)
	})
	if caughtUp || (err != nil && !isNotFound(err)) {
		return err
	}
	return c.live.Get(ctx, key, obj, opts...)
}

// List reads from the cache unless list's kind bypasses it. It is not
// covered by the read-your-own-writes guarantee.
func (c *cachedClient) List(ctx context.Context, list ObjectList, opts ...ListOption) error {
	if isNil(list) {
		return nilError("list", list)
	}
	if useCache, _ := c.cached(list); useCache {
		return c.cache.List(ctx, list, opts...)
	}
	return c.live.List(ctx, list, opts...)
}

// remember records a successful, persisted write of obj.
func (c *cachedClient) remember(obj Object, dryRun []string) {
	if len(dryRun) > 0 || isNil(obj) {
		return
	}
	gvk, err := c.live.GroupVersionKindFor(obj)
	if err != nil {
		return
	}
	k := writeKey{gk: gvk.GroupKind(), namespace: obj.GetNamespace(), name: obj.GetName()}
	if obj.GetDeletionTimestamp() != nil && len(obj.GetFinalizers()) == 0 {
		// The write removed the last finalizer: the server deleted it.
		c.writes.deleted(k, string(obj.GetUID()))
		return
	}
	c.writes.wrote(k, obj.GetResourceVersion())
}

func (c *cachedClient) Create(ctx context.Context, obj Object, opts ...CreateOption) error {
	if err := c.live.Create(ctx, obj, opts...); err != nil {
		return err
	}
	c.remember(obj, (&CreateOptions{}).ApplyOptions(opts).DryRun)
	return nil
}

func (c *cachedClient) Update(ctx context.Context, obj Object, opts ...UpdateOption) error {
	if err := c.live.Update(ctx, obj, opts...); err != nil {
		return err
	}
	c.remember(obj, (&UpdateOptions{}).ApplyOptions(opts).DryRun)
	return nil
}

func (c *cachedClient) Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error {
	if err := c.live.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	c.remember(obj, (&PatchOptions{}).ApplyOptions(opts).DryRun)
	return nil
}

func (c *cachedClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...ApplyOption) error {
	if err := c.live.Apply(ctx, obj, opts...); err != nil {
		return err
	}
	if len((&ApplyOptions{}).ApplyOptions(opts).DryRun) > 0 {
		return nil
	}
	if at, err := ApplyTargetOf(obj); err == nil {
		c.writes.wrote(writeKey{gk: at.GVK.GroupKind(), namespace: at.Namespace, name: at.Name}, at.ResourceVersion)
	}
	return nil
}

func (c *cachedClient) Delete(ctx context.Context, obj Object, opts ...DeleteOption) error {
	if err := c.live.Delete(ctx, obj, opts...); err != nil {
		return err
	}
	if len((&DeleteOptions{}).ApplyOptions(opts).DryRun) > 0 {
		return nil
	}
	if gvk, err := c.live.GroupVersionKindFor(obj); err == nil {
		c.writes.deleted(writeKey{gk: gvk.GroupKind(), namespace: obj.GetNamespace(), name: obj.GetName()}, string(obj.GetUID()))
	}
	return nil
}

// DeleteAllOf deletes through the API server; the objects it deletes are
// not tracked for read-your-own-writes.
func (c *cachedClient) DeleteAllOf(ctx context.Context, obj Object, opts ...DeleteAllOfOption) error {
	return c.live.DeleteAllOf(ctx, obj, opts...)
}

func (c *cachedClient) Status() SubResourceWriter { return c.SubResource("status") }

func (c *cachedClient) SubResource(subResource string) SubResourceClient {
	return &cachedSubResource{c: c, name: subResource, inner: c.live.SubResource(subResource)}
}

// cachedSubResource remembers subresource writes. A scale body carries the
// resourceVersion of its parent, so it is remembered for the parent.
type cachedSubResource struct {
	c     *cachedClient
	name  string
	inner SubResourceClient
}

func (s *cachedSubResource) Get(ctx context.Context, obj Object, sub Object, opts ...SubResourceGetOption) error {
	return s.inner.Get(ctx, obj, sub, opts...)
}

// Create passes through; a successful eviction is remembered as a delete.
func (s *cachedSubResource) Create(ctx context.Context, obj Object, sub Object, opts ...SubResourceCreateOption) error {
	if err := s.inner.Create(ctx, obj, sub, opts...); err != nil {
		return err
	}
	o := (&SubResourceCreateOptions{}).ApplyOptions(opts)
	if s.name != "eviction" || len(o.DryRun) > 0 {
		return nil
	}
	if gvk, err := s.c.live.GroupVersionKindFor(obj); err == nil {
		s.c.writes.deleted(writeKey{gk: gvk.GroupKind(), namespace: obj.GetNamespace(), name: obj.GetName()}, string(obj.GetUID()))
	}
	return nil
}

func (s *cachedSubResource) Update(ctx context.Context, obj Object, opts ...SubResourceUpdateOption) error {
	if err := s.inner.Update(ctx, obj, opts...); err != nil {
		return err
	}
	o := (&SubResourceUpdateOptions{}).ApplyOptions(opts)
	s.rememberParent(obj, o.SubResourceBody, o.DryRun)
	return nil
}

func (s *cachedSubResource) Patch(ctx context.Context, obj Object, patch Patch, opts ...SubResourcePatchOption) error {
	if err := s.inner.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	o := (&SubResourcePatchOptions{}).ApplyOptions(opts)
	s.rememberParent(obj, o.SubResourceBody, o.DryRun)
	return nil
}

func (s *cachedSubResource) rememberParent(obj, body Object, dryRun []string) {
	if len(dryRun) > 0 {
		return
	}
	rv := obj.GetResourceVersion()
	if !isNil(body) {
		rv = body.GetResourceVersion()
	}
	gvk, err := s.c.live.GroupVersionKindFor(obj)
	if err != nil {
		return
	}
	s.c.writes.wrote(writeKey{gk: gvk.GroupKind(), namespace: obj.GetNamespace(), name: obj.GetName()}, rv)
}
