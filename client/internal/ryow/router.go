package ryow

import (
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// Router says which reads of a cached client go to the cache, and under
// which Key a write is remembered. It is safe for concurrent use.
type Router struct {
	// GVKFor returns an object's kind (the live client's
	// GroupVersionKindFor).
	GVKFor func(runtime.Object) (schema.GroupVersionKind, error)
	// Mapper answers kinds' scopes.
	Mapper func() meta.RESTMapper
	// Scheme is set when GVKFor is the package's own client, whose kinds
	// of typed objects depend on their Go type alone; Route then
	// remembers, per type, what it answered. Nil means no memory.
	Scheme *runtime.Scheme
	// Disabled kinds are always read from the API server.
	Disabled map[schema.GroupKind]bool
	// Unstructured reads go to the cache too.
	Unstructured bool

	typedKinds sync.Map // reflect.Type -> typedKind
	kinds      sync.Map // reflect.Type -> runtime.Object: see KindOf
}

// Scope is what the router knows of a kind's scope.
type Scope uint8

// The scopes.
const (
	ScopeUnknown Scope = iota
	ScopeNamespaced
	ScopeCluster
)

// typedKind is what Route answered for a typed Go type.
type typedKind struct {
	useCache bool
	gvk      schema.GroupVersionKind
	scope    Scope
}

func (r *Router) scopeOf(gvk schema.GroupVersionKind) Scope {
	namespaced, err := apiutil.IsGVKNamespaced(gvk, r.Mapper())
	switch {
	case err != nil:
		return ScopeUnknown
	case namespaced:
		return ScopeNamespaced
	}
	return ScopeCluster
}

// WriteKey returns the key under which a write of the object ns/name of
// kind gvk is remembered: without the namespace for a cluster-scoped kind,
// whose namespace the API server ignores (a Delete or an Apply leaves the
// caller's namespace in place; other writes answer without it).
func (r *Router) WriteKey(gvk schema.GroupVersionKind, ns, name string) Key {
	if ns != "" && r.scopeOf(gvk) == ScopeCluster {
		ns = ""
	}
	return Key{GK: gvk.GroupKind(), Namespace: ns, Name: name}
}

// ReadKey returns the key under which t remembers a write of the object a
// Get of key reads, and whether it does. A namespace in the key of a
// cluster-scoped kind is ignored; when the scope is unknown both keys are
// tried (a namespaced kind's writes are never remembered without a
// namespace).
func (r *Router) ReadKey(t *Tracker, gvk schema.GroupVersionKind, sc Scope, key types.NamespacedName) (Key, bool) {
	k := Key{GK: gvk.GroupKind(), Namespace: key.Namespace, Name: key.Name}
	switch {
	case key.Namespace == "" || sc == ScopeNamespaced:
	case sc == ScopeCluster:
		k.Namespace = ""
	default:
		if t.Tracked(k) {
			return k, true
		}
		k.Namespace = ""
	}
	return k, t.Tracked(k)
}

// Route reports whether reads of obj go to the cache, obj's kind (a
// list's item kind) and what is known of its scope. For a typed object
// whose Go type the scheme maps to one kind, the answer is remembered for
// the type: a Get then makes one lookup instead of the scheme's
// (reflection, two map lookups), the disabled kinds' (hashing the group
// and kind) and the mapper's.
func (r *Router) Route(obj runtime.Object) (bool, schema.GroupVersionKind, Scope) {
	if r.Scheme == nil {
		useCache, gvk := r.resolve(obj)
		return useCache, gvk, ScopeUnknown
	}
	t := reflect.TypeOf(obj)
	if k, ok := r.typedKinds.Load(t); ok {
		k := k.(typedKind)
		return k.useCache, k.gvk, k.scope
	}
	useCache, gvk := r.resolve(obj)
	sc := ScopeUnknown
	if gvk.Kind != "" && !apiutil.IsUnstructured(obj) && !apiutil.IsPartialMetadata(obj) {
		if kinds, _, err := r.Scheme.ObjectKinds(obj); err == nil && len(kinds) == 1 {
			sc = r.scopeOf(gvk)
			r.typedKinds.Store(t, typedKind{useCache: useCache, gvk: gvk, scope: sc})
		}
	}
	return useCache, gvk, sc
}

// resolve is Route without memory.
func (r *Router) resolve(obj runtime.Object) (bool, schema.GroupVersionKind) {
	gvk, err := r.GVKFor(obj)
	if err != nil {
		return false, gvk // the live client reports the error
	}
	if _, isList := obj.(metav1.ListInterface); isList {
		gvk.Kind = kinds.TrimList(gvk.Kind)
	}
	if apiutil.IsUnstructured(obj) && !r.Unstructured {
		return false, gvk
	}
	return !r.Disabled[gvk.GroupKind()], gvk
}

// KindOf returns obj, or for a typed nil pointer an empty object of its
// type that stands for the kind: made once per type, never modified.
func (r *Router) KindOf(obj runtime.Object) runtime.Object {
	if !kinds.IsNil(obj) {
		return obj
	}
	t := reflect.TypeOf(obj)
	if p, ok := r.kinds.Load(t); ok {
		return p.(runtime.Object)
	}
	p, _ := r.kinds.LoadOrStore(t, NewObjectLike(obj))
	return p.(runtime.Object)
}

// NewObjectLike returns a new, empty object of obj's Go type, with obj's
// apiVersion and kind when obj is unstructured or metadata-only.
func NewObjectLike(obj runtime.Object) runtime.Object {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		u := &unstructured.Unstructured{}
		if o != nil {
			u.SetGroupVersionKind(o.GroupVersionKind())
		}
		return u
	case *metav1.PartialObjectMetadata:
		m := &metav1.PartialObjectMetadata{}
		if o != nil {
			m.TypeMeta = o.TypeMeta
		}
		return m
	}
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
}

// RemovedByWrite reports whether the server deleted obj as it wrote it:
// the write removed the last finalizer of an object being deleted (a pod
// in its grace period, which also has no finalizers, stays).
func RemovedByWrite(obj metav1.Object) bool {
	if obj.GetDeletionTimestamp() == nil || len(obj.GetFinalizers()) > 0 {
		return false
	}
	grace := obj.GetDeletionGracePeriodSeconds()
	return grace == nil || *grace == 0
}
