package sharding_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/sharding"
)

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("/ConfigMap/default/cm-%05d", i)
	}
	return out
}

func TestHashRingSameInAnyOrder(t *testing.T) {
	a := sharding.NewHashRing([]string{"a", "b", "c"}, 0)
	b := sharding.NewHashRing([]string{"c", "a", "b", "a"}, 0)
	assert.Equal(t, []string{"a", "b", "c"}, b.Shards())
	for _, k := range keys(2000) {
		require.Equal(t, a.Shard(k), b.Shard(k), k)
	}
}

func TestHashRingEmpty(t *testing.T) {
	r := sharding.NewHashRing(nil, 0)
	assert.Equal(t, "", r.Shard("x"))
	assert.Equal(t, 0, r.Len())
	assert.False(t, r.Has("a"))
}

func TestHashRingBalance(t *testing.T) {
	ks := keys(30000)
	r := sharding.NewHashRing([]string{"shard-a", "shard-b", "shard-c"}, 0)
	count := map[string]int{}
	for _, k := range ks {
		count[r.Shard(k)]++
	}
	require.Len(t, count, 3)
	for s, n := range count {
		share := float64(n) / float64(len(ks))
		assert.InDelta(t, 1.0/3, share, 0.07, "share of %s", s)
	}
}

func TestHashRingJoinMovesOnlyToNewShard(t *testing.T) {
	ks := keys(30000)
	three := sharding.NewHashRing([]string{"shard-a", "shard-b", "shard-c"}, 0)
	four := sharding.NewHashRing([]string{"shard-a", "shard-b", "shard-c", "shard-d"}, 0)
	moved := 0
	for _, k := range ks {
		before, after := three.Shard(k), four.Shard(k)
		if before != after {
			moved++
			require.Equal(t, "shard-d", after, "a key may move only to the new shard")
		}
	}
	assert.InDelta(t, 0.25, float64(moved)/float64(len(ks)), 0.07)
}

func TestHashRingLeaveMovesOnlyItsKeys(t *testing.T) {
	ks := keys(30000)
	four := sharding.NewHashRing([]string{"shard-a", "shard-b", "shard-c", "shard-d"}, 0)
	three := sharding.NewHashRing([]string{"shard-a", "shard-c", "shard-d"}, 0)
	for _, k := range ks {
		before, after := four.Shard(k), three.Shard(k)
		if before != "shard-b" {
			require.Equal(t, before, after, "only shard-b's keys move")
		} else {
			require.NotEqual(t, "shard-b", after)
		}
	}
}

func ExampleHashRing() {
	r := sharding.NewHashRing([]string{"shard-0", "shard-1"}, 0)
	fmt.Println(r.Shards(), r.Has("shard-1"), r.Shard("apps/Deployment/default/web") != "")
	// Output: [shard-0 shard-1] true true
}
