package client_test

import (
	"context"
	"log/slog"
	"strconv"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv1ac "k8s.io/client-go/applyconfigurations/autoscaling/v1"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
)

// TestScaleApply applies the scale subresource of a Deployment with an
// autoscaling/v1 Scale configuration (SubResourceBody), against the real
// API server.
func TestScaleApply(t *testing.T) {
	ctx := t.Context()
	c, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := newNamespace(t, ctx, c)
	d := newDeployment(ns, "scaled")
	require.NoError(t, c.Create(ctx, d))

	scale := autoscalingv1ac.Scale().WithName("scaled").WithNamespace(ns).WithSpec(autoscalingv1ac.ScaleSpec().WithReplicas(4))
	scale.WithAPIVersion("autoscaling/v1").WithKind("Scale")
	require.NoError(t, c.SubResource("scale").Apply(ctx, appsv1ac.Deployment("scaled", ns),
		&client.SubResourceApplyOptions{SubResourceBody: scale}, client.FieldOwner("autoscaler"), client.ForceOwnership))
	require.NotNil(t, scale.Spec.Replicas)
	assert.Equal(t, int32(4), *scale.Spec.Replicas, "the answer is decoded into the body")
	var got appsv1.Deployment
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(d), &got))
	assert.Equal(t, int32(4), *got.Spec.Replicas)
}

// TestCachedStatusApplyReadsOwnWrite: after a Status().Apply through the
// cached client, a Get never returns an older resourceVersion.
func TestCachedStatusApplyReadsOwnWrite(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	informers, err := cache.New(restConfig, cache.Options{Logger: logr.FromSlogHandler(slog.DiscardHandler)})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- informers.Start(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	c, err := client.New(restConfig, client.Options{Cache: &client.CacheOptions{Reader: informers, Progress: informers, Shared: informers}, FieldOwner: "status-writer"})
	require.NoError(t, err)
	live, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := newNamespace(t, ctx, live)
	d := newDeployment(ns, "cached-status")
	require.NoError(t, c.Create(ctx, d))

	for i := 1; i <= 10; i++ {
		ac := appsv1ac.Deployment("cached-status", ns).WithStatus(appsv1ac.DeploymentStatus().WithObservedGeneration(int64(i)))
		require.NoError(t, c.Status().Apply(ctx, ac))
		written, err := strconv.ParseUint(*ac.ResourceVersion, 10, 64)
		require.NoError(t, err)
		var got appsv1.Deployment
		require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(d), &got))
		seen, err := strconv.ParseUint(got.ResourceVersion, 10, 64)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, seen, written, "read %d went back in time", i)
		assert.Equal(t, int64(i), got.Status.ObservedGeneration)
	}
}
