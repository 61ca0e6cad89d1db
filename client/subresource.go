package client

import (
	"context"
	"fmt"
)

// Status returns a writer for the status subresource: its Update and Patch
// change only the status, never the spec.
func (c *liveClient) Status() SubResourceWriter { return c.SubResource("status") }

// SubResource returns a client for the named subresource of an object, for
// example "status", "scale" (with an autoscaling/v1 Scale body) or
// "eviction" (Create with a policy/v1 Eviction).
func (c *liveClient) SubResource(subResource string) SubResourceClient {
	return &subResourceClient{c: c, name: subResource}
}

type subResourceClient struct {
	c    *liveClient
	name string
}

var _ SubResourceClient = (*subResourceClient)(nil)

func (s *subResourceClient) verb(v string) string { return v + " " + s.name + " of" }

// target resolves obj's kind for a subresource request and checks its key.
func (s *subResourceClient) target(verb string, obj Object) (*target, error) {
	if isNil(obj) {
		return nil, nilError(s.verb(verb), obj)
	}
	if s.name == "" {
		return nil, fmt.Errorf("%s %T: subresource name is empty", s.verb(verb), obj)
	}
	t, err := s.c.targetFor(s.verb(verb), obj, obj.GetNamespace(), obj.GetName())
	if err != nil {
		return nil, err
	}
	if err := t.check(s.verb(verb), obj.GetNamespace(), obj.GetName()); err != nil {
		return nil, err
	}
	if t.metadata {
		return nil, opError(s.verb(verb), t.gvk, obj.GetNamespace(), obj.GetName(),
			fmt.Errorf("metadata-only objects: %w", ErrNotSupported))
	}
	return t, nil
}

func (s *subResourceClient) Get(ctx context.Context, obj Object, subResource Object, opts ...SubResourceGetOption) error {
	t, err := s.target("get", obj)
	if err != nil {
		return err
	}
	if isNil(subResource) {
		return opError(s.verb("get"), t.gvk, obj.GetNamespace(), obj.GetName(), fmt.Errorf("subresource body: %w", ErrNilObject))
	}
	o := (&SubResourceGetOptions{}).ApplyOptions(opts)
	r := t.request(t.rc.Get(), obj.GetNamespace(), obj.GetName()).SubResource(s.name)
	if o.Raw != nil {
		r = withParams(r, o.Raw)
	}
	return opError(s.verb("get"), t.gvk, obj.GetNamespace(), obj.GetName(), into(r.Do(ctx), subResource))
}

func (s *subResourceClient) Create(ctx context.Context, obj Object, subResource Object, opts ...SubResourceCreateOption) error {
	t, err := s.target("create", obj)
	if err != nil {
		return err
	}
	if isNil(subResource) {
		return opError(s.verb("create"), t.gvk, obj.GetNamespace(), obj.GetName(), fmt.Errorf("subresource body: %w", ErrNilObject))
	}
	o := (&SubResourceCreateOptions{}).ApplyOptions(opts)
	o.FieldManager = orString(o.FieldManager, s.c.fieldOwner)
	r := withParams(t.request(t.rc.Post(), obj.GetNamespace(), obj.GetName()).SubResource(s.name), o.AsCreateOptions())
	ctx, done, err := fenceWrite(ctx)
	if err != nil {
		return opError(s.verb("create"), t.gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	return opError(s.verb("create"), t.gvk, obj.GetNamespace(), obj.GetName(), done(into(r.Body(subResource).Do(ctx), subResource)))
}

func (s *subResourceClient) Update(ctx context.Context, obj Object, opts ...SubResourceUpdateOption) error {
	t, err := s.target("update", obj)
	if err != nil {
		return err
	}
	o := (&SubResourceUpdateOptions{}).ApplyOptions(opts)
	o.FieldManager = orString(o.FieldManager, s.c.fieldOwner)
	body := Object(obj)
	if o.SubResourceBody != nil {
		body = o.SubResourceBody
	}
	r := withParams(t.request(t.rc.Put(), obj.GetNamespace(), obj.GetName()).SubResource(s.name), o.AsUpdateOptions())
	ctx, done, err := fenceWrite(ctx)
	if err != nil {
		return opError(s.verb("update"), t.gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	return opError(s.verb("update"), t.gvk, obj.GetNamespace(), obj.GetName(), done(into(r.Body(body).Do(ctx), body)))
}

func (s *subResourceClient) Patch(ctx context.Context, obj Object, patch Patch, opts ...SubResourcePatchOption) error {
	t, err := s.target("patch", obj)
	if err != nil {
		return err
	}
	if patch == nil {
		return opError(s.verb("patch"), t.gvk, obj.GetNamespace(), obj.GetName(), fmt.Errorf("patch is nil"))
	}
	o := (&SubResourcePatchOptions{}).ApplyOptions(opts)
	o.FieldManager = orString(o.FieldManager, s.c.fieldOwner)
	if err := checkPatchOptions(patch.Type(), &o.PatchOptions); err != nil {
		return opError(s.verb("patch"), t.gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	body := Object(obj)
	if o.SubResourceBody != nil {
		body = o.SubResourceBody
	}
	data, err := patch.Data(body)
	if err != nil {
		return opError(s.verb("patch"), t.gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	r := withParams(t.request(t.rc.Patch(patch.Type()), obj.GetNamespace(), obj.GetName()).SubResource(s.name), o.AsPatchOptions())
	ctx, done, err := fenceWrite(ctx)
	if err != nil {
		return opError(s.verb("patch"), t.gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	return opError(s.verb("patch"), t.gvk, obj.GetNamespace(), obj.GetName(), done(into(r.Body(data).Do(ctx), body)))
}
