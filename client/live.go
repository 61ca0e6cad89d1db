package client

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/client/internal/live"
)

// liveClient is the client of the API server: it turns the options of
// each call into the API server's and hands the request to live.Client.
type liveClient struct {
	rest       *live.Client
	fieldOwner string
}

var _ Client = (*liveClient)(nil)

func newLive(cfg *rest.Config, opts Options) (*liveClient, error) {
	rc, err := live.New(cfg, opts.Scheme, opts.Mapper, opts.HTTPClient)
	if err != nil {
		return nil, err
	}
	return &liveClient{rest: rc, fieldOwner: opts.FieldOwner}, nil
}

func (c *liveClient) Scheme() *runtime.Scheme     { return c.rest.Scheme() }
func (c *liveClient) RESTMapper() meta.RESTMapper { return c.rest.RESTMapper() }

func (c *liveClient) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return apiutil.GVKForObject(obj, c.rest.Scheme())
}

func (c *liveClient) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	return apiutil.IsObjectNamespaced(obj, c.rest.Scheme(), c.rest.RESTMapper())
}

// livePatch adapts a Patch to the live client's.
type livePatch struct{ p Patch }

func (l livePatch) Type() types.PatchType                { return l.p.Type() }
func (l livePatch) Data(obj live.Object) ([]byte, error) { return l.p.Data(obj) }

func patchOf(p Patch) live.Patch {
	if p == nil {
		return nil
	}
	return livePatch{p: p}
}

func (c *liveClient) Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error {
	return c.rest.Get(ctx, key, obj, (&GetOptions{}).ApplyOptions(opts).Raw)
}

func (c *liveClient) List(ctx context.Context, list ObjectList, opts ...ListOption) error {
	o := (&ListOptions{}).ApplyOptions(opts)
	return c.rest.List(ctx, list, o.Namespace, o.LabelSelector, o.AsListOptions())
}

func (c *liveClient) Create(ctx context.Context, obj Object, opts ...CreateOption) error {
	o := (&CreateOptions{}).ApplyOptions(opts)
	o.FieldManager = orString(o.FieldManager, c.fieldOwner)
	return c.rest.Create(ctx, obj, o.AsCreateOptions())
}

func (c *liveClient) Update(ctx context.Context, obj Object, opts ...UpdateOption) error {
	o := (&UpdateOptions{}).ApplyOptions(opts)
	o.FieldManager = orString(o.FieldManager, c.fieldOwner)
	return c.rest.Update(ctx, obj, o.AsUpdateOptions())
}

func (c *liveClient) Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error {
	o := (&PatchOptions{}).ApplyOptions(opts)
	o.FieldManager = orString(o.FieldManager, c.fieldOwner)
	return c.rest.Patch(ctx, obj, patchOf(patch), o.AsPatchOptions())
}

func (c *liveClient) Delete(ctx context.Context, obj Object, opts ...DeleteOption) error {
	_, err := c.rest.Delete(ctx, obj, (&DeleteOptions{}).ApplyOptions(opts).AsDeleteOptions())
	return err
}

func (c *liveClient) DeleteAllOf(ctx context.Context, obj Object, opts ...DeleteAllOfOption) error {
	o := (&DeleteAllOfOptions{}).ApplyOptions(opts)
	return c.rest.DeleteAllOf(ctx, obj, o.Namespace, o.LabelSelector, o.Everything, o.AsListOptions(), o.AsDeleteOptions())
}

func (c *liveClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...ApplyOption) error {
	o := (&ApplyOptions{}).ApplyOptions(opts)
	o.FieldManager = orString(o.FieldManager, c.fieldOwner)
	return c.rest.Apply(ctx, obj, o.AsPatchOptions())
}

// Status returns a writer for the status subresource: its Update and Patch
// change only the status, never the spec.
func (c *liveClient) Status() SubResourceWriter { return c.SubResource("status") }

// SubResource returns a client for the named subresource of an object, for
// example "status", "scale" (with an autoscaling/v1 Scale body) or
// "eviction" (Create with a policy/v1 Eviction).
func (c *liveClient) SubResource(subResource string) SubResourceClient {
	return &liveSubResource{sub: c.rest.SubResource(subResource), fieldOwner: c.fieldOwner}
}

type liveSubResource struct {
	sub        live.Sub
	fieldOwner string
}

var _ SubResourceClient = (*liveSubResource)(nil)

func (s *liveSubResource) Get(ctx context.Context, obj, sub Object, opts ...SubResourceGetOption) error {
	return s.sub.Get(ctx, obj, sub, (&SubResourceGetOptions{}).ApplyOptions(opts).Raw)
}

func (s *liveSubResource) Create(ctx context.Context, obj, sub Object, opts ...SubResourceCreateOption) error {
	o := (&SubResourceCreateOptions{}).ApplyOptions(opts)
	o.FieldManager = orString(o.FieldManager, s.fieldOwner)
	return s.sub.Create(ctx, obj, sub, o.AsCreateOptions())
}

func (s *liveSubResource) Update(ctx context.Context, obj Object, opts ...SubResourceUpdateOption) error {
	o := (&SubResourceUpdateOptions{}).ApplyOptions(opts)
	o.FieldManager = orString(o.FieldManager, s.fieldOwner)
	return s.sub.Update(ctx, obj, bodyOr(obj, o.SubResourceBody), o.AsUpdateOptions())
}

func (s *liveSubResource) Patch(ctx context.Context, obj Object, patch Patch, opts ...SubResourcePatchOption) error {
	o := (&SubResourcePatchOptions{}).ApplyOptions(opts)
	o.FieldManager = orString(o.FieldManager, s.fieldOwner)
	return s.sub.Patch(ctx, obj, bodyOr(obj, o.SubResourceBody), patchOf(patch), o.AsPatchOptions())
}

func (s *liveSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...SubResourceApplyOption) error {
	o := (&SubResourceApplyOptions{}).ApplyOpts(opts)
	o.FieldManager = orString(o.FieldManager, s.fieldOwner)
	return s.sub.Apply(ctx, obj, o.SubResourceBody, o.AsPatchOptions())
}

// bodyOr returns body, or obj when body is nil.
func bodyOr(obj, body Object) Object {
	if body != nil {
		return body
	}
	return obj
}
