package admission_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/webhook/admission"
)

// A defaulter for ConfigMaps; the webhook answers with a JSON patch of what
// it changed.
func ExampleWithDefaulter() {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	wh := admission.WithDefaulter[*corev1.ConfigMap](scheme, admission.DefaulterFunc[*corev1.ConfigMap](
		func(_ context.Context, cm *corev1.ConfigMap) error {
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			if _, ok := cm.Data["mode"]; !ok {
				cm.Data["mode"] = "safe"
			}
			return nil
		}))
	var req admission.Request
	req.Operation = admissionv1.Create
	req.Kind = metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	req.Object.Raw = []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"size":"3"}}`)
	resp := wh.Handler.Handle(context.Background(), req)
	patch, _ := json.Marshal(resp.Patches)
	fmt.Println(resp.Allowed, string(patch))
	// Output:
	// true [{"op":"add","path":"/data/mode","value":"safe"}]
}

// The difference between two JSON documents as an RFC 6902 patch.
func ExampleCreatePatch() {
	ops, _ := admission.CreatePatch(
		[]byte(`{"metadata":{"name":"a"},"spec":{"replicas":1,"paused":true}}`),
		[]byte(`{"metadata":{"name":"a","labels":{"tier":"web"}},"spec":{"replicas":3}}`))
	out, _ := json.Marshal(ops)
	fmt.Println(string(out))
	// Output:
	// [{"op":"add","path":"/metadata/labels","value":{"tier":"web"}},{"op":"remove","path":"/spec/paused"},{"op":"replace","path":"/spec/replicas","value":3}]
}

// A raw handler sees the whole request.
func ExampleHandlerFunc() {
	h := admission.HandlerFunc(func(_ context.Context, req admission.Request) admission.Response {
		if req.Namespace == "kube-system" {
			return admission.Denied("kube-system is off limits")
		}
		return admission.Allowed("")
	})
	var req admission.Request
	req.Namespace = "kube-system"
	resp := h.Handle(context.Background(), req)
	fmt.Println(resp.Allowed, resp.Result.Message)
	// Output:
	// false kube-system is off limits
}

// A raw handler written as for controller-runtime: it decodes the object
// with a Decoder and finds the request in its context.
func ExampleNewDecoder() {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	decoder := admission.NewDecoder(scheme)
	wh := &admission.Webhook{Handler: admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		cm := &corev1.ConfigMap{}
		if err := decoder.Decode(req, cm); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		r, _ := admission.RequestFromContext(ctx)
		return admission.Allowed(fmt.Sprintf("%s of %s with %d keys", r.Operation, cm.Name, len(cm.Data)))
	})}
	var req admission.Request
	req.UID, req.Operation = "1", admissionv1.Create
	req.Object.Raw = []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"a":"1","b":"2"}}`)
	resp := wh.Handle(context.Background(), req)
	fmt.Println(resp.Allowed, resp.Result.Message, resp.UID)
	// Output:
	// true CREATE of settings with 2 keys 1
}
