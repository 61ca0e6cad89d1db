package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kubeloop/kubeloop/client"
)

// TestParityConformance holds the fake and the real client to the same
// behaviour for Status().Apply and the client wrappers (NewNamespacedClient,
// WithFieldOwner, NewDryRunClient).
func TestParityConformance(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			c := b.new(t)
			for _, tc := range parityCases() {
				t.Run(tc.name, func(t *testing.T) {
					ctx := t.Context()
					tc.run(t, ctx, c, newNamespace(t, ctx, c))
				})
			}
		})
	}
}

func parityCases() []conformanceCase {
	return []conformanceCase{
		{name: "status apply changes only the status and owns its fields", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			d := newDeployment(ns, "sa")
			require.NoError(t, c.Create(ctx, d))
			ac := appsv1ac.Deployment("sa", ns).WithStatus(appsv1ac.DeploymentStatus().WithReplicas(3).WithObservedGeneration(1)).
				WithSpec(appsv1ac.DeploymentSpec().WithReplicas(9)) // ignored by a status apply
			require.NoError(t, c.Status().Apply(ctx, ac, client.FieldOwner("status-owner")))
			require.NotNil(t, ac.ResourceVersion, "the configuration is filled with the answer")
			var got appsv1.Deployment
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(d), &got))
			assert.Equal(t, int32(3), got.Status.Replicas)
			assert.Equal(t, int64(1), got.Status.ObservedGeneration)
			assert.Equal(t, int32(1), *got.Spec.Replicas, "the spec is not changed through status")

			// A field the owner stops applying is removed.
			require.NoError(t, c.Status().Apply(ctx, appsv1ac.Deployment("sa", ns).WithStatus(appsv1ac.DeploymentStatus().WithObservedGeneration(1)),
				client.FieldOwner("status-owner")))
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(d), &got))
			assert.Zero(t, got.Status.Replicas)

			// A spec apply by the same manager leaves the status it applied.
			require.NoError(t, c.Status().Apply(ctx, appsv1ac.Deployment("sa", ns).WithStatus(appsv1ac.DeploymentStatus().WithReplicas(2)),
				client.FieldOwner("same")))
			require.NoError(t, c.Apply(ctx, appsv1ac.Deployment("sa", ns).WithLabels(map[string]string{"a": "b"}), client.FieldOwner("same")))
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(d), &got))
			assert.Equal(t, int32(2), got.Status.Replicas)
			assert.Equal(t, "b", got.Labels["a"])
		}},
		{name: "status apply of a custom resource", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			w := newWidget(ns, "saw")
			w.Object["spec"] = map[string]any{"size": int64(1)}
			require.NoError(t, c.Create(ctx, w))
			cfg := newWidget(ns, "saw")
			cfg.Object["status"] = map[string]any{"phase": "Ready"}
			require.NoError(t, c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(cfg), client.FieldOwner("widget-status")))
			got := newWidget(ns, "saw")
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(got), got))
			phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
			assert.Equal(t, "Ready", phase)
			size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size")
			assert.Equal(t, int64(1), size)
		}},
		{name: "status apply needs a field owner and an existing object", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			err := c.Status().Apply(ctx, appsv1ac.Deployment("nobody", ns).WithStatus(appsv1ac.DeploymentStatus().WithReplicas(1)))
			assert.ErrorContains(t, err, "field owner is required")
			err = c.Status().Apply(ctx, appsv1ac.Deployment("missing", ns).WithStatus(appsv1ac.DeploymentStatus().WithReplicas(1)), client.FieldOwner("x"))
			assert.True(t, apierrors.IsNotFound(err), "got %v", err)
		}},
		{name: "namespaced client fills and guards the namespace", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			nc := client.NewNamespacedClient(c, ns)
			assert.Equal(t, ns, nc.Namespace())
			cm := newConfigMap("", "scoped", map[string]string{"a": "1"})
			require.NoError(t, nc.Create(ctx, cm))
			assert.Equal(t, ns, cm.Namespace)
			var got corev1.ConfigMap
			require.NoError(t, nc.Get(ctx, client.ObjectKey{Name: "scoped"}, &got))
			assert.Equal(t, "1", got.Data["a"])
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "scoped"}, &got), "written to the namespace")

			other := newNamespace(t, ctx, c)
			require.NoError(t, c.Create(ctx, newConfigMap(other, "elsewhere", nil)))
			var list corev1.ConfigMapList
			require.NoError(t, nc.List(ctx, &list))
			require.Len(t, list.Items, 1, "only the client's namespace is listed")
			assert.Equal(t, "scoped", list.Items[0].Name)

			err := nc.Get(ctx, client.ObjectKey{Namespace: other, Name: "elsewhere"}, &got)
			assert.True(t, errors.Is(err, client.ErrNamespaceMismatch), "got %v", err)
			err = nc.Create(ctx, newConfigMap(other, "nope", nil))
			assert.True(t, errors.Is(err, client.ErrNamespaceMismatch), "got %v", err)
			err = nc.List(ctx, &list, client.InNamespace(other))
			assert.True(t, errors.Is(err, client.ErrNamespaceMismatch), "got %v", err)

			ac := corev1ac.ConfigMap("applied", "").WithData(map[string]string{"k": "v"})
			require.NoError(t, nc.Apply(ctx, ac, client.FieldOwner("ns-test")))
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "applied"}, &got))
			assert.Equal(t, "v", got.Data["k"])

			// Cluster-scoped kinds pass through.
			var nss corev1.NamespaceList
			require.NoError(t, nc.List(ctx, &nss))
			assert.GreaterOrEqual(t, len(nss.Items), 2)

			require.NoError(t, nc.DeleteAllOf(ctx, &corev1.ConfigMap{}))
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: other, Name: "elsewhere"}, &got), "DeleteAllOf stays in the namespace")
		}},
		{name: "field owner client names the manager of every write", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			owned := client.WithFieldOwner(c, "owner-a")
			require.NoError(t, owned.Apply(ctx, corev1ac.ConfigMap("fo", ns).WithData(map[string]string{"k": "a"})),
				"Apply needs no per-call FieldOwner")
			err := c.Apply(ctx, corev1ac.ConfigMap("fo", ns).WithData(map[string]string{"k": "b"}), client.FieldOwner("owner-b"))
			require.Error(t, err)
			assert.ErrorContains(t, err, `conflict with "owner-a"`)
			err = owned.Apply(ctx, corev1ac.ConfigMap("fo", ns).WithData(map[string]string{"k": "c"}), client.FieldOwner("owner-c"))
			assert.ErrorContains(t, err, `conflict with "owner-a"`, "a per-call FieldOwner wins over the client's")
			require.NoError(t, owned.Apply(ctx, corev1ac.ConfigMap("fo", ns).WithData(map[string]string{"k": "c"}),
				client.FieldOwner("owner-c"), client.ForceOwnership))
			err = c.Apply(ctx, corev1ac.ConfigMap("fo", ns).WithData(map[string]string{"k": "d"}), client.FieldOwner("owner-a"))
			assert.ErrorContains(t, err, `conflict with "owner-c"`)

			d := newDeployment(ns, "fo")
			require.NoError(t, c.Create(ctx, d))
			require.NoError(t, owned.Status().Apply(ctx, appsv1ac.Deployment("fo", ns).WithStatus(appsv1ac.DeploymentStatus().WithReplicas(1))),
				"subresource applies get the owner too")
		}},
		{name: "dry-run client persists nothing", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			dry := client.NewDryRunClient(c)
			cm := newConfigMap(ns, "dry", map[string]string{"a": "1"})
			require.NoError(t, dry.Create(ctx, cm))
			assert.Equal(t, "1", cm.Data["a"])
			var got corev1.ConfigMap
			err := c.Get(ctx, client.ObjectKeyFromObject(cm), &got)
			assert.True(t, apierrors.IsNotFound(err), "a dry-run create stores nothing, got %v", err)

			real := newConfigMap(ns, "kept", map[string]string{"a": "1"})
			require.NoError(t, c.Create(ctx, real))
			upd := real.DeepCopy()
			upd.Data["a"] = "2"
			require.NoError(t, dry.Update(ctx, upd))
			assert.Equal(t, "2", upd.Data["a"], "the answer shows the update")
			require.NoError(t, dry.Apply(ctx, corev1ac.ConfigMap("kept", ns).WithData(map[string]string{"b": "3"}), client.FieldOwner("dry")))
			require.NoError(t, dry.Delete(ctx, real))
			require.NoError(t, dry.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns)))
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(real), &got))
			assert.Equal(t, map[string]string{"a": "1"}, got.Data, "nothing changed")

			d := newDeployment(ns, "dry")
			require.NoError(t, c.Create(ctx, d))
			require.NoError(t, dry.Status().Apply(ctx, appsv1ac.Deployment("dry", ns).WithStatus(appsv1ac.DeploymentStatus().WithReplicas(5)), client.FieldOwner("dry")))
			var gotD appsv1.Deployment
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(d), &gotD))
			assert.Zero(t, gotD.Status.Replicas, "a dry-run status apply stores nothing")
		}},
	}
}
