package controllerutil_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/controller/controllerutil"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}) }

func newScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	return s
}

func deploy(ns, name, uid string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: k8stypes.UID(uid)}}
}

func TestSetControllerReference(t *testing.T) {
	s := newScheme(t)
	owner := deploy("ns", "web", "uid-1")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}
	require.NoError(t, controllerutil.SetControllerReference(owner, cm, s))
	require.NoError(t, controllerutil.SetControllerReference(owner, cm, s), "idempotent")
	require.Len(t, cm.OwnerReferences, 1)
	ref := cm.OwnerReferences[0]
	assert.Equal(t, "apps/v1", ref.APIVersion)
	assert.Equal(t, "Deployment", ref.Kind)
	assert.Equal(t, "web", ref.Name)
	assert.True(t, *ref.Controller)
	assert.True(t, *ref.BlockOwnerDeletion)
	assert.True(t, controllerutil.HasControllerReference(cm))

	err := controllerutil.SetControllerReference(deploy("ns", "other", "uid-2"), cm, s)
	var owned *controllerutil.AlreadyOwnedError
	require.True(t, errors.As(err, &owned), "got %v", err)
	assert.Equal(t, "web", owned.Owner.Name)
	assert.ErrorContains(t, err, "ns/cm is already owned by another Deployment controller web")

	assert.ErrorContains(t, controllerutil.RemoveControllerReference(deploy("ns", "other", "uid-2"), cm, s), "is not the controller")
	require.NoError(t, controllerutil.RemoveControllerReference(owner, cm, s))
	assert.False(t, controllerutil.HasControllerReference(cm))
	assert.Empty(t, cm.OwnerReferences)
}

func TestOwnerValidation(t *testing.T) {
	s := newScheme(t)
	tests := []struct {
		name    string
		owner   metav1.Object
		object  metav1.Object
		wantErr string
	}{
		{name: "cross namespace", owner: deploy("a", "o", "u"), object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "x"}}, wantErr: "cross-namespace"},
		{name: "namespaced owner of cluster-scoped", owner: deploy("a", "o", "u"), object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, wantErr: "must not have a namespace-scoped owner"},
		{name: "owner without UID, as controller-runtime allows", owner: deploy("a", "o", ""), object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "x"}}},
		{name: "cluster-scoped owner of namespaced", owner: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "u"}}, object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := controllerutil.SetOwnerReference(tt.owner, tt.object, s)
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.Len(t, tt.object.GetOwnerReferences(), 1)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestSetAndRemoveOwnerReference(t *testing.T) {
	s := newScheme(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}
	a, b := deploy("ns", "a", "ua"), deploy("ns", "b", "ub")
	require.NoError(t, controllerutil.SetOwnerReference(a, cm, s, controllerutil.WithBlockOwnerDeletion(true)))
	require.NoError(t, controllerutil.SetOwnerReference(b, cm, s))
	assert.Len(t, cm.OwnerReferences, 2)
	assert.False(t, controllerutil.HasControllerReference(cm))
	has, err := controllerutil.HasOwnerReference(cm.OwnerReferences, b, s)
	require.NoError(t, err)
	assert.True(t, has)

	require.NoError(t, controllerutil.RemoveOwnerReference(a, cm, s))
	require.Len(t, cm.OwnerReferences, 1)
	assert.Equal(t, "b", cm.OwnerReferences[0].Name)
	assert.ErrorContains(t, controllerutil.RemoveOwnerReference(a, cm, s), "is not an owner")
}

func TestCreateOrUpdate(t *testing.T) {
	ctx := t.Context()
	c := fake.NewClientBuilder().Build()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}
	want := "1"
	mutateFn := func() error {
		cm.Data = map[string]string{"v": want}
		return nil
	}
	steps := []struct {
		name string
		set  string
		want controllerutil.OperationResult
	}{
		{name: "missing: created", set: "1", want: controllerutil.OperationResultCreated},
		{name: "same: unchanged", set: "1", want: controllerutil.OperationResultNone},
		{name: "different: updated", set: "2", want: controllerutil.OperationResultUpdated},
	}
	for _, st := range steps {
		want = st.set
		got, err := controllerutil.CreateOrUpdate(ctx, c, cm, mutateFn)
		require.NoError(t, err, st.name)
		assert.Equal(t, st.want, got, st.name)
	}
	var stored corev1.ConfigMap
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), &stored))
	assert.Equal(t, "2", stored.Data["v"])

	_, err := controllerutil.CreateOrUpdate(ctx, c, cm, func() error { cm.Name = "renamed"; return nil })
	assert.ErrorContains(t, err, "changed the name or namespace")
}

func TestCreateOrPatch(t *testing.T) {
	ctx := t.Context()
	c := fake.NewClientBuilder().Build()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	steps := []struct {
		name     string
		replicas int32
		observed int64
		want     controllerutil.OperationResult
	}{
		{name: "missing: created", replicas: 1, want: controllerutil.OperationResultCreated},
		{name: "same: unchanged", replicas: 1, want: controllerutil.OperationResultNone},
		{name: "spec: updated", replicas: 2, want: controllerutil.OperationResultUpdated},
		{name: "status only", replicas: 2, observed: 5, want: controllerutil.OperationResultUpdatedStatusOnly},
		{name: "spec and status", replicas: 3, observed: 6, want: controllerutil.OperationResultUpdatedStatus},
	}
	for _, st := range steps {
		got, err := controllerutil.CreateOrPatch(ctx, c, d, func() error {
			d.Spec.Replicas = &st.replicas
			if st.observed != 0 {
				d.Status.ObservedGeneration = st.observed
			}
			return nil
		})
		require.NoError(t, err, st.name)
		assert.Equal(t, st.want, got, st.name)
	}
	var stored appsv1.Deployment
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(d), &stored))
	assert.Equal(t, int32(3), *stored.Spec.Replicas)
	assert.Equal(t, int64(6), stored.Status.ObservedGeneration)
}

func TestCreateOrUpdatePassesErrors(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}
	boom := errors.New("boom")
	_, err := controllerutil.CreateOrUpdate(context.Background(), c, cm, func() error { return boom })
	assert.ErrorIs(t, err, boom)
	_, err = controllerutil.CreateOrPatch(context.Background(), c, cm, func() error { return boom })
	assert.ErrorIs(t, err, boom)
}

func TestFinalizers(t *testing.T) {
	tests := []struct {
		name       string
		give       []string
		add        bool
		wantChange bool
		want       []string
	}{
		{name: "add new", give: nil, add: true, wantChange: true, want: []string{"f"}},
		{name: "add present", give: []string{"f"}, add: true, wantChange: false, want: []string{"f"}},
		{name: "remove present", give: []string{"a", "f", "f"}, wantChange: true, want: []string{"a"}},
		{name: "remove absent", give: []string{"a"}, wantChange: false, want: []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Finalizers: tt.give}}
			var changed bool
			if tt.add {
				changed = controllerutil.AddFinalizer(cm, "f")
			} else {
				changed = controllerutil.RemoveFinalizer(cm, "f")
			}
			assert.Equal(t, tt.wantChange, changed)
			assert.Equal(t, tt.want, cm.Finalizers)
			assert.Equal(t, tt.add, controllerutil.ContainsFinalizer(cm, "f"))
		})
	}
}
