package clusterapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestProvisioned(t *testing.T) {
	cond := func(typ, status string) map[string]any {
		return map[string]any{"conditions": []any{map[string]any{"type": typ, "status": status}}}
	}
	tests := []struct {
		name   string
		status map[string]any
		want   bool
	}{
		{name: "no status"},
		{name: "provisioning", status: map[string]any{"phase": "Provisioning"}},
		{name: "provisioned", status: map[string]any{"phase": "Provisioned"}, want: true},
		{name: "v1beta1 controlPlaneReady", status: map[string]any{"controlPlaneReady": true}, want: true},
		{name: "v1beta1 controlPlaneReady false", status: map[string]any{"controlPlaneReady": false}},
		{name: "v1beta2 initialization", status: map[string]any{"initialization": map[string]any{"controlPlaneInitialized": true}}, want: true},
		{name: "v1beta2 infrastructure only", status: map[string]any{"initialization": map[string]any{"infrastructureProvisioned": true}}},
		{name: "ControlPlaneAvailable", status: cond("ControlPlaneAvailable", "True"), want: true},
		{name: "ControlPlaneInitialized", status: cond("ControlPlaneInitialized", "True"), want: true},
		{name: "ControlPlaneReady unknown", status: cond("ControlPlaneReady", "Unknown")},
		{name: "other condition", status: cond("InfrastructureReady", "True")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{}}
			if tt.status != nil {
				u.Object["status"] = tt.status
			}
			assert.Equal(t, tt.want, provisioned(u))
		})
	}
}

func TestKeepKubeconfigOnly(t *testing.T) {
	kc := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eu-1-kubeconfig"},
		Data: map[string][]byte{"value": []byte("kc"), "other": []byte("x")}}
	ca := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eu-1-ca"},
		Data: map[string][]byte{"tls.key": []byte("private"), "value": []byte("v")}}
	_, _ = keepKubeconfigOnly(kc)
	_, _ = keepKubeconfigOnly(ca)
	assert.Equal(t, map[string][]byte{"value": []byte("kc")}, kc.Data)
	assert.Nil(t, ca.Data, "no other Secret's data stays in the cache")
}
