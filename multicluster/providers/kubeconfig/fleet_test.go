package kubeconfig_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/multicluster/providers/kubeconfig"
)

// eventually polls cond until it holds or ctx ends (a hang guard, not a
// latency bound): the fleet has no change notification to wait on.
func eventually(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// The provider against the real Sink: a Secret's cluster is served by the
// fleet (a cache read through its client works) and leaves with the
// Secret.
func TestFleetServesSecretClusters(t *testing.T) {
	const ns = "fleet-e2e"
	c, ctx := setup(t, ns)
	p, err := kubeconfig.New(restConfig, kubeconfig.Options{Namespace: ns, Logger: testenv.Logger()})
	require.NoError(t, err)
	f, err := multicluster.NewFleet(multicluster.Options{Provider: p, Logger: testenv.Logger()})
	require.NoError(t, err)
	stop := testenv.Start(f)

	s := secret(ns, "member", selected, kubeconfigOf(t, "127.0.0.1"))
	require.NoError(t, c.Create(ctx, s))
	require.NoError(t, eventually(ctx, func() bool { return slices.Contains(f.Clusters(), "member") }))
	cl, err := f.GetCluster(ctx, "member")
	require.NoError(t, err)
	var def corev1.Namespace
	require.NoError(t, cl.GetClient().Get(ctx, types.NamespacedName{Name: "default"}, &def))

	require.NoError(t, c.Delete(ctx, s))
	require.NoError(t, eventually(ctx, func() bool { return !slices.Contains(f.Clusters(), "member") }))
	require.NoError(t, stop())
}
