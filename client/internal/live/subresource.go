package live

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/client/internal/fence"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// Sub sends requests to a named subresource ("status", "scale",
// "eviction", ...) of objects.
type Sub struct {
	c    *Client
	name string
}

// SubResource returns the requests of subresource name.
func (c *Client) SubResource(name string) Sub { return Sub{c: c, name: name} }

func (s Sub) verb(v string) string { return v + " " + s.name + " of" }

// target resolves obj's kind for a subresource request and checks its
// key and, when body is not nil, that *body is set.
func (s Sub) target(verb string, obj Object, body *Object) (*target, error) {
	if kinds.IsNil(obj) {
		return nil, NilError(s.verb(verb), obj)
	}
	if s.name == "" {
		return nil, fmt.Errorf("%s %T: subresource name is empty", s.verb(verb), obj)
	}
	t, err := s.c.checkedTarget(s.verb(verb), obj)
	if err != nil {
		return nil, err
	}
	if t.metadata {
		return nil, opError(s.verb(verb), t.gvk, obj.GetNamespace(), obj.GetName(),
			fmt.Errorf("metadata-only objects: %w", ErrNotSupported))
	}
	if body != nil && kinds.IsNil(*body) {
		return nil, opError(s.verb(verb), t.gvk, obj.GetNamespace(), obj.GetName(), fmt.Errorf("subresource body: %w", ErrNilObject))
	}
	return t, nil
}

// Get fills sub with the subresource of obj; raw nil means no options.
func (s Sub) Get(ctx context.Context, obj, sub Object, raw *metav1.GetOptions) error {
	t, err := s.target("get", obj, &sub)
	if err != nil {
		return err
	}
	r := t.request(t.rc.Get(), obj.GetNamespace(), obj.GetName()).SubResource(s.name)
	if raw != nil {
		r = withParams(r, raw)
	}
	return opError(s.verb("get"), t.gvk, obj.GetNamespace(), obj.GetName(), into(r.Do(ctx), sub))
}

// Create creates sub for obj (an Eviction for a Pod, for example).
func (s Sub) Create(ctx context.Context, obj, sub Object, co *metav1.CreateOptions) error {
	t, err := s.target("create", obj, &sub)
	if err != nil {
		return err
	}
	r := withParams(t.request(t.rc.Post(), obj.GetNamespace(), obj.GetName()).SubResource(s.name), co)
	ctx, done, err := fence.Write(ctx)
	if err != nil {
		return opError(s.verb("create"), t.gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	return opError(s.verb("create"), t.gvk, obj.GetNamespace(), obj.GetName(), done(into(r.Body(sub).Do(ctx), sub)))
}

// Update sends body (obj, or a subresource body such as a Scale) to the
// subresource of obj and decodes the answer into it.
func (s Sub) Update(ctx context.Context, obj, body Object, uo *metav1.UpdateOptions) error {
	t, err := s.target("update", obj, nil)
	if err != nil {
		return err
	}
	r := withParams(t.request(t.rc.Put(), obj.GetNamespace(), obj.GetName()).SubResource(s.name), uo)
	ctx, done, err := fence.Write(ctx)
	if err != nil {
		return opError(s.verb("update"), t.gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	return opError(s.verb("update"), t.gvk, obj.GetNamespace(), obj.GetName(), done(into(r.Body(body).Do(ctx), body)))
}

// Patch patches the subresource of obj, computing the patch from body
// (obj, or a subresource body), which receives the answer.
func (s Sub) Patch(ctx context.Context, obj, body Object, patch Patch, po *metav1.PatchOptions) error {
	t, err := s.target("patch", obj, nil)
	if err != nil {
		return err
	}
	fail := func(err error) error { return opError(s.verb("patch"), t.gvk, obj.GetNamespace(), obj.GetName(), err) }
	if patch == nil {
		return fail(fmt.Errorf("patch is nil"))
	}
	if err := checkPatchOptions(patch.Type(), po); err != nil {
		return fail(err)
	}
	data, err := patch.Data(body)
	if err != nil {
		return fail(err)
	}
	r := withParams(t.request(t.rc.Patch(patch.Type()), obj.GetNamespace(), obj.GetName()).SubResource(s.name), po)
	ctx, done, err := fence.Write(ctx)
	if err != nil {
		return fail(err)
	}
	return fail(done(into(r.Body(data).Do(ctx), body)))
}

// Apply sends a server-side apply request to the subresource of the
// object obj names, with body (nil means obj) as the request, and decodes
// the answer into the body. po.FieldManager is required.
func (s Sub) Apply(ctx context.Context, obj, body runtime.ApplyConfiguration, po *metav1.PatchOptions) error {
	return s.c.apply(ctx, obj, &s.name, body, po)
}
