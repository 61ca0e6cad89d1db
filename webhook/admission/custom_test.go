package admission_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/webhook/admission"
)

// cmCustomDefaulter is a defaulter in controller-runtime's older untyped
// form: it asserts the type itself.
type cmCustomDefaulter struct{ seen []string }

func (d *cmCustomDefaulter) Default(_ context.Context, obj runtime.Object) error {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return fmt.Errorf("expected a ConfigMap, got %T", obj)
	}
	d.seen = append(d.seen, fmt.Sprintf("%T", obj))
	cm.Labels = map[string]string{"defaulted": "true"}
	return nil
}

type cmCustomValidator struct{}

func (cmCustomValidator) ValidateCreate(ctx context.Context, obj runtime.Object) (admission.Warnings, error) {
	return cmValidator{}.ValidateCreate(ctx, obj.(*corev1.ConfigMap))
}

func (cmCustomValidator) ValidateUpdate(ctx context.Context, oldObj, newObj runtime.Object) (admission.Warnings, error) {
	return cmValidator{}.ValidateUpdate(ctx, oldObj.(*corev1.ConfigMap), newObj.(*corev1.ConfigMap))
}

func (cmCustomValidator) ValidateDelete(ctx context.Context, obj runtime.Object) (admission.Warnings, error) {
	return cmValidator{}.ValidateDelete(ctx, obj.(*corev1.ConfigMap))
}

var (
	_ admission.CustomDefaulter = &cmCustomDefaulter{}
	_ admission.CustomValidator = cmCustomValidator{}
)

func TestWithCustomDefaulter(t *testing.T) {
	d := &cmCustomDefaulter{}
	wh := admission.WithCustomDefaulter(coreScheme(t), &corev1.ConfigMap{}, d, admission.DefaulterRemoveUnknownOrOmitableFields)
	resp := post(t, wh, configMapRequest(t, admissionv1.Create, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"}}, nil))
	require.True(t, resp.Allowed, "%v", resp.Result)
	assert.JSONEq(t, `[{"op":"add","path":"/metadata/labels","value":{"defaulted":"true"}}]`, string(resp.Patch))
	assert.Equal(t, []string{"*v1.ConfigMap"}, d.seen, "Default gets a new value of the prototype's type")

	resp = post(t, wh, secretRequest(t))
	assert.False(t, resp.Allowed, "a request for another kind")
	assert.Contains(t, resp.Result.Message, "this webhook serves")
}

func TestWithCustomValidator(t *testing.T) {
	wh := admission.WithCustomValidator(coreScheme(t), &corev1.ConfigMap{}, cmCustomValidator{})
	resp := post(t, wh, configMapRequest(t, admissionv1.Create, &corev1.ConfigMap{Data: map[string]string{"forbidden": "x"}}, nil))
	assert.False(t, resp.Allowed)
	assert.Equal(t, `key "forbidden" is not allowed`, resp.Result.Message)
	assert.Equal(t, []string{"saw forbidden"}, resp.Warnings)

	resp = post(t, wh, configMapRequest(t, admissionv1.Delete, nil, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep"}}))
	assert.False(t, resp.Allowed)
	resp = post(t, wh, configMapRequest(t, admissionv1.Update, &corev1.ConfigMap{}, &corev1.ConfigMap{}))
	assert.True(t, resp.Allowed)
}

// A misconfigured custom webhook fails its requests with the reason; it
// never panics.
func TestCustomWebhookMisconfigured(t *testing.T) {
	for name, wh := range map[string]*admission.Webhook{
		"nil prototype":     admission.WithCustomDefaulter(coreScheme(t), nil, &cmCustomDefaulter{}),
		"nil defaulter":     admission.WithCustomDefaulter(coreScheme(t), &corev1.ConfigMap{}, nil),
		"nil validator":     admission.WithCustomValidator(coreScheme(t), &corev1.ConfigMap{}, nil),
		"not in the scheme": admission.WithCustomValidator(runtime.NewScheme(), &corev1.ConfigMap{}, cmCustomValidator{}),
	} {
		t.Run(name, func(t *testing.T) {
			resp := post(t, wh, configMapRequest(t, admissionv1.Create, &corev1.ConfigMap{}, nil))
			assert.False(t, resp.Allowed)
			assert.EqualValues(t, 500, resp.Result.Code, resp.Result.Message)
		})
	}
}

func secretRequest(t *testing.T) admissionv1.AdmissionRequest {
	t.Helper()
	req := configMapRequest(t, admissionv1.Create, &corev1.ConfigMap{}, nil)
	req.Kind = metav1.GroupVersionKind{Version: "v1", Kind: "Secret"}
	return req
}
