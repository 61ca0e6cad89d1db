package objmap_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client/fake/internal/objmap"
)

// A ConfigMap goes into the stored form, takes a merge patch there and
// comes back out as a typed object.
func Example() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}
	m, _ := objmap.ToMap(cm, cmGVK)
	m, _ = objmap.Patch(m, types.MergePatchType, []byte(`{"data":{"k":"patched"}}`), nil)
	var out corev1.ConfigMap
	_ = objmap.Into(m, &out, cmGVK)
	fmt.Println(out.Name, out.Data["k"])
	// Output: a patched
}
