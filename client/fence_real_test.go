package client_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
)

// lostFence is a hold that ended: it refuses every write.
var lostFence = client.FenceFunc(func() (time.Duration, error) {
	return 0, fmt.Errorf("lease ops/my-operator: %w: the hold ended 3s ago", client.ErrLeaseLost)
})

// isWrite matches the requests that change something.
func isWrite(r faultproxy.Record) bool { return r.Method != http.MethodGet }

// TestFencedWritesNeverReachTheServer sends every kind of write, through
// the live client and each wrapper, with a fence that refuses: each fails
// with ErrLeaseLost naming the object, no write request reaches the
// proxy in front of the API server, and the objects on the server are
// unchanged. Reads with the same context are not fenced.
func TestFencedWritesNeverReachTheServer(t *testing.T) {
	ctx := t.Context()
	admin, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := newNamespace(t, ctx, admin)
	cm := newConfigMap(ns, "fenced", map[string]string{"v": "1"})
	require.NoError(t, admin.Create(ctx, cm))
	dep := newDeployment(ns, "fenced")
	require.NoError(t, admin.Create(ctx, dep))

	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	defer p.Close()
	live, err := client.New(p.Config(), client.Options{FieldOwner: "fence-test"})
	require.NoError(t, err)
	// Resolve the kinds first (discovery is a read), so that the count
	// below starts from a warm client.
	require.NoError(t, live.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}))
	require.NoError(t, live.Get(ctx, client.ObjectKeyFromObject(dep), &appsv1.Deployment{}))

	clients := map[string]client.Client{
		"live":        live,
		"namespaced":  client.NewNamespacedClient(live, ns),
		"field owner": client.WithFieldOwner(live, "other"),
		"dry run":     client.NewDryRunClient(live),
	}
	cached, err := client.NewCachedForTest(live, client.CacheOptions{Reader: live})
	require.NoError(t, err)
	clients["cached"] = cached

	fenced := client.WithFence(ctx, lostFence)
	since := time.Now()
	for name, c := range clients {
		t.Run(name, func(t *testing.T) {
			obj := func() *corev1.ConfigMap {
				got := &corev1.ConfigMap{}
				require.NoError(t, c.Get(fenced, client.ObjectKeyFromObject(cm), got), "reads are not fenced")
				return got
			}
			var list corev1.ConfigMapList
			require.NoError(t, c.List(fenced, &list, client.InNamespace(ns)), "reads are not fenced")

			writes := map[string]func() error{
				"create": func() error { return c.Create(fenced, newConfigMap(ns, "new-"+randName("x"), nil)) },
				"update": func() error { o := obj(); o.Data["v"] = "2"; return c.Update(fenced, o) },
				"patch": func() error {
					return c.Patch(fenced, obj(), client.RawPatch(types.MergePatchType, []byte(`{"data":{"v":"3"}}`)))
				},
				"apply": func() error {
					return c.Apply(fenced, corev1ac.ConfigMap(cm.Name, ns).WithData(map[string]string{"v": "4"}), client.ForceOwnership)
				},
				"delete":        func() error { return c.Delete(fenced, obj()) },
				"delete all of": func() error { return c.DeleteAllOf(fenced, &corev1.ConfigMap{}, client.InNamespace(ns)) },
				"status update": func() error { return c.Status().Update(fenced, dep.DeepCopy()) },
				"status patch": func() error {
					return c.Status().Patch(fenced, dep.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"status":{"replicas":5}}`)))
				},
				"status apply": func() error {
					return c.Status().Apply(fenced, corev1ac.ConfigMap(cm.Name, ns).WithData(map[string]string{"v": "5"}))
				},
				"metadata patch": func() error {
					m := &metav1.PartialObjectMetadata{}
					m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
					m.SetNamespace(ns)
					m.SetName(cm.Name)
					return c.Patch(fenced, m, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`)))
				},
				"scale update": func() error {
					return c.SubResource("scale").Update(fenced, dep.DeepCopy(), client.WithSubResourceBody(
						&autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: dep.Name}}))
				},
			}
			for verb, write := range writes {
				err := write()
				require.ErrorIs(t, err, client.ErrLeaseLost, "%s", verb)
				assert.Contains(t, err.Error(), "lease ops/my-operator", "%s: the error names the lease", verb)
				if verb != "create" && verb != "delete all of" {
					assert.Contains(t, err.Error(), ns+"/", "%s: the error names the object", verb)
				}
				assert.Contains(t, err.Error(), "Kind=", "%s: the error names the kind", verb)
			}
		})
	}
	assert.Zero(t, p.Count(since, isWrite), "no write request reached the server")

	var got corev1.ConfigMap
	require.NoError(t, admin.Get(ctx, client.ObjectKeyFromObject(cm), &got))
	assert.Equal(t, cm.ResourceVersion, got.ResourceVersion, "the object is unchanged on the server")
	assert.Equal(t, map[string]string{"v": "1"}, got.Data)
	var gotDep appsv1.Deployment
	require.NoError(t, admin.Get(ctx, client.ObjectKeyFromObject(dep), &gotDep))
	assert.Equal(t, dep.ResourceVersion, gotDep.ResourceVersion)
	var all corev1.ConfigMapList
	require.NoError(t, admin.List(ctx, &all, client.InNamespace(ns)))
	for _, c := range all.Items {
		assert.NotContains(t, c.Name, "new-", "no object was created")
	}

	// The same writes with a valid fence go through: the fence changes
	// nothing while the hold is valid.
	valid := client.WithFence(ctx, client.FenceFunc(func() (time.Duration, error) { return time.Minute, nil }))
	got.Data["v"] = "2"
	require.NoError(t, live.Update(valid, &got))
	assert.NotEqual(t, cm.ResourceVersion, got.ResourceVersion)
}

// TestFenceCancelsARequestOnTheWire: an update whose answer does not come
// (the proxy holds it) is cancelled when the hold ends, and its error
// wraps ErrLeaseLost; the object is unchanged.
func TestFenceCancelsARequestOnTheWire(t *testing.T) {
	ctx := t.Context()
	admin, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := newNamespace(t, ctx, admin)
	cm := newConfigMap(ns, "held", map[string]string{"v": "1"})
	require.NoError(t, admin.Create(ctx, cm))

	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	defer p.Close()
	live, err := client.New(p.Config(), client.Options{})
	require.NoError(t, err)
	got := &corev1.ConfigMap{}
	require.NoError(t, live.Get(ctx, client.ObjectKeyFromObject(cm), got))
	defer p.AddRule(faultproxy.Rule{Match: func(r *http.Request) bool { return r.Method == http.MethodPut }, Hold: true})()

	const hold = 500 * time.Millisecond
	end := time.Now().Add(hold)
	fenced := client.WithFence(ctx, client.FenceFunc(func() (time.Duration, error) {
		if left := time.Until(end); left > 0 {
			return left, nil
		}
		return 0, fmt.Errorf("lease ops/held: %w", client.ErrLeaseLost)
	}))
	start := time.Now()
	got.Data["v"] = "2"
	err = live.Update(fenced, got)
	took := time.Since(start)
	require.ErrorIs(t, err, client.ErrLeaseLost)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "update v1, Kind=ConfigMap "+ns+"/held")
	assert.GreaterOrEqual(t, took, hold/2, "the request was sent and waited")
	t.Logf("the held update was cancelled %s after it was sent (hold %s)", took, hold)

	var now corev1.ConfigMap
	require.NoError(t, admin.Get(ctx, client.ObjectKeyFromObject(cm), &now))
	assert.Equal(t, map[string]string{"v": "1"}, now.Data, "the held request never reached the server")
}
