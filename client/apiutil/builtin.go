package apiutil

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// IsBuiltIn reports whether gvk's group and version are served by every
// kube-apiserver with Go types in k8s.io/api (and so speak protobuf).
// Custom resources are never built in, whichever scheme their Go types are
// registered in: the answer comes from a private scheme holding only
// k8s.io/api's types, not from client-go's global scheme.Scheme, to which
// the kubebuilder scaffold adds its own API types.
func IsBuiltIn(gvk schema.GroupVersionKind) bool {
	return builtInScheme().IsVersionRegistered(gvk.GroupVersion())
}

// builtInScheme holds k8s.io/api's types only; it is built once and never
// changed.
var builtInScheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic("apiutil: build the scheme of built-in kinds: " + err.Error()) // static input; cannot fail
	}
	return s
})
