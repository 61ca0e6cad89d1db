package mirror_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/examples/mirror"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/manager"
)

var c client.Client

func TestMain(m *testing.M) {
	stop := func() error { return nil } // the manager's, once it runs
	testenv.Main(m, testenv.Options{
		Env: &envtest.Environment{},
		Setup: func(cfg *rest.Config) error {
			var err error
			if c, err = client.New(cfg, client.Options{}); err != nil {
				return err
			}
			mgr, err := manager.New(cfg, manager.Options{Logger: testenv.Logger()})
			if err != nil {
				return err
			}
			if err := mirror.SetupWithManager(context.Background(), mgr); err != nil {
				return err
			}
			stop = testenv.Start(mgr)
			return nil
		},
		Teardown: func() error { return stop() },
	})
}

func namespace(t *testing.T, accept bool) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "mirror-"}}
	if accept {
		ns.Labels = map[string]string{mirror.AcceptLabel: "true"}
	}
	require.NoError(t, c.Create(t.Context(), ns))
	return ns.Name
}

func source(t *testing.T, ns, name string, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{mirror.SourceLabel: "true"}}, Data: data}
	require.NoError(t, c.Create(t.Context(), cm))
	return cm
}

// copyIn returns the copy of name in ns, or nil.
func copyIn(t *testing.T, ns, name string) *corev1.ConfigMap {
	var cm corev1.ConfigMap
	err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &cm)
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	return &cm
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 30*time.Second, 50*time.Millisecond, what)
}

func TestMirrorFollowsSource(t *testing.T) {
	ctx := t.Context()
	src := namespace(t, false)
	a, b, other := namespace(t, true), namespace(t, true), namespace(t, false)
	cm := source(t, src, "settings", map[string]string{"color": "blue"})

	for _, ns := range []string{a, b} {
		eventually(t, "a copy appears in "+ns, func() bool {
			cp := copyIn(t, ns, "settings")
			return cp != nil && cp.Data["color"] == "blue"
		})
	}
	assert.Nil(t, copyIn(t, other, "settings"), "a namespace that does not accept gets no copy")
	assert.Equal(t, src+".settings", copyIn(t, a, "settings").Labels[mirror.MirrorOfLabel])

	// A change to the source reaches every copy.
	cm.Data["color"] = "green"
	require.NoError(t, c.Update(ctx, cm))
	for _, ns := range []string{a, b} {
		eventually(t, "the copy in "+ns+" follows the change", func() bool {
			cp := copyIn(t, ns, "settings")
			return cp != nil && cp.Data["color"] == "green"
		})
	}

	// Tampering with a copy is undone; a deleted copy comes back.
	cp := copyIn(t, a, "settings")
	cp.Data["color"] = "red"
	require.NoError(t, c.Update(ctx, cp))
	eventually(t, "the tampered copy is restored", func() bool {
		cp := copyIn(t, a, "settings")
		return cp != nil && cp.Data["color"] == "green"
	})
	require.NoError(t, c.Delete(ctx, copyIn(t, b, "settings")))
	eventually(t, "the deleted copy comes back", func() bool { return copyIn(t, b, "settings") != nil })

	// Deleting the source removes every copy.
	require.NoError(t, c.Delete(ctx, cm))
	for _, ns := range []string{a, b} {
		eventually(t, "the copy in "+ns+" is removed", func() bool { return copyIn(t, ns, "settings") == nil })
	}
}

func TestNamespacesJoiningAndLeaving(t *testing.T) {
	ctx := t.Context()
	src := namespace(t, false)
	source(t, src, "shared", map[string]string{"k": "v"})
	late := namespace(t, false)
	assert.Never(t, func() bool { return copyIn(t, late, "shared") != nil }, 300*time.Millisecond, 50*time.Millisecond)

	var ns corev1.Namespace
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: late}, &ns))
	ns.Labels = map[string]string{mirror.AcceptLabel: "true"}
	require.NoError(t, c.Update(ctx, &ns))
	eventually(t, "a namespace that starts accepting gets the copy", func() bool { return copyIn(t, late, "shared") != nil })

	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: late}, &ns))
	delete(ns.Labels, mirror.AcceptLabel)
	require.NoError(t, c.Update(ctx, &ns))
	eventually(t, "a namespace that stops accepting loses the copy", func() bool { return copyIn(t, late, "shared") == nil })
}

func TestSourceLosingItsLabel(t *testing.T) {
	ctx := t.Context()
	src := namespace(t, false)
	dst := namespace(t, true)
	cm := source(t, src, "unlabelled", map[string]string{"k": "v"})
	eventually(t, "the copy appears", func() bool { return copyIn(t, dst, "unlabelled") != nil })

	delete(cm.Labels, mirror.SourceLabel)
	require.NoError(t, c.Update(ctx, cm))
	eventually(t, "the copy goes when the source stops asking", func() bool { return copyIn(t, dst, "unlabelled") == nil })
}
