package client

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client/internal/live"
	"github.com/kubeloop/kubeloop/client/internal/ryow"
	"github.com/kubeloop/kubeloop/internal/probe"
)

// cachedClient reads from a cache, writes through live, and remembers its
// own writes so that reads never go back in time (see New). The
// bookkeeping is client/internal/ryow's.
type cachedClient struct {
	live     Client
	cache    Reader
	progress CacheProgress // nil: resourceVersions alone
	shared   SharedReader  // nil: GetShared copies
	route    *ryow.Router
	writes   *ryow.Tracker
}

var _ Client = (*cachedClient)(nil)

// newCached wraps lc with a cache. lc may be any Client (the tests use
// the fake one as the API server).
func newCached(lc Client, opts CacheOptions) (*cachedClient, error) {
	if opts.Reader == nil {
		return nil, errors.New("client: CacheOptions.Reader is nil")
	}
	// The one place the client looks at what its Reader can do beyond
	// Reader: CacheOptions{Reader: c} alone, as controller-runtime users
	// write it, gets c's progress and sharing.
	if p, ok := opts.Reader.(CacheProgress); ok && opts.Progress == nil {
		opts.Progress = p
	}
	if s, ok := opts.Reader.(SharedReader); ok && opts.Shared == nil {
		opts.Shared = s
	}
	c := &cachedClient{live: lc, cache: opts.Reader, progress: opts.Progress, shared: opts.Shared,
		writes: ryow.New(opts.ReadYourOwnWritesTimeout),
		route: &ryow.Router{GVKFor: lc.GroupVersionKindFor, Mapper: lc.RESTMapper,
			Disabled: map[schema.GroupKind]bool{}, Unstructured: opts.Unstructured}}
	if l, ok := lc.(*liveClient); ok {
		c.route.Scheme = l.Scheme()
	}
	for _, obj := range opts.DisableFor {
		gvk, err := lc.GroupVersionKindFor(obj)
		if err != nil {
			return nil, fmt.Errorf("client: CacheOptions.DisableFor: %w", err)
		}
		c.route.Disabled[gvk.GroupKind()] = true
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

// Get reads from the cache unless obj's kind bypasses it; see New for how
// it waits for the cache to catch up with this client's own writes. obj is
// filled only with what the Get returns: a NotFound leaves it untouched.
func (c *cachedClient) Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error {
	if isNil(obj) {
		return nilError("get", obj)
	}
	useCache, gvk, sc := c.route.Route(obj)
	if !useCache {
		return c.live.Get(ctx, key, obj, opts...)
	}
	if wk, tracked := c.route.ReadKey(c.writes, gvk, sc, key); tracked {
		caughtUp, err := c.settle(ctx, wk, key, obj)
		if err != nil {
			return err
		}
		if !caughtUp {
			return c.live.Get(ctx, key, obj, opts...)
		}
	}
	probe.Mark(probe.CacheGet)
	return c.cache.Get(ctx, key, obj, opts...)
}

// kindOf returns obj, or for a typed nil pointer an object that stands for
// its kind.
func (c *cachedClient) kindOf(obj Object) Object { return c.route.KindOf(obj).(Object) }

// settle waits for the cache to catch up with this client's last write of
// wk (ryow.Tracker.Settle), looking at the cached object without copying
// it into obj, which only names the kind.
func (c *cachedClient) settle(ctx context.Context, wk ryow.Key, key ObjectKey, obj Object) (bool, error) {
	kindOf := c.kindOf(obj)
	var peek func() (metav1.Object, error)
	if c.shared != nil {
		peek = func() (metav1.Object, error) { return c.shared.GetShared(ctx, key, kindOf) }
	} else {
		scratch := ryow.NewObjectLike(kindOf).(Object)
		peek = func() (metav1.Object, error) { return scratch, c.cache.Get(ctx, key, scratch, UnsafeDisableDeepCopy) }
	}
	var progress func() (uint64, bool)
	var next func(context.Context, uint64) bool
	if cp := c.progress; cp != nil {
		progress = func() (uint64, bool) { return cp.ObservedVersion(kindOf, key.Namespace) }
		next = func(ctx context.Context, rv uint64) bool { return cp.WaitForVersion(ctx, kindOf, key.Namespace, rv) }
	}
	return c.writes.Settle(ctx, wk, peek, progress, next)
}

// List reads from the cache unless list's kind bypasses it. It is not
// covered by the read-your-own-writes guarantee.
func (c *cachedClient) List(ctx context.Context, list ObjectList, opts ...ListOption) error {
	if isNil(list) {
		return nilError("list", list)
	}
	if useCache, _, _ := c.route.Route(list); useCache {
		return c.cache.List(ctx, list, opts...)
	}
	return c.live.List(ctx, list, opts...)
}

// record remembers e for the object ns/name of obj's kind (an object or
// its Go type), unless the write was a dry run.
func (c *cachedClient) record(obj runtime.Object, ns, name string, dryRun []string, e ryow.Entry) {
	if len(dryRun) > 0 {
		return
	}
	if gvk, err := c.live.GroupVersionKindFor(obj); err == nil {
		c.writes.Record(c.route.WriteKey(gvk, ns, name), e)
	}
}

// remember records a successful, persisted write of obj, as the API
// server answered it.
func (c *cachedClient) remember(obj Object, dryRun []string) {
	if isNil(obj) {
		return
	}
	e := ryow.Entry{State: ryow.Present, RV: ryow.ParseRV(obj.GetResourceVersion()), UID: obj.GetUID()}
	if ryow.RemovedByWrite(obj) {
		e.State = ryow.Gone
	} else if c.progress != nil && !c.progress.Holds(obj) {
		e.State = ryow.OutOfScope
	}
	c.record(obj, obj.GetNamespace(), obj.GetName(), dryRun, e)
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
	if dry := (&ApplyOptions{}).ApplyOptions(opts).DryRun; len(dry) == 0 {
		if at, err := live.ApplyTargetOf(obj); err == nil {
			c.writes.Record(c.route.WriteKey(at.GVK, at.Namespace, at.Name),
				ryow.Entry{State: ryow.Present, RV: ryow.ParseRV(at.ResourceVersion)})
		}
	}
	return nil
}

// Delete deletes through the API server and remembers what its answer
// says: the object is gone, or terminating (finalizers, a grace period) at
// a new resourceVersion.
func (c *cachedClient) Delete(ctx context.Context, obj Object, opts ...DeleteOption) error {
	o := (&DeleteOptions{}).ApplyOptions(opts)
	var answer live.DeleteAnswer
	var err error
	if lc, ok := c.live.(*liveClient); ok {
		answer, err = lc.rest.Delete(ctx, obj, o.AsDeleteOptions())
	} else {
		err = c.live.Delete(ctx, obj, opts...)
	}
	if err != nil {
		return err
	}
	e := ryow.Entry{State: ryow.Deleting, RV: ryow.ParseRV(obj.GetResourceVersion()), UID: obj.GetUID()}
	if answer.Known {
		e.State = ryow.Gone
		if !answer.Gone {
			e.State, e.RV = ryow.Present, answer.RV
		}
		if answer.UID != "" {
			e.UID = answer.UID
		}
	}
	c.record(obj, obj.GetNamespace(), obj.GetName(), o.DryRun, e)
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

var _ SubResourceClient = (*cachedSubResource)(nil)

func (s *cachedSubResource) Get(ctx context.Context, obj Object, sub Object, opts ...SubResourceGetOption) error {
	return s.inner.Get(ctx, obj, sub, opts...)
}

// Create passes through; a successful eviction is remembered as a delete.
func (s *cachedSubResource) Create(ctx context.Context, obj Object, sub Object, opts ...SubResourceCreateOption) error {
	if err := s.inner.Create(ctx, obj, sub, opts...); err != nil {
		return err
	}
	if s.name == "eviction" {
		s.c.record(obj, obj.GetNamespace(), obj.GetName(), (&SubResourceCreateOptions{}).ApplyOptions(opts).DryRun,
			ryow.Entry{State: ryow.Deleting, RV: ryow.ParseRV(obj.GetResourceVersion()), UID: obj.GetUID()})
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

// Apply applies through the API server and remembers the parent's new
// resourceVersion, as Update and Patch of a subresource do.
func (s *cachedSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...SubResourceApplyOption) error {
	if err := s.inner.Apply(ctx, obj, opts...); err != nil {
		return err
	}
	o := (&SubResourceApplyOptions{}).ApplyOpts(opts)
	parent, err := live.MetadataOfApplied(obj)
	if err != nil {
		return nil // the answer names no object: nothing to remember
	}
	if isNil(o.SubResourceBody) {
		s.rememberParent(parent, nil, o.DryRun)
	} else if body, err := live.MetadataOfApplied(o.SubResourceBody); err == nil {
		s.rememberParent(parent, body, o.DryRun)
	}
	return nil
}

func (s *cachedSubResource) rememberParent(obj, body Object, dryRun []string) {
	if isNil(body) {
		s.c.remember(obj, dryRun) // obj is the parent as the server answered
		return
	}
	s.c.record(obj, obj.GetNamespace(), obj.GetName(), dryRun,
		ryow.Entry{State: ryow.Present, RV: ryow.ParseRV(body.GetResourceVersion())})
}
