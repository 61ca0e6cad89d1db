package client_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
)

// unregistered is a Go type no scheme knows.
type unregistered struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func (u *unregistered) DeepCopyObject() runtime.Object {
	out := *u
	u.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

func badInputCases() []conformanceCase {
	return []conformanceCase{
		{name: "bad input gives clear errors", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			var nilCM *corev1.ConfigMap
			assert.ErrorIs(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "x"}, nilCM), client.ErrNilObject)
			assert.ErrorIs(t, c.Create(ctx, nilCM), client.ErrNilObject)
			assert.ErrorIs(t, c.Update(ctx, nil), client.ErrNilObject)

			err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "x"}, &unregistered{})
			assert.ErrorIs(t, err, apiutil.ErrUnknownType)
			assert.ErrorContains(t, err, "unregistered")

			err = c.Get(ctx, client.ObjectKey{Namespace: ns}, &corev1.ConfigMap{})
			assert.ErrorIs(t, err, client.ErrNameRequired)
			assert.ErrorContains(t, err, "get v1, Kind=ConfigMap")
			assert.ErrorIs(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns}}), client.ErrNameRequired)

			err = c.Create(ctx, newConfigMap("", "no-namespace", nil))
			assert.ErrorIs(t, err, client.ErrNamespaceRequired)

			err = c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns), client.HasLabels{"not a valid key!"})
			assert.ErrorContains(t, err, "invalid label selector")
			assert.ErrorContains(t, err, "list v1, Kind=ConfigMap")

			// A label value that would add a requirement is refused, not
			// sent (selector injection); so is one DeleteAllOf would use.
			err = c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns), client.MatchingLabels{"app": "x,tier!=prod"})
			assert.ErrorContains(t, err, "invalid label selector")
			err = c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns), client.MatchingLabels{"not a valid key!": "v"})
			assert.ErrorContains(t, err, "invalid label selector")

			assert.ErrorContains(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "x"}, &unstructured.Unstructured{}), "apiVersion and kind")

			cm := newConfigMap(ns, "patched", nil)
			err = c.Patch(ctx, cm, client.MergeFrom(&corev1.Secret{}))
			assert.ErrorContains(t, err, "original is *v1.Secret but the object is *v1.ConfigMap")
			assert.ErrorContains(t, err, "patch v1, Kind=ConfigMap "+ns+"/patched")

			err = c.Patch(ctx, cm, client.RawPatch("application/merge-patch+json", []byte(`{}`)), client.ForceOwnership)
			assert.ErrorContains(t, err, "ForceOwnership is only valid for apply patches")
		}},
	}
}
