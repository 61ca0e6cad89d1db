package fake_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/client/interceptor"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}) }

func pod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{NodeName: node}}
}

func TestWithIndexAndMatchingFields(t *testing.T) {
	c := fake.NewClientBuilder().
		WithObjects(pod("a", "p1", "n1"), pod("a", "p2", "n2"), pod("b", "p3", "n1")).
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string {
			return []string{o.(*corev1.Pod).Spec.NodeName}
		}).
		Build()
	tests := []struct {
		name string
		give []client.ListOption
		want []string
	}{
		{name: "all namespaces", give: []client.ListOption{client.MatchingFields{"spec.nodeName": "n1"}}, want: []string{"p1", "p3"}},
		{name: "one namespace", give: []client.ListOption{client.InNamespace("a"), client.MatchingFields{"spec.nodeName": "n1"}}, want: []string{"p1"}},
		{name: "no match", give: []client.ListOption{client.MatchingFields{"spec.nodeName": "n9"}}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var list corev1.PodList
			require.NoError(t, c.List(t.Context(), &list, tt.give...))
			names := []string{}
			for _, p := range list.Items {
				names = append(names, p.Name)
			}
			assert.Equal(t, tt.want, names)
		})
	}
	var list corev1.PodList
	err := c.List(t.Context(), &list, client.MatchingFields{"spec.hostname": "x"})
	assert.ErrorContains(t, err, `no index for field "spec.hostname"`)
}

func TestWithObjectsKeepsStatusAndResourceVersion(t *testing.T) {
	p := pod("a", "p", "")
	p.Status.Phase = corev1.PodRunning
	p.ResourceVersion = "42"
	c := fake.NewClientBuilder().WithObjects(p).Build()
	var got corev1.Pod
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(p), &got))
	assert.Equal(t, corev1.PodRunning, got.Status.Phase)
	assert.Equal(t, "42", got.ResourceVersion)
	require.NoError(t, c.Create(t.Context(), pod("a", "q", "")))
	var q corev1.Pod
	require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: "a", Name: "q"}, &q))
	assert.Equal(t, "43", q.ResourceVersion, "resourceVersions continue after the largest given")
}

func TestBuildClientRejectsBadObjects(t *testing.T) {
	_, err := fake.NewClientBuilder().WithObjects(pod("a", "p", ""), pod("a", "p", "")).BuildClient()
	assert.ErrorContains(t, err, "added twice")
	_, err = fake.NewClientBuilder().WithObjects(&corev1.Pod{}).BuildClient()
	assert.ErrorIs(t, err, client.ErrNameRequired)
	// Build never panics: every call of its client fails with the error.
	var c client.WithWatch
	require.NotPanics(t, func() { c = fake.NewClientBuilder().WithObjects(&corev1.Pod{}).Build() })
	err = c.Get(t.Context(), client.ObjectKey{Namespace: "a", Name: "p"}, &corev1.Pod{})
	assert.ErrorIs(t, err, client.ErrNameRequired)
	assert.ErrorContains(t, err, "BuildClient returns this error")
	assert.ErrorIs(t, c.Create(t.Context(), pod("a", "q", "")), client.ErrNameRequired)
	_, err = c.Watch(t.Context(), &corev1.PodList{})
	assert.ErrorIs(t, err, client.ErrNameRequired)
}

func TestReadsAreCopies(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(pod("a", "p", "n1")).Build()
	var got corev1.Pod
	require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: "a", Name: "p"}, &got))
	got.Spec.NodeName = "changed"
	var again corev1.Pod
	require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: "a", Name: "p"}, &again))
	assert.Equal(t, "n1", again.Spec.NodeName)
}

func TestStatusWithoutSubresourceIsNotFound(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "cm"}}).Build()
	err := c.Status().Update(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "cm"}})
	assert.True(t, apierrors.IsNotFound(err), "got %v", err)
}

func TestInterceptorInjectsFaults(t *testing.T) {
	updates := 0
	c := fake.NewClientBuilder().
		WithObjects(pod("a", "p", "")).
		WithInterceptorFuncs(interceptor.Funcs{
			Update: func(ctx context.Context, c client.Client, obj client.Object, opts ...client.UpdateOption) error {
				updates++
				if updates == 1 {
					return apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, obj.GetName(), errors.New("injected"))
				}
				return c.Update(ctx, obj, opts...)
			},
			SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
				return errors.New("status is down")
			},
		}).
		Build()
	var p corev1.Pod
	require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: "a", Name: "p"}, &p))
	p.Labels = map[string]string{"x": "y"}
	assert.True(t, apierrors.IsConflict(c.Update(t.Context(), &p)))
	require.NoError(t, c.Update(t.Context(), &p))
	assert.EqualError(t, c.Status().Update(t.Context(), &p), "status is down")
	assert.Equal(t, 2, updates)
}

func TestDefaultStatusSubresourceForBuiltIns(t *testing.T) {
	p := pod("a", "p", "")
	c := fake.NewClientBuilder().WithObjects(p).Build()
	p.Status.Phase = corev1.PodFailed
	p.Spec.NodeName = "ignored"
	require.NoError(t, c.Status().Update(t.Context(), p))
	var got corev1.Pod
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(p), &got))
	assert.Equal(t, corev1.PodFailed, got.Status.Phase)
	assert.Empty(t, got.Spec.NodeName)
}

// Declaring a kind's status subresource adds it to the built-in ones, as
// controller-runtime's builder does: a test that declares its custom kind
// still writes a Pod's or a Job's status.
func TestWithStatusSubresourceKeepsBuiltIns(t *testing.T) {
	p := pod("a", "p", "")
	c := fake.NewClientBuilder().WithObjects(p).WithStatusSubresource(&corev1.ConfigMap{}).Build()
	p.Status.Phase = corev1.PodRunning
	p.Spec.NodeName = "ignored"
	require.NoError(t, c.Status().Update(t.Context(), p))
	var got corev1.Pod
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(p), &got))
	assert.Equal(t, corev1.PodRunning, got.Status.Phase)
	assert.Empty(t, got.Spec.NodeName, "a status write leaves the spec alone")
}

func TestWithRuntimeObjects(t *testing.T) {
	list := &corev1.PodList{Items: []corev1.Pod{*pod("a", "p2", ""), *pod("a", "p3", "")}}
	c, err := fake.NewClientBuilder().WithRuntimeObjects(pod("a", "p1", ""), list).BuildClient()
	require.NoError(t, err)
	var got corev1.PodList
	require.NoError(t, c.List(t.Context(), &got, client.InNamespace("a")))
	assert.Len(t, got.Items, 3, "the object and the list's two items")

	c, err = fake.NewClientBuilder().WithLists(list).BuildClient()
	require.NoError(t, err)
	require.NoError(t, c.List(t.Context(), &got, client.InNamespace("a")))
	assert.Len(t, got.Items, 2, "WithLists adds the items")

	_, err = fake.NewClientBuilder().WithRuntimeObjects(&metav1.Status{}).BuildClient()
	assert.ErrorContains(t, err, "fake: WithRuntimeObjects: *v1.Status is neither an object with metadata nor a list")
}

func TestNamespaceIsClusterScoped(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
	require.NoError(t, c.Create(t.Context(), ns))
	namespaced, err := c.IsObjectNamespaced(ns)
	require.NoError(t, err)
	assert.False(t, namespaced)
	namespaced, err = c.IsObjectNamespaced(&corev1.Pod{})
	require.NoError(t, err)
	assert.True(t, namespaced)
}

func TestConcurrentWrites(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "counter"}}).Build()
	ctx := t.Context()
	const workers, rounds = 8, 20
	done := make(chan int, workers)
	for range workers {
		go func() {
			wins := 0
			for range rounds {
				var cm corev1.ConfigMap
				if err := c.Get(ctx, client.ObjectKey{Namespace: "a", Name: "counter"}, &cm); err != nil {
					break
				}
				n, _ := strconv.Atoi(cm.Data["n"])
				cm.Data = map[string]string{"n": strconv.Itoa(n + 1)}
				if c.Update(ctx, &cm) == nil {
					wins++
				}
				_ = c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", GenerateName: "x-"}})
			}
			done <- wins
		}()
	}
	total := 0
	for range workers {
		total += <-done
	}
	var list corev1.ConfigMapList
	require.NoError(t, c.List(ctx, &list, client.InNamespace("a")))
	assert.Len(t, list.Items, 1+workers*rounds, "every generated name is unique")
	var cm corev1.ConfigMap
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "a", Name: "counter"}, &cm))
	assert.Positive(t, total)
	assert.Equal(t, strconv.Itoa(total), cm.Data["n"], "no update was lost: stale ones were rejected with a conflict")
}
