package predicate_test

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
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

// A typed predicate reads the fields of its kind directly; source.Kind
// takes it beside a typed handler of the same kind.
func ExampleTypedFuncs() {
	imageChanged := predicate.TypedFuncs[*appsv1.Deployment]{
		UpdateFunc: func(e handler.TypedUpdateEvent[*appsv1.Deployment]) bool {
			return e.ObjectOld.Spec.Template.Spec.Containers[0].Image != e.ObjectNew.Spec.Template.Spec.Containers[0].Image
		},
	}
	deploy := func(image string) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Image: image}}
		return d
	}
	fmt.Println(imageChanged.Update(handler.TypedUpdateEvent[*appsv1.Deployment]{ObjectOld: deploy("web:1"), ObjectNew: deploy("web:1")}))
	fmt.Println(imageChanged.Update(handler.TypedUpdateEvent[*appsv1.Deployment]{ObjectOld: deploy("web:1"), ObjectNew: deploy("web:2")}))
	fmt.Println(imageChanged.Create(handler.TypedCreateEvent[*appsv1.Deployment]{Object: deploy("web:1")}))
	// Output:
	// false
	// true
	// true
}
