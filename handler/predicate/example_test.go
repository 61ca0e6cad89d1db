package predicate_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
)

// React to spec changes and to label changes, but not to status updates.
func ExampleOr() {
	p := predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{})

	old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 1, ResourceVersion: "10"}}
	statusOnly := old.DeepCopy()
	statusOnly.ResourceVersion = "11"
	relabelled := statusOnly.DeepCopy()
	relabelled.Labels = map[string]string{"tier": "frontend"}

	fmt.Println(p.Update(handler.UpdateEvent{ObjectOld: old, ObjectNew: statusOnly}))
	fmt.Println(p.Update(handler.UpdateEvent{ObjectOld: statusOnly, ObjectNew: relabelled}))
	// Output:
	// false
	// true
}
