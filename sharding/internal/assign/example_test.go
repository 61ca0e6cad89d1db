package assign

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/sharding/internal/membership"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
	"github.com/kubeloop/kubeloop/webhook/admission"
)

// The webhook labels an unassigned object with its shard on the view of
// the ring, and leaves an assigned one alone.
func Example() {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ops-shard-a",
			Labels: map[string]string{spec.RingLabel: "ops", spec.ShardNameLabel: "a"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a_1"), LeaseDurationSeconds: ptr.To(int32(15))},
	}).Build()
	m, _ := spec.NewMetrics(nil, "ops")
	s := &spec.Spec{Ring: "ops", Shard: "a", Namespace: "default", ShardKey: spec.ShardLabelPrefix + "ops",
		DrainKey: spec.DrainLabelPrefix + "ops", RetryPeriod: time.Second, C: c, Log: logr.Discard(), Metrics: m,
		Kinds: []spec.Kind{{GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}}}}
	v, err := membership.ReadView(ctx, s, membership.NewObservers())
	if err != nil {
		fmt.Println(err)
		return
	}
	h := &Handler{spec: s, view: func() *membership.View { return v }}
	review := func(labels map[string]string) admission.Response {
		raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": "x", "namespace": "default", "labels": labels}})
		req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create,
			Kind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}}}
		req.Object.Raw = raw
		return h.admit(ctx, req)
	}
	fmt.Println(review(nil).Patches)
	fmt.Println(review(map[string]string{s.ShardKey: "b"}).Patches)
	// Output:
	// [{add /metadata/labels map[shard.sharding.kubeloop.dev/ops:a]}]
	// []
}
