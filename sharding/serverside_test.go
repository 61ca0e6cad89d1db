package sharding_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/sharding"
)

func TestServerSideOptions(t *testing.T) {
	c := newFake(t, nil)
	tests := []struct {
		name   string
		mutate func(*sharding.Options)
		want   string // "" for valid
	}{
		{"uid by default", func(o *sharding.Options) { o.Mode = sharding.ServerSide }, ""},
		{"namespace with children", func(o *sharding.Options) {
			o.Mode, o.Key, o.Controlled = sharding.ServerSide, sharding.ShardByNamespace, []client.Object{&corev1.Secret{}}
		}, ""},
		{"uid with children", func(o *sharding.Options) {
			o.Mode, o.Controlled = sharding.ServerSide, []client.Object{&corev1.Secret{}}
		}, "Controlled kinds need Key ShardByNamespace"},
		{"unknown key", func(o *sharding.Options) { o.Mode, o.Key = sharding.ServerSide, "name" }, `Key "name" is neither "uid" nor "namespace"`},
		{"key in labels mode", func(o *sharding.Options) { o.Key = sharding.ShardByUID }, `Key "uid" is for Mode ServerSide`},
		{"unknown mode", func(o *sharding.Options) { o.Mode = 7 }, "Mode(7) is not a mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options("a")
			tt.mutate(&o)
			_, err := sharding.New(c, o)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, sharding.ErrInvalidOptions)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

// The fake client, like an API server without the ShardedListAndWatch
// gate, ignores shardSelector: Start refuses to run, naming the kind and
// the gate, before it takes a Lease.
func TestServerSideStartRefusesAServerWithoutTheGate(t *testing.T) {
	c := newFake(t, nil)
	r := newRing(t, c, "a", func(o *sharding.Options) { o.Mode = sharding.ServerSide })
	err := r.Start(context.Background())
	require.ErrorIs(t, err, sharding.ErrServerSideUnsupported)
	assert.ErrorContains(t, err, "ConfigMap")
	assert.ErrorContains(t, err, "ShardedListAndWatch")
	assert.Empty(t, r.Shards(), "no membership read")
}

func TestServerSideConfigureCache(t *testing.T) {
	c := newFake(t, nil)
	r := newRing(t, c, "a", func(o *sharding.Options) { o.Mode = sharding.ServerSide })
	co := cache.Options{}
	require.NoError(t, r.ConfigureCache(&co))
	require.Len(t, co.ByObject, 1)
	for obj, bo := range co.ByObject {
		assert.IsType(t, &corev1.ConfigMap{}, obj)
		assert.Nil(t, bo.Label, "no label selector in ServerSide mode")
		require.NotNil(t, bo.ShardSelector)
		sel, gen, changed := bo.ShardSelector.Shard()
		assert.Equal(t, "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001')", sel,
			"a shard that holds nothing lists (almost) nothing")
		assert.Equal(t, uint64(1), gen)
		assert.NotNil(t, changed)
	}
	// A second ring on the same kind is refused.
	other := newRing(t, c, "b", func(o *sharding.Options) { o.Mode = sharding.ServerSide; o.Ring = "other" })
	assert.ErrorIs(t, other.ConfigureCache(&co), sharding.ErrOtherRing)
	assert.Equal(t, "none", r.Ranges())
	assert.Empty(t, newRing(t, c, "c").Ranges(), "Labels mode")
}

func ExampleMode() {
	o := sharding.Options{
		Ring:    "my-operator",
		Objects: []client.Object{&corev1.ConfigMap{}},
		Mode:    sharding.ServerSide,
		Key:     sharding.ShardByNamespace, // children follow their owners
	}
	fmt.Println(o.Mode, o.Key)
	// Output: server-side namespace
}
