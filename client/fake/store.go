package fake

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
)

// The store keeps every object as its JSON-like map (what
// runtime.DefaultUnstructuredConverter produces), by group and kind, then
// by namespace and name. Reads convert a deep copy into the caller's type,
// so no caller ever shares memory with the store.

// clusterScopedKind reports whether gk is a built-in kind that is not
// namespaced.
func clusterScopedKind(gk schema.GroupKind) bool {
	switch gk.Group {
	case "":
		return gk.Kind == "Namespace" || gk.Kind == "Node" || gk.Kind == "PersistentVolume" || gk.Kind == "ComponentStatus"
	case "rbac.authorization.k8s.io":
		return gk.Kind == "ClusterRole" || gk.Kind == "ClusterRoleBinding"
	case "storage.k8s.io":
		return gk.Kind != "CSIStorageCapacity"
	case "scheduling.k8s.io", "node.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io",
		"admissionregistration.k8s.io", "certificates.k8s.io", "flowcontrol.apiserver.k8s.io",
		"authentication.k8s.io", "storagemigration.k8s.io", "internal.apiserver.k8s.io":
		return true
	case "authorization.k8s.io":
		return gk.Kind != "LocalSubjectAccessReview"
	case "networking.k8s.io":
		return gk.Kind == "IngressClass" || gk.Kind == "IPAddress" || gk.Kind == "ServiceCIDR"
	case "resource.k8s.io":
		return gk.Kind == "DeviceClass" || gk.Kind == "ResourceSlice" || gk.Kind == "DeviceTaintRule"
	}
	return false
}

// schemeMappers maps the object kinds of s: builtIn those whose scope is
// known (the kinds of k8s.io/api packages, and the API server's own
// cluster-scoped kinds), others the rest of the scheme's kinds, which it
// calls namespaced without knowing.
func schemeMappers(s *runtime.Scheme) (builtIn, others *meta.DefaultRESTMapper) {
	builtIn, others = meta.NewDefaultRESTMapper(nil), meta.NewDefaultRESTMapper(nil)
	for gvk, t := range s.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		if _, ok := reflect.New(t).Interface().(metav1.Object); !ok {
			continue
		}
		if _, isList := reflect.New(t).Interface().(metav1.ListInterface); isList {
			continue
		}
		switch {
		case clusterScopedKind(gvk.GroupKind()):
			builtIn.Add(gvk, meta.RESTScopeRoot)
		case isBuiltInPkg(t.PkgPath()):
			builtIn.Add(gvk, meta.RESTScopeNamespace)
		default:
			others.Add(gvk, meta.RESTScopeNamespace)
		}
	}
	return builtIn, others
}

func (c *Client) gvkOf(obj runtime.Object) (schema.GroupVersionKind, error) {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return gvk, err
	}
	if _, isList := obj.(client.ObjectList); isList && len(gvk.Kind) > 4 && gvk.Kind[len(gvk.Kind)-4:] == "List" {
		gvk.Kind = gvk.Kind[:len(gvk.Kind)-4]
	}
	return gvk, nil
}

func (c *Client) groupResource(gvk schema.GroupVersionKind) schema.GroupResource {
	if m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		return m.Resource.GroupResource()
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.GroupResource()
}

// hasStatus reports whether gk has a status subresource.
func (c *Client) hasStatus(gk schema.GroupKind) bool { return c.status[gk] }

// defaultStatusKinds returns the built-in kinds of s that have a Status
// field: the kinds whose status the API server serves as a subresource.
func defaultStatusKinds(s *runtime.Scheme) map[schema.GroupKind]bool {
	out := map[schema.GroupKind]bool{}
	for gvk, t := range s.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || t.Kind() != reflect.Struct || !isBuiltInPkg(t.PkgPath()) {
			continue
		}
		if _, ok := t.FieldByName("Status"); ok {
			out[gvk.GroupKind()] = true
		}
	}
	return out
}

// untrackedGenerationKinds returns the built-in kinds of s without a Spec
// field (ConfigMap, Secret, ...): the API server sets no generation on them.
func untrackedGenerationKinds(s *runtime.Scheme) map[schema.GroupKind]bool {
	out := map[schema.GroupKind]bool{}
	for gvk, t := range s.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || t.Kind() != reflect.Struct || !isBuiltInPkg(t.PkgPath()) {
			continue
		}
		if _, ok := t.FieldByName("Spec"); !ok {
			out[gvk.GroupKind()] = true
		}
	}
	return out
}

func isBuiltInPkg(path string) bool {
	return len(path) > len("k8s.io/api/") && path[:len("k8s.io/api/")] == "k8s.io/api/"
}

// toMap converts obj to its stored form with apiVersion and kind set.
func (c *Client) toMap(obj client.Object, gvk schema.GroupVersionKind) (map[string]any, error) {
	var m map[string]any
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		m = runtime.DeepCopyJSON(o.Object)
	case *metav1.PartialObjectMetadata:
		md, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&o.ObjectMeta)
		if err != nil {
			return nil, err
		}
		m = map[string]any{"metadata": md}
	default:
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, err
		}
	}
	if m == nil {
		m = map[string]any{}
	}
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return m, nil
}

// fromMap fills obj with a deep copy of m. Typed objects come back without
// apiVersion and kind, as from the API server.
func (c *Client) fromMap(m map[string]any, obj client.Object, gvk schema.GroupVersionKind) error {
	cp := runtime.DeepCopyJSON(m)
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		cp["apiVersion"] = gvk.GroupVersion().String()
		o.Object = cp
		return nil
	case *metav1.PartialObjectMetadata:
		*o = metav1.PartialObjectMetadata{}
		md, _ := cp["metadata"].(map[string]any)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(md, &o.ObjectMeta); err != nil {
			return err
		}
		o.SetGroupVersionKind(gvk)
		return nil
	}
	v := reflect.ValueOf(obj).Elem()
	v.Set(reflect.Zero(v.Type()))
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(cp, obj); err != nil {
		return fmt.Errorf("decode into %T: %w", obj, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return nil
}

// metaOf gives typed access to a stored map's metadata.
func metaOf(m map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}

func (c *Client) nextRV() string {
	c.rv++
	return strconv.FormatUint(c.rv, 10)
}

const nameChars = "bcdfghjklmnpqrstvwxz2456789"

func generateName(base string) string {
	b := make([]byte, 5)
	for i := range b {
		b[i] = nameChars[rand.IntN(len(nameChars))]
	}
	return base + string(b)
}

func notFound(gr schema.GroupResource, name string) error { return apierrors.NewNotFound(gr, name) }
