package fanout_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeloop/kubeloop/client/fake/internal/fanout"
)

// A watch of the ConfigMaps labelled app=web sees one move into its
// selection as ADDED and one out of it as DELETED.
func Example() {
	var h fanout.Hub
	w := h.Watch(context.Background(), cm, labelView{want: "web"}, nil)
	defer w.Stop()
	h.Publish(change(cm, "a", nil, obj("a", "db"), 1))
	h.Publish(change(cm, "a", obj("a", "db"), obj("a", "web"), 2))
	h.Publish(change(cm, "a", obj("a", "web"), obj("a", "db"), 3))
	for range 2 {
		ev := <-w.ResultChan()
		fmt.Println(ev.Type, ev.Object.(*unstructured.Unstructured).GetName())
	}
	// Output:
	// ADDED a
	// DELETED a
}
