package cache

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
)

// replica returns Pod i of one ReplicaSet; every string is a fresh copy,
// as a decoder would produce.
func replica(i int) *corev1.Pod {
	s := func(v string) string { return string([]byte(v)) }
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: s("ns"), Name: fmt.Sprint("web-", i), OwnerReferences: []metav1.OwnerReference{{
			APIVersion: s("apps/v1"), Kind: s("ReplicaSet"), Name: s("web-6d5f"), UID: types.UID(s("0b6a3c1e-uid")),
		}}},
		Spec: corev1.PodSpec{
			NodeName: s("node-1"), SchedulerName: s("default-scheduler"),
			Containers: []corev1.Container{{Name: s("app"), Image: s("registry.example.com/web:v1"), ImagePullPolicy: corev1.PullPolicy(s("IfNotPresent"))}},
		},
		Status: corev1.PodStatus{
			Phase:             corev1.PodPhase(s("Running")),
			Conditions:        []corev1.PodCondition{{Type: corev1.PodConditionType(s("Ready")), Status: corev1.ConditionStatus(s("True"))}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: s("app"), Image: s("registry.example.com/web:v1"), ImageID: s("sha256:abc")}},
		},
	}
}

func TestTransformInternsPodsAndOwners(t *testing.T) {
	c, src := newFakeCache(t, Options{})
	s := src.source(schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
	for i := range 2 {
		s.Add(replica(i))
	}
	var list corev1.PodList
	require.Eventually(t, func() bool {
		return c.List(context.Background(), &list, client.UnsafeDisableDeepCopy) == nil && len(list.Items) == 2
	}, waitFor, tick)
	a, b := &list.Items[0], &list.Items[1]
	assert.Equal(t, replica(0).Spec, a.Spec, "values unchanged")
	assert.Equal(t, replica(1).Status, b.Status, "values unchanged")
	for name, pair := range map[string][2]string{
		"owner name":       {a.OwnerReferences[0].Name, b.OwnerReferences[0].Name},
		"owner uid":        {string(a.OwnerReferences[0].UID), string(b.OwnerReferences[0].UID)},
		"node":             {a.Spec.NodeName, b.Spec.NodeName},
		"scheduler":        {a.Spec.SchedulerName, b.Spec.SchedulerName},
		"image":            {a.Spec.Containers[0].Image, b.Spec.Containers[0].Image},
		"pull policy":      {string(a.Spec.Containers[0].ImagePullPolicy), string(b.Spec.Containers[0].ImagePullPolicy)},
		"phase":            {string(a.Status.Phase), string(b.Status.Phase)},
		"condition status": {string(a.Status.Conditions[0].Status), string(b.Status.Conditions[0].Status)},
		"image id":         {a.Status.ContainerStatuses[0].ImageID, b.Status.ContainerStatuses[0].ImageID},
	} {
		assert.Same(t, unsafeStringData(pair[0]), unsafeStringData(pair[1]), name+" shared")
	}
}
