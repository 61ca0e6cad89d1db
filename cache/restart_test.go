package cache_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/envtest"
)

func TestRemoveInformerLeavesNoGoroutine(t *testing.T) {
	ns := newNamespace(t)
	createConfigMaps(t, ns, "cm", 3, nil)
	c := startCache(t, cfg, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	ctx := ctxTimeout(t, time.Minute)
	// Warm up the shared HTTP connection, whose goroutines outlive any
	// one informer.
	_, err := c.GetInformer(ctx, &corev1.Secret{})
	require.NoError(t, err)
	require.True(t, c.WaitForCacheSync(ctx))
	require.NoError(t, c.RemoveInformer(ctx, &corev1.Secret{}))
	before := goleak.IgnoreCurrent()

	inf, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	_, err = inf.AddEventHandler(nopHandler{})
	require.NoError(t, err)
	require.True(t, c.WaitForCacheSync(ctx))
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm-0"}, &corev1.ConfigMap{}))

	require.NoError(t, c.RemoveInformer(ctx, &corev1.ConfigMap{}))
	assert.True(t, inf.IsStopped())
	goleak.VerifyNone(t, before)
	require.NoError(t, c.RemoveInformer(ctx, &corev1.ConfigMap{}), "removing twice is fine")
}

type nopHandler struct{}

func (nopHandler) OnAdd(any, bool)   {}
func (nopHandler) OnUpdate(_, _ any) {}
func (nopHandler) OnDelete(any)      {}

func TestHealthyNamesForbiddenKind(t *testing.T) {
	ns := newNamespace(t)
	createConfigMaps(t, ns, "cm", 2, nil)
	ctx := ctxTimeout(t, time.Minute)
	_, err := kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "cm-reader", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "cm-reader", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "cm-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "bob-" + ns}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	bob, err := env.AddUser(envtest.User{Name: "bob-" + ns})
	require.NoError(t, err)

	c := startCache(t, bob, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	_, err = c.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	_, err = c.GetInformer(ctx, &corev1.Secret{})
	require.NoError(t, err)

	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	assert.False(t, c.WaitForCacheSync(short), "a forbidden kind never syncs")
	herr := c.Healthy()
	require.Error(t, herr)
	assert.ErrorContains(t, herr, "v1, Kind=Secret in namespace "+ns)
	assert.NotContains(t, herr.Error(), "ConfigMap", "the readable kind is healthy")
	var status apierrors.APIStatus
	require.True(t, errors.As(herr, &status))
	assert.True(t, apierrors.IsForbidden(status.(error)))

	// A read of the forbidden kind fails when its context ends, and says why.
	short2, cancel2 := context.WithTimeout(ctx, time.Second)
	defer cancel2()
	err = c.Get(short2, client.ObjectKey{Namespace: ns, Name: "s"}, &corev1.Secret{})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, "forbidden")
	// The readable kind serves reads.
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm-1"}, &corev1.ConfigMap{}))

	// Removing the forbidden informer makes the cache healthy and syncable.
	require.NoError(t, c.RemoveInformer(ctx, &corev1.Secret{}))
	assert.NoError(t, c.Healthy())
	assert.True(t, c.WaitForCacheSync(ctx))
}

func TestConvergesAfterAPIServerRestart(t *testing.T) {
	ns := newNamespace(t)
	createConfigMaps(t, ns, "cm", 20, nil)
	c := startCache(t, cfg, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	ctx := ctxTimeout(t, 2*time.Minute)
	_, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	require.True(t, c.WaitForCacheSync(ctx))

	// Writes right before the stop may or may not reach the watch first.
	cms := kube.CoreV1().ConfigMaps(ns)
	for i := range 5 {
		_, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", i), Namespace: ns},
			Data: map[string]string{"phase": "before-stop"}}, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	require.NoError(t, cms.Delete(ctx, "cm-19", metav1.DeleteOptions{}))
	require.NoError(t, env.StopAPIServer())
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = env.StartAPIServer()
		}
	})
	require.Eventually(t, func() bool { return c.Healthy() != nil }, time.Minute, 50*time.Millisecond,
		"a dropped watch that cannot be resumed shows in Healthy")
	require.NoError(t, env.StartAPIServer())
	restarted = true

	for i := 5; i < 10; i++ {
		_, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", i), Namespace: ns},
			Data: map[string]string{"phase": "after-start"}}, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	for i := 10; i < 15; i++ {
		require.NoError(t, cms.Delete(ctx, fmt.Sprint("cm-", i), metav1.DeleteOptions{}))
	}
	createConfigMaps(t, ns, "new", 3, nil)

	want, err := cms.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	wantRV := map[string]string{}
	for _, cm := range want.Items {
		wantRV[cm.Name] = cm.ResourceVersion
	}
	require.Len(t, wantRV, 20-1-5+3)
	require.Eventually(t, func() bool {
		var got corev1.ConfigMapList
		if err := c.List(ctx, &got, client.InNamespace(ns)); err != nil || len(got.Items) != len(wantRV) {
			return false
		}
		for _, cm := range got.Items {
			if wantRV[cm.Name] != cm.ResourceVersion {
				return false
			}
		}
		return true
	}, time.Minute, 50*time.Millisecond, "the cache converges to the server, no object stale")
	require.Eventually(t, func() bool { return c.Healthy() == nil }, time.Minute, 50*time.Millisecond)
}
