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

// TestSeededObjectsAsControllerRuntime: an object given to WithObjects
// without a resourceVersion gets "999", written back to it as
// controller-runtime's fake does, and no uid or creationTimestamp, so a
// seeded object compares equal to what the client returns.
func TestSeededObjectsAsControllerRuntime(t *testing.T) {
	seeded := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "leader"}}
	versioned := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "given", ResourceVersion: "42"}}
	c, err := fake.NewClientBuilder().WithObjects(seeded, versioned).BuildClient()
	require.NoError(t, err)
	assert.Equal(t, "999", seeded.ResourceVersion, "written back to the seeded object")

	var got corev1.Pod
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(seeded), &got))
	assert.Equal(t, seeded, &got, "the seeded object is what Get returns")
	assert.Empty(t, got.UID)
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(versioned), &got))
	assert.Equal(t, "42", got.ResourceVersion, "a given version is kept")

	created := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "new"}}
	require.NoError(t, c.Create(t.Context(), created))
	assert.Equal(t, "1000", created.ResourceVersion, "writes continue after the seeded version")
	assert.NotEmpty(t, created.UID, "Create assigns a uid, as the API server does")
}
