package cache

import (
	"context"
	"fmt"
	"reflect"
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

// TestTransformReusesUnchangedMaps stores an update whose labels and
// annotations did not change with the stored version's maps, and builds
// new ones when they changed or a user transform could modify them.
func TestTransformReusesUnchangedMaps(t *testing.T) {
	mapPtr := func(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }
	get := func(t *testing.T, c *InformerCache, rv string) *corev1.ConfigMap {
		var cm corev1.ConfigMap
		require.Eventually(t, func() bool {
			return c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "cm"}, &cm, client.UnsafeDisableDeepCopy) == nil &&
				cm.ResourceVersion == rv
		}, waitFor, tick)
		return &cm
	}
	mk := func(team string, data string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm",
				Labels: map[string]string{"team": team}, Annotations: map[string]string{"note": "x"}},
			Data: map[string]string{"k": data},
		}
	}
	for _, withUser := range []bool{false, true} {
		t.Run(fmt.Sprint("user transform ", withUser), func(t *testing.T) {
			var opts Options
			if withUser {
				opts.DefaultTransform = func(obj any) (any, error) { return obj, nil }
			}
			c, src := newFakeCache(t, opts)
			_, err := c.GetInformer(context.Background(), &corev1.ConfigMap{})
			require.NoError(t, err)
			s := src.source(cmGVK)
			s.Add(mk("a", "1"))
			v1 := get(t, c, "1")
			s.Modify(mk("a", "2"))
			v2 := get(t, c, "2")
			assert.Equal(t, "2", v2.Data["k"])
			assert.Equal(t, map[string]string{"team": "a"}, v2.Labels)
			assert.Equal(t, !withUser, mapPtr(v1.Labels) == mapPtr(v2.Labels), "labels map reused")
			assert.Equal(t, !withUser, mapPtr(v1.Annotations) == mapPtr(v2.Annotations), "annotations map reused")

			s.Modify(mk("b", "3"))
			v3 := get(t, c, "3")
			assert.Equal(t, map[string]string{"team": "b"}, v3.Labels)
			assert.NotEqual(t, mapPtr(v2.Labels), mapPtr(v3.Labels), "changed labels get a new map")
			assert.Equal(t, "a", v2.Labels["team"], "the previous version is untouched")
		})
	}
}

// TestTransformSharesEqualMaps stores objects whose labels and annotations
// are equal with one map each, keeps different ones apart, and shares
// nothing between objects when a user transform runs (it may modify them).
// A deep copy's maps are its own.
func TestTransformSharesEqualMaps(t *testing.T) {
	mk := func(name, team string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
			Labels: map[string]string{"team": team, "app": "web"}, Annotations: map[string]string{"owner": team}}}
	}
	mapPtr := func(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }
	for _, withUser := range []bool{false, true} {
		t.Run(fmt.Sprint("user transform ", withUser), func(t *testing.T) {
			var opts Options
			if withUser {
				opts.DefaultTransform = func(obj any) (any, error) {
					obj.(*corev1.ConfigMap).Labels["seen"] = "yes" // in place, as a user transform may
					return obj, nil
				}
			}
			c, src := newFakeCache(t, opts)
			s := src.source(cmGVK)
			s.Add(mk("a", "x"))
			s.Add(mk("b", "x"))
			s.Add(mk("c", "y"))
			ctx := context.Background()
			var list corev1.ConfigMapList
			require.Eventually(t, func() bool {
				return c.List(ctx, &list, client.UnsafeDisableDeepCopy) == nil && len(list.Items) == 3
			}, waitFor, tick)
			byName := map[string]*corev1.ConfigMap{}
			for i := range list.Items {
				byName[list.Items[i].Name] = &list.Items[i]
			}
			a, b, cc := byName["a"], byName["b"], byName["c"]
			want := map[string]string{"team": "x", "app": "web"}
			if withUser {
				want["seen"] = "yes"
			}
			assert.Equal(t, want, a.Labels)
			assert.Equal(t, want, b.Labels, "a user transform's change is on every object, once")
			assert.Equal(t, !withUser, mapPtr(a.Labels) == mapPtr(b.Labels), "equal labels shared")
			assert.Equal(t, !withUser, mapPtr(a.Annotations) == mapPtr(b.Annotations), "equal annotations shared")
			assert.NotEqual(t, mapPtr(a.Labels), mapPtr(cc.Labels), "different labels apart")
			assert.Equal(t, "y", cc.Labels["team"])

			// A Get's deep copy can be modified without touching the cache.
			var got corev1.ConfigMap
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "a"}, &got))
			got.Labels["team"] = "changed"
			got.Annotations["owner"] = "changed"
			for _, name := range []string{"a", "b"} {
				var cm corev1.ConfigMap
				require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: name}, &cm))
				assert.Equal(t, "x", cm.Labels["team"], name)
				assert.Equal(t, "x", cm.Annotations["owner"], name)
			}
		})
	}
}
