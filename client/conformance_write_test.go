package client_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kubeloop/kubeloop/client"
)

func statusCases() []conformanceCase {
	return []conformanceCase{
		{name: "status subresource of a custom resource", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			w := newWidget(ns, "st")
			w.Object["spec"] = map[string]any{"size": int64(1)}
			w.Object["status"] = map[string]any{"phase": "Ignored"}
			require.NoError(t, c.Create(ctx, w))
			_, found, _ := unstructured.NestedString(w.Object, "status", "phase")
			assert.False(t, found, "create drops the status of a kind with a status subresource")

			w.Object["spec"] = map[string]any{"size": int64(2)}
			w.Object["status"] = map[string]any{"phase": "FromUpdate"}
			require.NoError(t, c.Update(ctx, w))
			_, found, _ = unstructured.NestedString(w.Object, "status", "phase")
			assert.False(t, found, "Update ignores status")

			w.Object["spec"] = map[string]any{"size": int64(99)}
			w.Object["status"] = map[string]any{"phase": "Ready"}
			require.NoError(t, c.Status().Update(ctx, w))
			phase, _, _ := unstructured.NestedString(w.Object, "status", "phase")
			assert.Equal(t, "Ready", phase)
			size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
			assert.Equal(t, int64(2), size, "Status().Update ignores spec")

			err := c.Patch(ctx, w, client.RawPatch(types.MergePatchType, []byte(`{"status":{"phase":"MainPatch"}}`)))
			require.NoError(t, err)
			phase, _, _ = unstructured.NestedString(w.Object, "status", "phase")
			assert.Equal(t, "Ready", phase, "a patch of the main resource ignores status")

			before := w.DeepCopy()
			w.Object["status"] = map[string]any{"phase": "Patched"}
			require.NoError(t, c.Status().Patch(ctx, w, client.MergeFrom(before)))
			got := newWidget("", "")
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(w), got))
			phase, _, _ = unstructured.NestedString(got.Object, "status", "phase")
			assert.Equal(t, "Patched", phase)
		}},
		{name: "status subresource of a typed object", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			d := newDeployment(ns, "web")
			require.NoError(t, c.Create(ctx, d))
			d.Status.ObservedGeneration = 7
			d.Spec.Template.Spec.Containers[0].Image = "example.com/main:2"
			require.NoError(t, c.Status().Update(ctx, d))
			assert.Equal(t, int64(7), d.Status.ObservedGeneration)
			var got appsv1.Deployment
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(d), &got))
			assert.Equal(t, int64(7), got.Status.ObservedGeneration)
			assert.Equal(t, "example.com/main:1", got.Spec.Template.Spec.Containers[0].Image)

			stale := got.DeepCopy()
			got.Status.ObservedGeneration = 8
			require.NoError(t, c.Status().Update(ctx, &got))
			stale.Status.ObservedGeneration = 9
			assert.True(t, apierrors.IsConflict(c.Status().Update(ctx, stale)))
		}},
		{name: "scale subresource", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			d := newDeployment(ns, "scaled")
			require.NoError(t, c.Create(ctx, d))
			var scale autoscalingv1.Scale
			require.NoError(t, c.SubResource("scale").Get(ctx, d, &scale))
			assert.Equal(t, int32(1), scale.Spec.Replicas)
			scale.Spec.Replicas = 3
			require.NoError(t, c.SubResource("scale").Update(ctx, d, client.WithSubResourceBody(&scale)))
			var got appsv1.Deployment
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(d), &got))
			assert.Equal(t, int32(3), *got.Spec.Replicas)
		}},
		{name: "eviction subresource", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/c:1"}}}}
			require.NoError(t, c.Create(ctx, pod))
			ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}}
			require.NoError(t, c.SubResource("eviction").Create(ctx, pod, ev))
			assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})))
		}},
	}
}

func patchCases() []conformanceCase {
	return []conformanceCase{
		{name: "merge patch", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			cm := newConfigMap(ns, "mp", map[string]string{"a": "1", "b": "2"})
			require.NoError(t, c.Create(ctx, cm))
			before := cm.DeepCopy()
			cm.Data["a"] = "10"
			delete(cm.Data, "b")
			require.NoError(t, c.Patch(ctx, cm, client.MergeFrom(before)))
			assert.Equal(t, map[string]string{"a": "10"}, cm.Data)
			assert.NotEqual(t, before.ResourceVersion, cm.ResourceVersion)
		}},
		{name: "merge patch with optimistic lock conflicts when stale", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			cm := newConfigMap(ns, "lock", map[string]string{"a": "1"})
			require.NoError(t, c.Create(ctx, cm))
			stale := cm.DeepCopy()
			cm.Data["a"] = "2"
			require.NoError(t, c.Update(ctx, cm))
			mod := stale.DeepCopy()
			mod.Data["a"] = "3"
			err := c.Patch(ctx, mod, client.MergeFromWithOptions(stale, client.MergeFromWithOptimisticLock{}))
			assert.True(t, apierrors.IsConflict(err), "got %v", err)
			mod = cm.DeepCopy()
			mod.Data["a"] = "3"
			require.NoError(t, c.Patch(ctx, mod, client.MergeFromWithOptions(cm, client.MergeFromWithOptimisticLock{})))
			assert.Equal(t, "3", mod.Data["a"])
		}},
		{name: "strategic merge patch merges containers by name", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			d := newDeployment(ns, "smp")
			require.NoError(t, c.Create(ctx, d))
			before := d.DeepCopy()
			d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "side", Image: "example.com/side:2"}}
			require.NoError(t, c.Patch(ctx, d, client.StrategicMergeFrom(before)))
			// A strategic merge patch computed from a list that dropped
			// "main" deletes it; one that only changes "side" would keep it.
			require.Len(t, d.Spec.Template.Spec.Containers, 1)
			assert.Equal(t, "example.com/side:2", d.Spec.Template.Spec.Containers[0].Image)

			raw := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"extra","image":"example.com/extra:1"}]}}}}`)
			require.NoError(t, c.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, raw)))
			assert.Len(t, d.Spec.Template.Spec.Containers, 2, "a raw strategic patch adds by merge key")
		}},
		{name: "strategic merge patch is refused for custom resources", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			w := newWidget(ns, "smp")
			require.NoError(t, c.Create(ctx, w))
			err := c.Patch(ctx, w, client.RawPatch(types.StrategicMergePatchType, []byte(`{"spec":{"size":2}}`)))
			assert.True(t, apierrors.IsUnsupportedMediaType(err), "got %v", err)
			err = c.Patch(ctx, w, client.StrategicMergeFrom(w.DeepCopy()))
			assert.ErrorContains(t, err, "use MergeFrom")
		}},
		{name: "JSON patch", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			cm := newConfigMap(ns, "jp", map[string]string{"a": "1"})
			require.NoError(t, c.Create(ctx, cm))
			patch := []byte(`[{"op":"replace","path":"/data/a","value":"2"},{"op":"add","path":"/data/b","value":"3"}]`)
			require.NoError(t, c.Patch(ctx, cm, client.RawPatch(types.JSONPatchType, patch)))
			assert.Equal(t, map[string]string{"a": "2", "b": "3"}, cm.Data)
			bad := []byte(`[{"op":"test","path":"/data/a","value":"nope"}]`)
			assert.Error(t, c.Patch(ctx, cm, client.RawPatch(types.JSONPatchType, bad)))
		}},
		{name: "merge patch of a custom resource", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			w := newWidget(ns, "mp")
			w.Object["spec"] = map[string]any{"size": int64(1), "color": "red"}
			require.NoError(t, c.Create(ctx, w))
			require.NoError(t, c.Patch(ctx, w, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"color":"blue"}}`))))
			assert.Equal(t, map[string]any{"size": int64(1), "color": "blue"}, w.Object["spec"])
		}},
		{name: "patch of a missing object is NotFound", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			cm := newConfigMap(ns, "missing", nil)
			err := c.Patch(ctx, cm, client.RawPatch(types.MergePatchType, []byte(`{"data":{"a":"b"}}`)))
			assert.True(t, apierrors.IsNotFound(err), "got %v", err)
		}},
	}
}

func applyCases() []conformanceCase {
	return []conformanceCase{
		{name: "server-side apply field ownership", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			a := corev1ac.ConfigMap("owned", ns).WithData(map[string]string{"key": "from-a", "only-a": "x"})
			require.NoError(t, c.Apply(ctx, a, client.FieldOwner("manager-a")))
			require.NotNil(t, a.ResourceVersion, "Apply fills the configuration with the answer")

			b := corev1ac.ConfigMap("owned", ns).WithData(map[string]string{"key": "from-b"})
			err := c.Apply(ctx, b, client.FieldOwner("manager-b"))
			assert.True(t, apierrors.IsConflict(err), "a conflicting apply without force: %v", err)
			assert.ErrorContains(t, err, `Apply failed with 1 conflict: conflict with "manager-a"`)
			assert.ErrorContains(t, err, ".data.key")

			b = corev1ac.ConfigMap("owned", ns).WithData(map[string]string{"key": "from-b"})
			require.NoError(t, c.Apply(ctx, b, client.FieldOwner("manager-b"), client.ForceOwnership))
			var got corev1.ConfigMap
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "owned"}, &got))
			assert.Equal(t, "from-b", got.Data["key"])
			assert.Equal(t, "x", got.Data["only-a"])

			// manager-a stops applying only-a: the field goes away.
			a = corev1ac.ConfigMap("owned", ns).WithData(map[string]string{"key": "from-b"})
			require.NoError(t, c.Apply(ctx, a, client.FieldOwner("manager-a")))
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "owned"}, &got))
			assert.NotContains(t, got.Data, "only-a")
		}},
		{name: "apply conflicts with a field another manager updated", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			cm := newConfigMap(ns, "mixed", map[string]string{"a": "1"})
			require.NoError(t, c.Create(ctx, cm, client.FieldOwner("creator")))
			cm.Data["a"] = "2"
			require.NoError(t, c.Update(ctx, cm, client.FieldOwner("updater")))
			err := c.Apply(ctx, corev1ac.ConfigMap("mixed", ns).WithData(map[string]string{"a": "3"}), client.FieldOwner("applier"))
			assert.True(t, apierrors.IsConflict(err), "got %v", err)
			assert.ErrorContains(t, err, `conflict with "updater"`)
			require.NoError(t, c.Apply(ctx, corev1ac.ConfigMap("mixed", ns).WithData(map[string]string{"a": "2"}), client.FieldOwner("applier")),
				"applying the value already there shares ownership")
		}},
		{name: "apply needs a field owner", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			err := c.Apply(ctx, corev1ac.ConfigMap("x", ns).WithData(map[string]string{"a": "b"}))
			assert.ErrorContains(t, err, "field owner")
		}},
		{name: "apply of an unstructured custom resource", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			w := newWidget(ns, "applied")
			w.Object["spec"] = map[string]any{"size": int64(5)}
			require.NoError(t, c.Apply(ctx, client.ApplyConfigurationFromUnstructured(w), client.FieldOwner("me")))
			assert.NotEmpty(t, w.GetUID(), "the unstructured object holds the answer")

			p := newWidget(ns, "applied")
			p.Object["spec"] = map[string]any{"color": "green"}
			require.NoError(t, c.Patch(ctx, p, client.Apply, client.FieldOwner("other")))
			assert.Equal(t, map[string]any{"size": int64(5), "color": "green"}, p.Object["spec"])
		}},
	}
}
