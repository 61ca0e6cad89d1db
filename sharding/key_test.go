package sharding_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/sharding"
)

func TestKey(t *testing.T) {
	cm := schema.GroupKind{Kind: "ConfigMap"}
	tests := []struct {
		name string
		give metav1.ObjectMeta
		want string
	}{
		{"own key", metav1.ObjectMeta{Namespace: "ns", Name: "a"}, "/ConfigMap/ns/a"},
		{"controller owner", metav1.ObjectMeta{Namespace: "ns", Name: "a-child", OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "Secret", Name: "not-controller"},
			{APIVersion: "apps.example.com/v1", Kind: "App", Name: "web", Controller: ptr.To(true)},
		}}, "apps.example.com/App/ns/web"},
		{"owner without controller", metav1.ObjectMeta{Namespace: "ns", Name: "b", OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "Secret", Name: "s", Controller: ptr.To(false)},
		}}, "/ConfigMap/ns/b"},
		{"cluster-scoped", metav1.ObjectMeta{Name: "c"}, "/ConfigMap//c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, sharding.Key(cm, &corev1.ConfigMap{ObjectMeta: tt.give}))
		})
	}
}
