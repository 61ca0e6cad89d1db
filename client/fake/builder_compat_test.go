package fake_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
)

func managed(manager string) []metav1.ManagedFieldsEntry {
	return []metav1.ManagedFieldsEntry{{
		Manager:    manager,
		Operation:  metav1.ManagedFieldsOperationApply,
		APIVersion: "v1",
		FieldsType: "FieldsV1",
		FieldsV1:   &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:ca.crt":{}}}`)},
	}}
}

func TestWithReturnManagedFields(t *testing.T) {
	tests := []struct {
		name        string
		keep        bool
		wantCreated int // managedFields entries of the created object
	}{
		{name: "default drops them on create", keep: false, wantCreated: 0},
		{name: "WithReturnManagedFields keeps them", keep: true, wantCreated: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seeded := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "seeded", ManagedFields: managed("trust-manager")}}
			b := fake.NewClientBuilder().WithObjects(seeded)
			if tt.keep {
				b = b.WithReturnManagedFields()
			}
			c, err := b.BuildClient()
			require.NoError(t, err)

			var got corev1.ConfigMap
			require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: "a", Name: "seeded"}, &got))
			require.Len(t, got.ManagedFields, 1, "a seeded object keeps its managedFields")
			assert.Equal(t, "trust-manager", got.ManagedFields[0].Manager)

			created := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "created", ManagedFields: managed("me")}}
			require.NoError(t, c.Create(t.Context(), created))
			require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(created), &got))
			assert.Len(t, got.ManagedFields, tt.wantCreated)
		})
	}
}

func TestNewFakeClient(t *testing.T) {
	c := fake.NewFakeClient(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "x"}})
	var got corev1.ConfigMap
	require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: "a", Name: "x"}, &got))
	assert.Equal(t, "x", got.Name)
	require.NoError(t, c.Create(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p"}}))
}
