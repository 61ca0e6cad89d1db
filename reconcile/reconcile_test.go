package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/reconcile"
)

func TestTerminalError(t *testing.T) {
	base := errors.New("spec.image is empty")
	tests := []struct {
		name string
		give error
		want bool
	}{
		{name: "nil", give: nil, want: false},
		{name: "plain", give: base, want: false},
		{name: "terminal", give: reconcile.TerminalError(base), want: true},
		{name: "wrapped terminal", give: fmt.Errorf("app default/web: %w", reconcile.TerminalError(base)), want: true},
		{name: "terminal of nil", give: reconcile.TerminalError(nil), want: true},
		{name: "errorf", give: reconcile.Errorf("bad %s", "x"), want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, reconcile.IsTerminal(tt.give))
			assert.Equal(t, tt.want, errors.Is(tt.give, reconcile.TerminalError(nil)))
		})
	}
	assert.ErrorIs(t, reconcile.TerminalError(base), base, "the cause stays reachable")
	assert.Equal(t, "terminal error: spec.image is empty", reconcile.TerminalError(base).Error())
}

func TestRequestString(t *testing.T) {
	assert.Equal(t, "ns/a", reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}.String())
	assert.Equal(t, "node-1", reconcile.Request{NamespacedName: types.NamespacedName{Name: "node-1"}}.String())
	assert.Equal(t, "east/ns/a", reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}, Cluster: "east"}.String())
	assert.Equal(t, "east//node-1", reconcile.Request{NamespacedName: types.NamespacedName{Name: "node-1"}, Cluster: "east"}.String())
}

func TestClusterFromContext(t *testing.T) {
	assert.Equal(t, "", reconcile.ClusterFromContext(context.Background()), "no cluster: the manager's own")
	assert.Equal(t, "east", reconcile.ClusterFromContext(reconcile.WithCluster(context.Background(), "east")))
}

func ExampleRequest_String() {
	local := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "web"}}
	remote := local
	remote.Cluster = "eu-1"
	fmt.Println(local)
	fmt.Println(remote)
	// Output:
	// shop/web
	// eu-1/shop/web
}

func TestResult(t *testing.T) {
	isZero := func(r reconcile.Result) bool { return r.IsZero() }
	assert.True(t, isZero(reconcile.Result{}))
	assert.False(t, isZero(reconcile.Result{RequeueAfter: time.Second}))
	assert.False(t, isZero(reconcile.Result{Requeue: true})) //nolint:staticcheck // the deprecated field under test
	zero := 0
	assert.False(t, isZero(reconcile.Result{Priority: &zero}), "a set priority, even 0, is something")
	var step *reconcile.Result // a reconcile step that had nothing to say
	assert.True(t, step.IsZero(), "a nil *Result is zero, as controller-runtime's")
}

func TestTypedFunc(t *testing.T) {
	type key struct{ cluster, name string }
	var got key
	var r reconcile.TypedReconciler[key] = reconcile.TypedFunc[key](func(_ context.Context, k key) (reconcile.Result, error) {
		got = k
		return reconcile.Result{RequeueAfter: time.Second}, nil
	})
	res, err := r.Reconcile(context.Background(), key{"east", "web"})
	assert.NoError(t, err)
	assert.Equal(t, key{"east", "web"}, got)
	assert.Equal(t, time.Second, res.RequeueAfter)
	var _ reconcile.Reconciler = reconcile.TypedFunc[reconcile.Request](nil) // one type, two names
}

func ExampleFunc() {
	r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		fmt.Println("reconciling", req)
		return reconcile.Result{RequeueAfter: time.Minute}, nil
	})
	res, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "web"}})
	fmt.Println(res.RequeueAfter, err)
	// Output:
	// reconciling default/web
	// 1m0s <nil>
}

func ExampleTerminalError() {
	err := fmt.Errorf("app default/web: %w", reconcile.TerminalError(errors.New("spec.port 70000 is out of range")))
	fmt.Println(reconcile.IsTerminal(err))
	fmt.Println(err)
	// Output:
	// true
	// app default/web: terminal error: spec.port 70000 is out of range
}

// TestRequestHash: equal Requests hash equal; the same strings in other
// fields, or a cluster added, hash apart; the seed matters.
func TestRequestHash(t *testing.T) {
	seed := maphash.MakeSeed()
	a := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}
	b := a
	assert.Equal(t, a.Hash(seed), b.Hash(seed))
	swapped := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "a", Name: "ns"}}
	assert.NotEqual(t, a.Hash(seed), swapped.Hash(seed))
	inCluster := a
	inCluster.Cluster = "east"
	assert.NotEqual(t, a.Hash(seed), inCluster.Hash(seed))
	assert.NotEqual(t, a.Hash(seed), a.Hash(maphash.MakeSeed()))
	// The upper halves (what the workqueue's index uses) of 10k distinct
	// Requests barely collide.
	seen := map[uint32]bool{}
	for i := range 10000 {
		r := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: fmt.Sprint("ns-", i%10), Name: fmt.Sprint("obj-", i)}}
		seen[uint32(r.Hash(seed)>>32)] = true
	}
	assert.Greater(t, len(seen), 9980)
}
