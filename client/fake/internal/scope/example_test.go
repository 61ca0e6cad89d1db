package scope_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeloop/kubeloop/client/fake/internal/scope"
)

// metaObject is a stand-in Go type for a custom kind.
type metaObject struct {
	metav1.TypeMeta
	metav1.ObjectMeta
}

func (o *metaObject) DeepCopyObject() runtime.Object { c := *o; return &c }

// A seeded CustomResourceDefinition tells the scope of its kind.
func Example() {
	crds := meta.NewDefaultRESTMapper(nil)
	_ = scope.AddCRD(crds, crd("Widget", "widgets", "Cluster"))
	k := scope.New(clientgoscheme.Scheme, nil, crds)
	fmt.Println(k.Namespaced(widget, "ns"), k.GroupResource(widget))
	fmt.Println(k.Namespaced(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, ""))
	// Output:
	// false widgets.example.dev
	// true
}
