package client_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
)

// optionStructCases pass the option structs themselves as options, as
// controller-runtime code does (&client.CreateOptions{DryRun: ...}).
func optionStructCases() []conformanceCase {
	dryRun := []string{metav1.DryRunAll}
	return []conformanceCase{
		{name: "option structs as options", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			cm := newConfigMap(ns, "struct", map[string]string{"k": "v"})
			require.NoError(t, c.Create(ctx, cm.DeepCopy(), &client.CreateOptions{DryRun: dryRun}))
			err := c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
			assert.True(t, apierrors.IsNotFound(err), "a dry-run create stores nothing: %v", err)

			require.NoError(t, c.Create(ctx, cm, &client.CreateOptions{FieldManager: "struct-create"}))
			changed := cm.DeepCopy()
			changed.Data["k"] = "dry"
			require.NoError(t, c.Update(ctx, changed, &client.UpdateOptions{DryRun: dryRun}))
			patch := client.RawPatch(types.MergePatchType, []byte(`{"data":{"k":"patched-dry"}}`))
			require.NoError(t, c.Patch(ctx, cm.DeepCopy(), patch, &client.PatchOptions{DryRun: dryRun}))
			var got corev1.ConfigMap
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), &got))
			assert.Equal(t, "v", got.Data["k"], "dry-run update and patch change nothing")

			require.NoError(t, c.Patch(ctx, &got, client.RawPatch(types.MergePatchType, []byte(`{"data":{"k":"w"}}`)), &client.PatchOptions{FieldManager: "struct-patch"}))
			assert.Equal(t, "w", got.Data["k"])

			require.NoError(t, c.Delete(ctx, &got, &client.DeleteOptions{DryRun: dryRun}))
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), &got), "a dry-run delete keeps the object")
			require.NoError(t, c.DeleteAllOf(ctx, &corev1.ConfigMap{}, &client.DeleteAllOfOptions{
				ListOptions:   client.ListOptions{Namespace: ns},
				DeleteOptions: client.DeleteOptions{DryRun: dryRun},
			}))
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), &got), "a dry-run DeleteAllOf keeps the object")
			require.NoError(t, c.DeleteAllOf(ctx, &corev1.ConfigMap{}, &client.DeleteAllOfOptions{ListOptions: client.ListOptions{Namespace: ns}}))
			err = c.Get(ctx, client.ObjectKeyFromObject(cm), &got)
			assert.True(t, apierrors.IsNotFound(err), "DeleteAllOf in the struct's namespace deleted it: %v", err)
		}},
	}
}

func TestOptionStructsCopyTheirSetFields(t *testing.T) {
	force := true
	var po client.PatchOptions
	po.ApplyOptions([]client.PatchOption{&client.PatchOptions{FieldManager: "a"}, &client.PatchOptions{Force: &force}})
	assert.Equal(t, client.PatchOptions{FieldManager: "a", Force: &force}, po, "an unset field leaves the earlier option's value")

	var so client.SubResourcePatchOptions
	so.ApplyOptions([]client.SubResourcePatchOption{&client.PatchOptions{FieldManager: "m"}, &client.SubResourcePatchOptions{SubResourceBody: &corev1.Pod{}}})
	assert.Equal(t, "m", so.FieldManager)
	assert.NotNil(t, so.SubResourceBody)

	var do client.DeleteAllOfOptions
	do.ApplyOptions([]client.DeleteAllOfOption{&client.DeleteAllOfOptions{ListOptions: client.ListOptions{Namespace: "x"}, Everything: true}})
	assert.Equal(t, "x", do.Namespace)
	assert.True(t, do.Everything)

	var ao client.ApplyOptions
	ao.ApplyOptions([]client.ApplyOption{&client.ApplyOptions{FieldManager: "applier", Force: &force}})
	assert.Equal(t, "applier", ao.FieldManager)
}
