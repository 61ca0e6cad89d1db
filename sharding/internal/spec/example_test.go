package spec_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

func ExampleKey() {
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-config",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Controller: ptr.To(true)}}}}
	fmt.Println(spec.Key(schema.GroupKind{Kind: "ConfigMap"}, child))
	fmt.Println(spec.LeaseName("ops", "a"), spec.SharderLeaseName("ops"))
	// Output:
	// apps/Deployment/ns/web
	// ops-shard-a ops-sharder
}

func ExampleSpec_MoveWindow() {
	s := &spec.Spec{RenewDeadline: 10 * time.Second}
	fmt.Println(s.MoveWindow(), spec.EscapePointer(spec.ShardLabelPrefix+"ops"))
	// Output: 10s shard.sharding.kubeloop.dev~1ops
}
