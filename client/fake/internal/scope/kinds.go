package scope

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kinds holds what the fake knows of the kinds of one scheme.
type Kinds struct {
	scheme       *runtime.Scheme
	mapper       First // what RESTMapper returns
	scopes       First // the kinds whose scope is known
	status       map[schema.GroupKind]bool
	noGeneration map[schema.GroupKind]bool
}

// New returns the kinds of s. user (the test's mapper) and crds (the
// kinds of the seeded CustomResourceDefinitions) may be nil. The built-in
// kinds with a status field have a status subresource; AddStatus adds
// more.
func New(s *runtime.Scheme, user, crds meta.RESTMapper) *Kinds {
	builtIn, others := schemeMappers(s)
	var scopes First
	for _, m := range []meta.RESTMapper{user, crds} {
		if m != nil {
			scopes = append(scopes, m)
		}
	}
	scopes = append(scopes, builtIn)
	mapper := append(append(First{}, scopes...), others)
	k := &Kinds{scheme: s, mapper: mapper, scopes: scopes,
		status: map[schema.GroupKind]bool{}, noGeneration: map[schema.GroupKind]bool{}}
	for gvk, t := range s.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || t.Kind() != reflect.Struct || !isBuiltInPkg(t.PkgPath()) {
			continue
		}
		// The API server serves the status of built-in kinds with a Status
		// field as a subresource, and sets no generation on those without
		// a Spec (ConfigMap, Secret, ...).
		if _, ok := t.FieldByName("Status"); ok {
			k.status[gvk.GroupKind()] = true
		}
		if _, ok := t.FieldByName("Spec"); !ok {
			k.noGeneration[gvk.GroupKind()] = true
		}
	}
	return k
}

// AddStatus gives gk a status subresource. Call it before the first use.
func (k *Kinds) AddStatus(gk schema.GroupKind) { k.status[gk] = true }

// HasStatus reports whether gk has a status subresource.
func (k *Kinds) HasStatus(gk schema.GroupKind) bool { return k.status[gk] }

// Generation reports whether the API server keeps metadata.generation on
// objects of gk: every kind but the built-in ones without a spec.
func (k *Kinds) Generation(gk schema.GroupKind) bool { return !k.noGeneration[gk] }

// RESTMapper returns the mapper of sources 1 to 3 (see the package doc),
// then of the scheme's other kinds as namespaced.
func (k *Kinds) RESTMapper() meta.RESTMapper { return k.mapper }

// Known reports whether gvk is namespaced, and known false when no source
// of scope (1 to 3 in the package doc) knows the kind.
func (k *Kinds) Known(gvk schema.GroupVersionKind) (namespaced, known bool) {
	if m, err := k.scopes.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		return m.Scope.Name() == meta.RESTScopeNameNamespace, true
	}
	if clusterScoped(gvk.GroupKind()) {
		return false, true
	}
	return false, false
}

// Namespaced reports the scope of gvk; for a kind of unknown scope it
// takes the namespace given (ns) as the answer, as controller-runtime's
// fake stores objects under whatever namespace they name.
func (k *Kinds) Namespaced(gvk schema.GroupVersionKind, ns string) bool {
	if namespaced, known := k.Known(gvk); known {
		return namespaced
	}
	return ns != ""
}

// GroupResource returns gvk's resource: the mapper's, else a guess from
// the kind's name.
func (k *Kinds) GroupResource(gvk schema.GroupVersionKind) schema.GroupResource {
	if m, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		return m.Resource.GroupResource()
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.GroupResource()
}

// BuiltIn returns a new value of gvk's Go type when it is a built-in
// Kubernetes type (the only kinds that accept strategic merge patches, and
// that allow updates without a resourceVersion), else nil.
func (k *Kinds) BuiltIn(gvk schema.GroupVersionKind) runtime.Object {
	obj, err := k.scheme.New(gvk)
	if err != nil || !isBuiltInPkg(reflect.TypeOf(obj).Elem().PkgPath()) {
		return nil
	}
	return obj
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
		case clusterScoped(gvk.GroupKind()):
			builtIn.Add(gvk, meta.RESTScopeRoot)
		case isBuiltInPkg(t.PkgPath()):
			builtIn.Add(gvk, meta.RESTScopeNamespace)
		default:
			others.Add(gvk, meta.RESTScopeNamespace)
		}
	}
	return builtIn, others
}

// clusterScoped reports whether gk is a built-in kind that is not
// namespaced.
func clusterScoped(gk schema.GroupKind) bool {
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

func isBuiltInPkg(path string) bool { return strings.HasPrefix(path, "k8s.io/api/") }
