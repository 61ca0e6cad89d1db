package fake

import (
	"context"
	"encoding/json"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake/internal/objmap"
)

// Status returns a writer for the status subresource. Kinds without one
// (see WithStatusSubresource) answer NotFound, as the API server does.
func (c *Client) Status() client.SubResourceWriter { return c.SubResource("status") }

// SubResource returns a client for a subresource: "status"; "scale" with
// an autoscaling/v1 Scale (reading spec.replicas and status.replicas);
// "eviction" with a policy/v1 Eviction (deletes the Pod). Others answer
// NotFound.
func (c *Client) SubResource(name string) client.SubResourceClient {
	return &subResourceClient{c: c, name: name}
}

type subResourceClient struct {
	c    *Client
	name string
}

func (s *subResourceClient) verb(v string) string { return v + " " + s.name + " of" }

func (s *subResourceClient) notFound(gvk schema.GroupVersionKind, name string) error {
	return s.c.subNotFound(gvk, s.name, name)
}

// Apply is a simplified server-side apply of the status subresource (see
// Client.Apply): the configuration's status fields are owned by the field
// manager, apart from the fields it applied to the object itself; other
// fields of the configuration are ignored. The object must exist. Other
// subresources answer NotFound, "scale" ErrNotSupported.
func (s *subResourceClient) Apply(_ context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	at, err := client.ApplyTargetOf(obj)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	o := (&client.SubResourceApplyOptions{}).ApplyOpts(opts)
	return s.c.apply(s.verb("apply"), obj, at, &o.ApplyOptions, s.name)
}

func (s *subResourceClient) Get(_ context.Context, obj, sub client.Object, _ ...client.SubResourceGetOption) error {
	verb := s.verb("get")
	gvk, err := s.c.resolve(verb, obj, nsOf(obj), nameOf(obj))
	if err != nil {
		return err
	}
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	m := s.c.stored(gvk.GroupKind(), s.c.keyFor(gvk, obj.GetNamespace(), obj.GetName()))
	if m == nil {
		return opError(verb, gvk, obj.GetNamespace(), obj.GetName(), notFound(s.c.kinds.GroupResource(gvk), obj.GetName()))
	}
	switch {
	case s.name == "status" && s.c.kinds.HasStatus(gvk.GroupKind()):
		return opError(verb, gvk, obj.GetNamespace(), obj.GetName(), objmap.Into(m, sub, gvk))
	case s.name == "scale":
		scale, ok := sub.(*autoscalingv1.Scale)
		if !ok {
			return opError(verb, gvk, obj.GetNamespace(), obj.GetName(), fmt.Errorf("scale body must be *autoscalingv1.Scale, not %T", sub))
		}
		*scale = scaleOf(m)
		return nil
	}
	return opError(verb, gvk, obj.GetNamespace(), obj.GetName(), s.notFound(gvk, obj.GetName()))
}

func scaleOf(m map[string]any) autoscalingv1.Scale {
	u := objmap.Meta(m)
	spec, _, _ := unstructured.NestedInt64(m, "spec", "replicas")
	status, _, _ := unstructured.NestedInt64(m, "status", "replicas")
	sel := ""
	if sm, ok, _ := unstructured.NestedMap(m, "spec", "selector"); ok {
		var ls metav1.LabelSelector
		if data, err := json.Marshal(sm); err == nil && json.Unmarshal(data, &ls) == nil {
			sel = metav1.FormatLabelSelector(&ls)
		}
	}
	return autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
			ResourceVersion: u.GetResourceVersion(), CreationTimestamp: u.GetCreationTimestamp()},
		Spec:   autoscalingv1.ScaleSpec{Replicas: int32(spec)},
		Status: autoscalingv1.ScaleStatus{Replicas: int32(status), Selector: sel},
	}
}

func (s *subResourceClient) Create(_ context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	verb := s.verb("create")
	gvk, err := s.c.resolve(verb, obj, nsOf(obj), nameOf(obj))
	if err != nil {
		return err
	}
	if _, ok := sub.(*policyv1.Eviction); !ok || s.name != "eviction" || gvk.GroupKind() != (schema.GroupKind{Kind: "Pod"}) {
		return opError(verb, gvk, obj.GetNamespace(), obj.GetName(), s.notFound(gvk, obj.GetName()))
	}
	o := (&client.SubResourceCreateOptions{}).ApplyOptions(opts)
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	do := &client.DeleteOptions{DryRun: o.DryRun}
	return opError(verb, gvk, obj.GetNamespace(), obj.GetName(), s.c.delete(gvk, s.c.keyFor(gvk, obj.GetNamespace(), obj.GetName()), do))
}

func (s *subResourceClient) Update(_ context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	verb := s.verb("update")
	gvk, err := s.c.resolve(verb, obj, nsOf(obj), nameOf(obj))
	if err != nil {
		return err
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	o := (&client.SubResourceUpdateOptions{}).ApplyOptions(opts)
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	key := s.c.keyFor(gvk, ns, name)
	switch {
	case s.name == "status" && s.c.kinds.HasStatus(gvk.GroupKind()):
		body := client.Object(obj)
		if o.SubResourceBody != nil {
			body = o.SubResourceBody
		}
		next, err := objmap.ToMap(body, gvk)
		if err != nil {
			return opError(verb, gvk, ns, name, err)
		}
		if err := s.c.checkUnconditional(gvk, next); err != nil {
			return opError(verb, gvk, ns, name, err)
		}
		m, err := s.c.update(gvk, key, next, modeStatus, len(o.DryRun) > 0, orDefault(o.FieldManager))
		if err != nil {
			return opError(verb, gvk, ns, name, err)
		}
		return opError(verb, gvk, ns, name, objmap.Into(m, body, gvk))
	case s.name == "scale":
		scale, ok := o.SubResourceBody.(*autoscalingv1.Scale)
		if !ok {
			return opError(verb, gvk, ns, name, fmt.Errorf("scale update needs WithSubResourceBody(*autoscalingv1.Scale), got %T", o.SubResourceBody))
		}
		return opError(verb, gvk, ns, name, s.scale(gvk, key, scale, len(o.DryRun) > 0, orDefault(o.FieldManager)))
	}
	return opError(verb, gvk, ns, name, s.notFound(gvk, name))
}

// scale writes scale.Spec.Replicas into spec.replicas. Caller holds mu.
func (s *subResourceClient) scale(gvk schema.GroupVersionKind, key client.ObjectKey, scale *autoscalingv1.Scale, dryRun bool, manager string) error {
	old := s.c.stored(gvk.GroupKind(), key)
	if old == nil {
		return notFound(s.c.kinds.GroupResource(gvk), key.Name)
	}
	next := objmap.DeepCopy(old)
	if err := unstructured.SetNestedField(next, int64(scale.Spec.Replicas), "spec", "replicas"); err != nil {
		return err
	}
	objmap.Meta(next).SetResourceVersion(scale.ResourceVersion)
	m, err := s.c.update(gvk, key, next, modeMain, dryRun, manager)
	if err != nil {
		return err
	}
	*scale = scaleOf(m)
	return nil
}

func (s *subResourceClient) Patch(_ context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	verb := s.verb("patch")
	gvk, err := s.c.resolve(verb, obj, nsOf(obj), nameOf(obj))
	if err != nil {
		return err
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	if patch == nil {
		return opError(verb, gvk, ns, name, fmt.Errorf("patch is nil"))
	}
	o := (&client.SubResourcePatchOptions{}).ApplyOptions(opts)
	if err := checkPatchOptions(patch.Type(), &o.PatchOptions); err != nil {
		return opError(verb, gvk, ns, name, err)
	}
	body := client.Object(obj)
	if o.SubResourceBody != nil {
		body = o.SubResourceBody
	}
	data, err := patch.Data(body)
	if err != nil {
		return opError(verb, gvk, ns, name, err)
	}
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	key := s.c.keyFor(gvk, ns, name)
	dryRun := len(o.DryRun) > 0
	switch {
	case s.name == "status" && s.c.kinds.HasStatus(gvk.GroupKind()):
		if patch.Type() == types.ApplyPatchType {
			return opError(verb, gvk, ns, name, fmt.Errorf("apply patches of the status subresource: %w by the fake client", client.ErrNotSupported))
		}
		m, err := s.c.patch(gvk, key, patch.Type(), data, modeStatus, dryRun, orDefault(o.FieldManager))
		if err != nil {
			return opError(verb, gvk, ns, name, err)
		}
		return opError(verb, gvk, ns, name, objmap.Into(m, body, gvk))
	case s.name == "scale":
		old := s.c.stored(gvk.GroupKind(), key)
		if old == nil {
			return opError(verb, gvk, ns, name, notFound(s.c.kinds.GroupResource(gvk), name))
		}
		cur := scaleOf(old)
		curJSON, _ := json.Marshal(&cur)
		out, err := objmap.PatchJSON(patch.Type(), curJSON, data)
		if err != nil {
			return opError(verb, gvk, ns, name, err)
		}
		var scale autoscalingv1.Scale
		if err := json.Unmarshal(out, &scale); err != nil {
			return opError(verb, gvk, ns, name, apierrors.NewBadRequest(err.Error()))
		}
		if err := s.scale(gvk, key, &scale, dryRun, orDefault(o.FieldManager)); err != nil {
			return opError(verb, gvk, ns, name, err)
		}
		if sc, ok := body.(*autoscalingv1.Scale); ok {
			*sc = scale
		}
		return nil
	}
	return opError(verb, gvk, ns, name, s.notFound(gvk, name))
}
