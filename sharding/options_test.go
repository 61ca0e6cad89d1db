package sharding_test

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/sharding"
)

type notInScheme struct{ corev1.ConfigMap }

func TestNewRejectsBadOptions(t *testing.T) {
	c := newFake(t, nil)
	tests := []struct {
		name   string
		mutate func(*sharding.Options)
		want   string
	}{
		{"ring not a label value", func(o *sharding.Options) { o.Ring = "Bad_Ring!" }, `ring "Bad_Ring!" is not a valid label value`},
		{"ring too long", func(o *sharding.Options) { o.Ring = string(make([]byte, 70)) }, "is not a valid label value"},
		{"no ring", func(o *sharding.Options) { o.Ring = "" }, "Ring is required"},
		{"no kinds", func(o *sharding.Options) { o.Objects = nil }, "Objects must name at least one sharded kind"},
		{"renew deadline not below lease duration", func(o *sharding.Options) { o.RenewDeadline = o.LeaseDuration }, "LeaseDuration 15s must be greater than RenewDeadline 15s"},
		{"fractional lease below renew deadline", func(o *sharding.Options) {
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 1100*time.Millisecond, 1500*time.Millisecond, 100*time.Millisecond
		}, "LeaseDuration 1.1s must be greater than RenewDeadline 1.5s"},
		{"renew deadline not above jittered retry", func(o *sharding.Options) { o.RetryPeriod = 9 * time.Second }, "RenewDeadline 10s must be greater than 1.2*RetryPeriod (10.8s)"},
		{"bad shard", func(o *sharding.Options) { o.Shard = "UPPER" }, `shard "UPPER"`},
		{"service and url", func(o *sharding.Options) {
			o.Webhook.URL = "https://x"
			o.Webhook.Service = &admissionService
		}, "exclusive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options("a")
			tt.mutate(&o)
			_, err := sharding.New(c, o)
			require.Error(t, err)
			assert.ErrorIs(t, err, sharding.ErrInvalidOptions)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestNewRejectsKindNotInScheme(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).Build()
	o := options("a")
	o.Objects = []client.Object{&notInScheme{}}
	_, err := sharding.New(c, o)
	require.ErrorIs(t, err, sharding.ErrNotInScheme)
	assert.Contains(t, err.Error(), "notInScheme")
}

func TestDefaultShardNameIsALabelValue(t *testing.T) {
	o := options("")
	r, err := sharding.New(newFake(t, nil), o)
	require.NoError(t, err)
	assert.NotEmpty(t, r.Shard())
	r2, err := sharding.New(newFake(t, nil), options(""))
	require.NoError(t, err)
	assert.NotEqual(t, r.Shard(), r2.Shard(), "a new name per process")
}

func TestConfigureCache(t *testing.T) {
	r := newRing(t, newFake(t, nil), "a")
	user := &corev1.ConfigMap{}
	co := cache.Options{ByObject: map[client.Object]cache.ByObject{
		user: {Label: labels.SelectorFromSet(labels.Set{"app": "x"})},
	}}
	orig := co.ByObject
	require.NoError(t, r.ConfigureCache(&co))
	require.Len(t, co.ByObject, 1, "the user's entry for the kind is extended, not doubled")
	sel := co.ByObject[user].Label
	assert.True(t, sel.Matches(labels.Set{"app": "x", shardKey: "a"}))
	assert.False(t, sel.Matches(labels.Set{"app": "x", shardKey: "b"}))
	assert.False(t, sel.Matches(labels.Set{shardKey: "a"}), "the user's requirement stays")
	assert.True(t, orig[user].Label.Matches(labels.Set{"app": "x"}), "the caller's map is not changed")
	assert.Len(t, orig, 1)

	// Default selector without a ByObject entry.
	co = cache.Options{DefaultLabelSelector: labels.SelectorFromSet(labels.Set{"team": "t"})}
	require.NoError(t, r.ConfigureCache(&co))
	require.Len(t, co.ByObject, 1)
	for _, bo := range co.ByObject {
		assert.True(t, bo.Label.Matches(labels.Set{"team": "t", shardKey: "a"}))
		assert.False(t, bo.Label.Matches(labels.Set{shardKey: "a"}))
	}
}

func TestTwoRingsInOneManager(t *testing.T) {
	c := newFake(t, nil)
	reg := prometheus.NewRegistry()
	first := newRing(t, c, "a", func(o *sharding.Options) { o.Metrics = reg })
	co := cache.Options{}
	require.NoError(t, first.ConfigureCache(&co))

	// The same registry: the second ring's metrics collide.
	_, err := sharding.New(c, func() sharding.Options { o := options("a"); o.Ring = "other"; o.Metrics = reg; return o }())
	require.ErrorIs(t, err, sharding.ErrOtherRing)

	// The same cache options: the kind is already sharded.
	second := newRing(t, c, "a", func(o *sharding.Options) { o.Ring = "other" })
	err = second.ConfigureCache(&co)
	require.ErrorIs(t, err, sharding.ErrOtherRing)
	assert.Contains(t, err.Error(), "ConfigMap is cached by "+shardKey)
}

func TestReconcilerRejectsUnshardedKind(t *testing.T) {
	r := newRing(t, newFake(t, nil), "a")
	_, err := r.Reconciler(&corev1.Secret{}, nil)
	require.Error(t, err)
	assert.True(t, errors.Is(err, sharding.ErrInvalidOptions))
	assert.Contains(t, err.Error(), "Secret is not one of Options.Objects")
}

var admissionService = admissionregistrationv1.ServiceReference{Namespace: "ops", Name: "op"}
