package cache

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
)

// Interning bounds: strings longer than maxInternLen are rarely shared
// (hashes, JSON blobs), and the table stops growing at maxInterned entries
// so that high-cardinality labels cannot grow it without bound.
const (
	maxInternLen = 128
	maxInterned  = 1 << 16
)

// interner shares one copy of the strings many cached objects repeat:
// namespaces, label keys and values, annotation keys, owner kinds. It lives
// as long as the cache.
type interner struct {
	mu sync.RWMutex
	m  map[string]string
}

func newInterner() *interner { return &interner{m: make(map[string]string, 256)} }

func (in *interner) get(s string) string {
	if s == "" || len(s) > maxInternLen {
		return s
	}
	in.mu.RLock()
	v, ok := in.m[s]
	in.mu.RUnlock()
	if ok {
		return v
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if v, ok := in.m[s]; ok {
		return v
	}
	if len(in.m) >= maxInterned {
		return s
	}
	in.m[s] = s
	return s
}

func (in *interner) stringMap(m map[string]string, values bool) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if values {
			v = in.get(v)
		}
		out[in.get(k)] = v
	}
	return out
}

// objectMeta interns the shared strings of om in place.
func (in *interner) objectMeta(om *metav1.ObjectMeta) {
	om.Namespace = in.get(om.Namespace)
	om.GenerateName = in.get(om.GenerateName)
	om.Labels = in.stringMap(om.Labels, true)
	om.Annotations = in.stringMap(om.Annotations, false)
	for i := range om.OwnerReferences {
		r := &om.OwnerReferences[i]
		r.APIVersion = in.get(r.APIVersion)
		r.Kind = in.get(r.Kind)
	}
	for i, f := range om.Finalizers {
		om.Finalizers[i] = in.get(f)
	}
}

// unstructuredMeta interns namespace and labels of an unstructured object
// in place.
func (in *interner) unstructuredMeta(u *unstructured.Unstructured) {
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	if ns, ok := md["namespace"].(string); ok {
		md["namespace"] = in.get(ns)
	}
	if labels, ok := md["labels"].(map[string]any); ok {
		out := make(map[string]any, len(labels))
		for k, v := range labels {
			if s, ok := v.(string); ok {
				v = in.get(s)
			}
			out[in.get(k)] = v
		}
		md["labels"] = out
	}
}

// transformFor returns the transform of key's informers: set the kind
// (decoded typed objects have an empty TypeMeta), strip managedFields
// unless kept, intern shared strings, then the user's transform. It is
// idempotent, as client-go requires.
func (c *InformerCache) transformFor(key kindKey, kc kindConfig) toolscache.TransformFunc {
	apiVersion, kind := key.gvk.ToAPIVersionAndKind()
	in := c.intern
	user := kc.transform
	keep := kc.keepManagedFields
	return func(obj any) (any, error) {
		switch o := obj.(type) {
		case *unstructured.Unstructured:
			if !keep {
				if md, ok := o.Object["metadata"].(map[string]any); ok {
					delete(md, "managedFields")
				}
			}
			in.unstructuredMeta(o)
		case metav1.ObjectMetaAccessor:
			if om, ok := o.GetObjectMeta().(*metav1.ObjectMeta); ok {
				if !keep {
					om.ManagedFields = nil
				}
				in.objectMeta(om)
			}
			setTypeMeta(o, apiVersion, kind)
		}
		if user != nil {
			return user(obj)
		}
		return obj, nil
	}
}

// setTypeMeta sets apiVersion and kind on a typed or metadata object,
// sharing the strings.
func setTypeMeta(obj any, apiVersion, kind string) {
	if o, ok := obj.(runtime.Object); ok {
		if tm, ok := o.GetObjectKind().(*metav1.TypeMeta); ok {
			tm.APIVersion, tm.Kind = apiVersion, kind
		}
	}
}
