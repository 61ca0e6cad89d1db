package client

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/internal/kinds"
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
	// scheme is the live client's when live is the package's own client,
	// whose kinds of typed objects depend on their Go type alone; reads
	// then remember, per type, what cached answers (typedKinds).
	scheme     *runtime.Scheme
	typedKinds sync.Map // reflect.Type -> typedKind
}

// typedKind is what cached answered for a typed Go type.
type typedKind struct {
	useCache bool
	gvk      schema.GroupVersionKind
	scope    scope
}

// scope is what the cached client knows of a kind's scope.
type scope uint8

const (
	scopeUnknown scope = iota
	scopeNamespaced
	scopeCluster
)

// scopeOf asks the mapper for gvk's scope.
func (c *cachedClient) scopeOf(gvk schema.GroupVersionKind) scope {
	namespaced, err := apiutil.IsGVKNamespaced(gvk, c.live.RESTMapper())
	switch {
	case err != nil:
		return scopeUnknown
	case namespaced:
		return scopeNamespaced
	}
	return scopeCluster
}

// writeKeyFor returns the key under which a write of the object ns/name of
// kind gvk is remembered: without the namespace for a cluster-scoped kind,
// whose namespace the API server ignores (a Delete or an Apply leaves the
// caller's namespace in place; other writes answer without it).
func (c *cachedClient) writeKeyFor(gvk schema.GroupVersionKind, ns, name string) writeKey {
	if ns != "" && c.scopeOf(gvk) == scopeCluster {
		ns = ""
	}
	return writeKey{gk: gvk.GroupKind(), namespace: ns, name: name}
}

// readKey returns the key under which a write of the object a Get of key
// reads is remembered, and whether one is. A namespace in the key of a
// cluster-scoped kind is ignored; when the scope is unknown both keys are
// tried (a namespaced kind's writes are never remembered without a
// namespace).
func (c *cachedClient) readKey(gvk schema.GroupVersionKind, sc scope, key ObjectKey) (writeKey, bool) {
	wk := writeKey{gk: gvk.GroupKind(), namespace: key.Namespace, name: key.Name}
	switch {
	case key.Namespace == "" || sc == scopeNamespaced:
	case sc == scopeCluster:
		wk.namespace = ""
	default:
		if c.writes.tracked(wk) {
			return wk, true
		}
		wk.namespace = ""
	}
	return wk, c.writes.tracked(wk)
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
	if lc, ok := live.(*liveClient); ok {
		c.scheme = lc.scheme
	}
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

// cached reports whether reads of obj go to the cache, obj's kind and
// what is known of its scope. For a typed object whose Go type the scheme
// maps to one kind, the answer is remembered for the type: a Get then
// makes one lookup instead of the scheme's (reflection, two map lookups),
// the disabled kinds' (hashing the group and kind) and the mapper's.
func (c *cachedClient) cached(obj runtime.Object) (bool, schema.GroupVersionKind, scope) {
	if c.scheme == nil {
		useCache, gvk := c.resolve(obj)
		return useCache, gvk, scopeUnknown
	}
	t := reflect.TypeOf(obj)
	if k, ok := c.typedKinds.Load(t); ok {
		k := k.(typedKind)
		return k.useCache, k.gvk, k.scope
	}
	useCache, gvk := c.resolve(obj)
	sc := scopeUnknown
	if gvk.Kind != "" && !apiutil.IsUnstructured(obj) && !apiutil.IsPartialMetadata(obj) {
		if kinds, _, err := c.scheme.ObjectKinds(obj); err == nil && len(kinds) == 1 {
			sc = c.scopeOf(gvk)
			c.typedKinds.Store(t, typedKind{useCache: useCache, gvk: gvk, scope: sc})
		}
	}
	return useCache, gvk, sc
}

// resolve is cached without memory.
func (c *cachedClient) resolve(obj runtime.Object) (bool, schema.GroupVersionKind) {
	gvk, err := c.live.GroupVersionKindFor(obj)
	if err != nil {
		return false, gvk // the live client reports the error
	}
	if _, isList := obj.(ObjectList); isList {
		gvk.Kind = kinds.TrimList(gvk.Kind)
	}
	if apiutil.IsUnstructured(obj) && !c.unstructured {
		return false, gvk
	}
	return !c.disabled[gvk.GroupKind()], gvk
}

// Get reads from the cache unless obj's kind bypasses it; see New for how
// it waits for the cache to catch up with this client's own writes. obj is
// filled only with what the Get returns: a NotFound leaves it untouched.
func (c *cachedClient) Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error {
	if isNil(obj) {
		return nilError("get", obj)
	}
	useCache, gvk, sc := c.cached(obj)
	if !useCache {
		return c.live.Get(ctx, key, obj, opts...)
	}
	wk, tracked := c.readKey(gvk, sc, key)
	if !tracked {
		return c.cache.Get(ctx, key, obj, opts...)
	}
	caughtUp, err := c.settle(ctx, wk, key, obj)
	if err != nil {
		return err
	}
	if caughtUp {
		return c.cache.Get(ctx, key, obj, opts...)
	}
	return c.live.Get(ctx, key, obj, opts...)
}

// settle waits for the cache to catch up with this client's last write of
// wk (see writeTracker.settle), looking at the cached object without
// copying it into obj, which only names the kind.
func (c *cachedClient) settle(ctx context.Context, wk writeKey, key ObjectKey, obj Object) (bool, error) {
	kindOf := c.kindOf(obj)
	var peek func() (Object, error)
	if sr, ok := c.cache.(SharedReader); ok {
		peek = func() (Object, error) { return sr.GetShared(ctx, key, kindOf) }
	} else {
		scratch := newObjectLike(kindOf)
		peek = func() (Object, error) { return scratch, c.cache.Get(ctx, key, scratch, UnsafeDisableDeepCopy) }
	}
	var progress func() (uint64, bool)
	var next func(context.Context, uint64) bool
	if cp, ok := c.cache.(CacheProgress); ok {
		progress = func() (uint64, bool) { return cp.ObservedVersion(kindOf, key.Namespace) }
		next = func(ctx context.Context, rv uint64) bool { return cp.WaitForVersion(ctx, kindOf, key.Namespace, rv) }
	}
	return c.writes.settle(ctx, wk, peek, progress, next)
}

// List reads from the cache unless list's kind bypasses it. It is not
// covered by the read-your-own-writes guarantee.
func (c *cachedClient) List(ctx context.Context, list ObjectList, opts ...ListOption) error {
	if isNil(list) {
		return nilError("list", list)
	}
	if useCache, _, _ := c.cached(list); useCache {
		return c.cache.List(ctx, list, opts...)
	}
	return c.live.List(ctx, list, opts...)
}

// remember records a successful, persisted write of obj, as the API
// server answered it.
func (c *cachedClient) remember(obj Object, dryRun []string) {
	if len(dryRun) > 0 || isNil(obj) {
		return
	}
	gvk, err := c.live.GroupVersionKindFor(obj)
	if err != nil {
		return
	}
	e := writeEntry{state: present, rv: parseRV(obj.GetResourceVersion()), uid: obj.GetUID()}
	if removedByWrite(obj) {
		e.state = gone
	} else if cp, ok := c.cache.(CacheProgress); ok && !cp.Holds(obj) {
		e.state = outOfScope
	}
	c.writes.record(c.writeKeyFor(gvk, obj.GetNamespace(), obj.GetName()), e)
}

// removedByWrite reports whether the server deleted obj as it wrote it: the
// write removed the last finalizer of an object being deleted (a pod in
// its grace period, which also has no finalizers, stays).
func removedByWrite(obj Object) bool {
	if obj.GetDeletionTimestamp() == nil || len(obj.GetFinalizers()) > 0 {
		return false
	}
	grace := obj.GetDeletionGracePeriodSeconds()
	return grace == nil || *grace == 0
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
		c.writes.record(c.writeKeyFor(at.GVK, at.Namespace, at.Name),
			writeEntry{state: present, rv: parseRV(at.ResourceVersion)})
	}
	return nil
}

// Delete deletes through the API server and remembers what its answer
// says: the object is gone, or terminating (finalizers, a grace period) at
// a new resourceVersion.
func (c *cachedClient) Delete(ctx context.Context, obj Object, opts ...DeleteOption) error {
	var answer deleteAnswer
	var err error
	if lc, ok := c.live.(*liveClient); ok {
		answer, err = lc.delete(ctx, obj, opts...)
	} else {
		err = c.live.Delete(ctx, obj, opts...)
	}
	if err != nil || len((&DeleteOptions{}).ApplyOptions(opts).DryRun) > 0 {
		return err
	}
	gvk, err := c.live.GroupVersionKindFor(obj)
	if err != nil {
		return nil
	}
	e := writeEntry{state: deleting, rv: parseRV(obj.GetResourceVersion()), uid: obj.GetUID()}
	if answer.known {
		e.state = gone
		if !answer.gone {
			e.state, e.rv = present, answer.rv
		}
		if answer.uid != "" {
			e.uid = answer.uid
		}
	}
	c.writes.record(c.writeKeyFor(gvk, obj.GetNamespace(), obj.GetName()), e)
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
		s.c.writes.record(s.c.writeKeyFor(gvk, obj.GetNamespace(), obj.GetName()),
			writeEntry{state: deleting, rv: parseRV(obj.GetResourceVersion()), uid: obj.GetUID()})
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
	parent, err := metadataOfApplied(obj)
	if err != nil {
		return nil // the answer names no object: nothing to remember
	}
	if isNil(o.SubResourceBody) {
		s.rememberParent(parent, nil, o.DryRun)
		return nil
	}
	if body, err := metadataOfApplied(o.SubResourceBody); err == nil {
		s.rememberParent(parent, body, o.DryRun)
	}
	return nil
}

func (s *cachedSubResource) rememberParent(obj, body Object, dryRun []string) {
	if isNil(body) {
		s.c.remember(obj, dryRun) // obj is the parent as the server answered
		return
	}
	if len(dryRun) > 0 {
		return
	}
	gvk, err := s.c.live.GroupVersionKindFor(obj)
	if err != nil {
		return
	}
	s.c.writes.record(s.c.writeKeyFor(gvk, obj.GetNamespace(), obj.GetName()),
		writeEntry{state: present, rv: parseRV(body.GetResourceVersion())})
}
