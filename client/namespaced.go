package client

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/client/apiutil"
)

// ErrNamespaceMismatch is returned (wrapped) by a client from
// NewNamespacedClient for an object, key, list or apply configuration of
// a namespaced kind that names another namespace than the client's.
var ErrNamespaceMismatch = errors.New("client: namespace does not match the namespaced client's")

// NewNamespacedClient returns a client that works in namespace ns only:
// for namespaced kinds it fills the namespace of objects, keys, lists,
// DeleteAllOf and apply configurations that name none, and refuses those
// that name another (ErrNamespaceMismatch). Cluster-scoped kinds pass
// through untouched. Status() and SubResource() are scoped the same way.
// (controller-runtime's List silently replaces another namespace; this one
// refuses it.)
func NewNamespacedClient(c Client, ns string) *NamespacedClient {
	return &NamespacedClient{Client: c, namespace: ns}
}

// NamespacedClient is the client NewNamespacedClient returns.
type NamespacedClient struct {
	Client
	namespace string
}

var _ Client = (*NamespacedClient)(nil)

// Namespace returns the client's namespace.
func (n *NamespacedClient) Namespace() string { return n.namespace }

// scope returns the namespace a request about obj's kind uses: the
// client's for a namespaced kind (given must be empty or equal), given
// unchanged for a cluster-scoped one. It reports whether the kind is
// namespaced.
func (n *NamespacedClient) scope(verb string, obj runtime.Object, given string) (string, bool, error) {
	if isNil(obj) {
		return given, false, nil // the wrapped client reports it
	}
	gvk, err := n.GroupVersionKindFor(obj)
	if err != nil {
		return given, false, fmt.Errorf("%s %T: %w", verb, obj, err)
	}
	if _, isList := obj.(ObjectList); isList {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	namespaced, err := apiutil.IsGVKNamespaced(gvk, n.RESTMapper())
	if err != nil {
		return given, false, fmt.Errorf("%s %T: %w", verb, obj, err)
	}
	if !namespaced {
		return given, false, nil
	}
	if given != "" && given != n.namespace {
		return given, true, fmt.Errorf("%s %T in %q: %w %q", verb, obj, given, ErrNamespaceMismatch, n.namespace)
	}
	return n.namespace, true, nil
}

// scopeObject sets obj's namespace to the client's for namespaced kinds.
func (n *NamespacedClient) scopeObject(verb string, obj Object) error {
	if isNil(obj) {
		return nil
	}
	ns, namespaced, err := n.scope(verb, obj, obj.GetNamespace())
	if err == nil && namespaced {
		obj.SetNamespace(ns)
	}
	return err
}

// Get reads the object named key, in the client's namespace for a
// namespaced kind.
func (n *NamespacedClient) Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error {
	ns, _, err := n.scope("get", obj, key.Namespace)
	if err != nil {
		return err
	}
	key.Namespace = ns
	return n.Client.Get(ctx, key, obj, opts...)
}

// List lists in the client's namespace for a namespaced kind.
func (n *NamespacedClient) List(ctx context.Context, list ObjectList, opts ...ListOption) error {
	given := (&ListOptions{}).ApplyOptions(opts).Namespace
	ns, namespaced, err := n.scope("list", list, given)
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
	if err := n.scopeObject("create", obj); err != nil {
		return err
	}
	return n.Client.Create(ctx, obj, opts...)
}

// Update updates obj in the client's namespace for a namespaced kind.
func (n *NamespacedClient) Update(ctx context.Context, obj Object, opts ...UpdateOption) error {
	if err := n.scopeObject("update", obj); err != nil {
		return err
	}
	return n.Client.Update(ctx, obj, opts...)
}

// Patch patches obj in the client's namespace for a namespaced kind.
func (n *NamespacedClient) Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error {
	if err := n.scopeObject("patch", obj); err != nil {
		return err
	}
	return n.Client.Patch(ctx, obj, patch, opts...)
}

// Delete deletes obj in the client's namespace for a namespaced kind.
func (n *NamespacedClient) Delete(ctx context.Context, obj Object, opts ...DeleteOption) error {
	if err := n.scopeObject("delete", obj); err != nil {
		return err
	}
	return n.Client.Delete(ctx, obj, opts...)
}

// DeleteAllOf deletes in the client's namespace for a namespaced kind.
func (n *NamespacedClient) DeleteAllOf(ctx context.Context, obj Object, opts ...DeleteAllOfOption) error {
	given := (&DeleteAllOfOptions{}).ApplyOptions(opts).Namespace
	ns, namespaced, err := n.scope("delete all of", obj, given)
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
	if err := n.scopeApply("apply", obj); err != nil {
		return err
	}
	return n.Client.Apply(ctx, obj, opts...)
}

// scopeApply sets the namespace of an apply configuration of a namespaced
// kind: through ApplyConfigurationFromUnstructured's object, or the
// WithNamespace method every generated configuration has.
func (n *NamespacedClient) scopeApply(verb string, obj runtime.ApplyConfiguration) error {
	at, err := ApplyTargetOf(obj)
	if err != nil {
		return nil // the wrapped client reports it
	}
	namespaced, err := apiutil.IsGVKNamespaced(at.GVK, n.RESTMapper())
	if err != nil {
		return fmt.Errorf("%s %s: %w", verb, KindString(at.GVK), err)
	}
	if !namespaced {
		return nil
	}
	switch {
	case at.Namespace == n.namespace:
		return nil
	case at.Namespace != "":
		return fmt.Errorf("%s %s %s/%s: %w %q", verb, KindString(at.GVK), at.Namespace, at.Name, ErrNamespaceMismatch, n.namespace)
	}
	if u, ok := obj.(*unstructuredApplyConfiguration); ok {
		u.SetNamespace(n.namespace)
		return nil
	}
	m := reflect.ValueOf(obj).MethodByName("WithNamespace")
	if !m.IsValid() || m.Type().NumIn() != 1 || m.Type().In(0).Kind() != reflect.String {
		return fmt.Errorf("%s %T: cannot set the namespace (no WithNamespace(string) method): %w", verb, obj, ErrNamespaceRequired)
	}
	m.Call([]reflect.Value{reflect.ValueOf(n.namespace)})
	return nil
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
	if err := s.n.scopeObject("get subresource of", obj); err != nil {
		return err
	}
	return s.inner.Get(ctx, obj, sub, opts...)
}

func (s *namespacedSubResource) Create(ctx context.Context, obj, sub Object, opts ...SubResourceCreateOption) error {
	if err := s.n.scopeObject("create subresource of", obj); err != nil {
		return err
	}
	return s.inner.Create(ctx, obj, sub, opts...)
}

func (s *namespacedSubResource) Update(ctx context.Context, obj Object, opts ...SubResourceUpdateOption) error {
	if err := s.n.scopeObject("update subresource of", obj); err != nil {
		return err
	}
	return s.inner.Update(ctx, obj, opts...)
}

func (s *namespacedSubResource) Patch(ctx context.Context, obj Object, patch Patch, opts ...SubResourcePatchOption) error {
	if err := s.n.scopeObject("patch subresource of", obj); err != nil {
		return err
	}
	return s.inner.Patch(ctx, obj, patch, opts...)
}

func (s *namespacedSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...SubResourceApplyOption) error {
	if err := s.n.scopeApply("apply subresource of", obj); err != nil {
		return err
	}
	return s.inner.Apply(ctx, obj, opts...)
}
