package multicluster

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/sharding"
)

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

func shares(p map[string]string) map[string]int {
	load := map[string]int{}
	for _, s := range p {
		load[s]++
	}
	return load
}

func TestPlace(t *testing.T) {
	tests := []struct {
		name     string
		clusters []string
		shards   []string
		want     map[string]string // nil: check only the invariants
	}{
		{name: "no shards", clusters: []string{"a", "b"}, shards: nil, want: map[string]string{}},
		{name: "no clusters", clusters: nil, shards: []string{"s1"}, want: map[string]string{}},
		{name: "one shard takes all", clusters: []string{"", "a", "b"}, shards: []string{"s1"},
			want: map[string]string{"": "s1", "a": "s1", "b": "s1"}},
		{name: "as many clusters as shards: one each", clusters: []string{"a", "b", "c"}, shards: []string{"s1", "s2", "s3"}},
		{name: "300 on 3", clusters: names("cluster-", 300), shards: []string{"shard-a", "shard-b", "shard-c"}},
		{name: "duplicates count once", clusters: []string{"a", "a", "b"}, shards: []string{"s2", "s1", "s1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := place(tt.clusters, tt.shards)
			if tt.want != nil {
				assert.Equal(t, tt.want, got)
				return
			}
			clusters, shards := sortedSet(tt.clusters), sortedSet(tt.shards)
			require.Len(t, got, len(clusters), "every cluster has a shard")
			for _, c := range clusters {
				assert.Contains(t, shards, got[c])
			}
			room := max((len(clusters)+len(shards)-1)/len(shards), int(LoadFactor*float64(len(clusters))/float64(len(shards))))
			for s, n := range shares(got) {
				assert.LessOrEqual(t, n, room, "shard %s", s)
			}
			// Order and duplicates do not matter.
			rev := slices.Clone(tt.clusters)
			slices.Reverse(rev)
			assert.Equal(t, got, place(append(rev, rev...), append(tt.shards, tt.shards[0])))
		})
	}
}

// TestPlaceBalanceAndMoves: on sets of 300 names, the largest share is
// at most LoadFactor times the mean, and a scale from 3 to 4 shards moves
// at most 30% of the clusters (25% is the minimum).
func TestPlaceBalanceAndMoves(t *testing.T) {
	worst, sum := 0.0, 0.0
	const sets = 50
	for i := range sets {
		clusters := names(fmt.Sprintf("fleet%d-cluster-", i), 300)
		s3 := []string{fmt.Sprintf("r%d-a", i), fmt.Sprintf("r%d-b", i), fmt.Sprintf("r%d-c", i)}
		s4 := append(slices.Clone(s3), fmt.Sprintf("r%d-d", i))
		p3, p4 := place(clusters, s3), place(clusters, s4)
		for _, c := range []struct {
			p map[string]string
			n int
		}{{p3, 3}, {p4, 4}} {
			for s, n := range shares(c.p) {
				assert.LessOrEqual(t, float64(n), LoadFactor*300/float64(c.n), "set %d: shard %s on %d shards", i, s, c.n)
			}
		}
		moved := 0
		for _, c := range clusters {
			if p3[c] != p4[c] {
				moved++
			}
		}
		f := float64(moved) / 300
		worst, sum = max(worst, f), sum+f
		assert.LessOrEqual(t, f, 0.30, "set %d: 3->4 moved %d of 300", i, moved)
	}
	t.Logf("3->4 over %d sets of 300 clusters: %.1f%% moved on average, %.1f%% at worst", sets, 100*sum/sets, 100*worst)
}

func TestViewHash(t *testing.T) {
	a := viewHash([]string{"s1", "s2"}, []string{"", "x", "y"})
	assert.Equal(t, a, viewHash([]string{"s2", "s1", "s1"}, []string{"y", "x", ""}), "order and duplicates do not matter")
	assert.NotEqual(t, a, viewHash([]string{"s1", "s2"}, []string{"", "x"}), "clusters are part of the view")
	assert.NotEqual(t, a, viewHash([]string{"s1"}, []string{"", "x", "y"}), "shards are part of the view")
	assert.NotEqual(t, viewHash([]string{"ab"}, []string{"c"}), viewHash([]string{"a"}, []string{"bc"}), "the sets do not run together")
	assert.Equal(t, a, hashOf(published(a, 7)))
	assert.NotEqual(t, published(a, 1), published(a, 2))
}

func TestDecide(t *testing.T) {
	known := []string{"", "a", "b", "c"}
	two := []string{"s1", "s2"}
	p2 := place(known, two)
	p1 := place(known, []string{"s1"})
	h2, h1 := viewHash(two, known), viewHash([]string{"s1"}, known)
	views := map[string]map[string]string{h2: p2, h1: p1}
	resolve := func(h string) (map[string]string, bool) { p, ok := views[h]; return p, ok }
	mine := func(p map[string]string, shard string) []string {
		var out []string
		for _, c := range known {
			if p[c] == shard {
				out = append(out, c)
			}
		}
		slices.Sort(out)
		return out
	}
	all := func(p map[string]string, shard string) map[string]int {
		out := map[string]int{}
		for _, c := range mine(p, shard) {
			out[c] = 1
		}
		return out
	}
	require.NotEmpty(t, mine(p2, "s1"))
	require.NotEmpty(t, mine(p2, "s2"), "the test needs both shards to own something")
	d2 := published(h2, 2)
	tests := []struct {
		name string
		give stepInput
		want decision
	}{
		{
			name: "not a member: drop everything",
			give: stepInput{self: "s1", term: 1, admitting: true, members: []sharding.Member{{Shard: "s2", View: d2}},
				known: known, held: map[string]int{"a": 1, "": 1}, placement: p2, desired: d2},
			want: decision{drop: []string{"", "a"}},
		},
		{
			name: "not admitting: drop everything, engage nothing",
			give: stepInput{self: "s1", term: 1, members: []sharding.Member{{Shard: "s1", View: d2}, {Shard: "s2", View: d2}},
				known: known, held: all(p2, "s1"), placement: p2, desired: d2},
			want: decision{drop: mine(p2, "s1")},
		},
		{
			name: "own Lease does not show the view yet: drop what moved, engage nothing",
			give: stepInput{self: "s1", term: 1, admitting: true,
				members: []sharding.Member{{Shard: "s1", View: published(h1, 1)}, {Shard: "s2"}},
				known:   known, held: all(p1, "s1"), placement: p2, desired: d2},
			want: decision{drop: mine(p2, "s2")},
		},
		{
			name: "a joiner waits while the old owner shows a view that gives it the clusters",
			give: stepInput{self: "s2", term: 1, admitting: true,
				members: []sharding.Member{{Shard: "s1", View: published(h1, 1)}, {Shard: "s2", View: d2}},
				known:   known, held: map[string]int{}, placement: p2, desired: d2},
			want: decision{},
		},
		{
			name: "the joiner engages once the old owner shows the new view",
			give: stepInput{self: "s2", term: 1, admitting: true,
				members: []sharding.Member{{Shard: "s1", View: published(h2, 9)}, {Shard: "s2", View: d2}},
				known:   known, held: map[string]int{}, placement: p2, desired: d2},
			want: decision{engage: mine(p2, "s2")},
		},
		{
			name: "a member showing no view holds nothing and blocks nothing",
			give: stepInput{self: "s1", term: 1, admitting: true,
				members: []sharding.Member{{Shard: "s1", View: d2}, {Shard: "s2"}},
				known:   known, held: map[string]int{}, placement: p2, desired: d2},
			want: decision{engage: mine(p2, "s1")},
		},
		{
			name: "a view this replica cannot resolve blocks every engagement",
			give: stepInput{self: "s1", term: 1, admitting: true,
				members: []sharding.Member{{Shard: "s1", View: d2}, {Shard: "s2", View: "feedbeef.1"}},
				known:   known, held: map[string]int{}, placement: p2, desired: d2},
			want: decision{},
		},
		{
			name: "held in an earlier term: drop and engage again",
			give: stepInput{self: "s1", term: 2, admitting: true,
				members: []sharding.Member{{Shard: "s1", View: d2}, {Shard: "s2", View: d2}},
				known:   known, held: all(p2, "s1"), placement: p2, desired: d2},
			want: decision{drop: mine(p2, "s1"), engage: mine(p2, "s1")},
		},
		{
			name: "a cluster that left is dropped",
			give: stepInput{self: "s1", term: 1, admitting: true,
				members: []sharding.Member{{Shard: "s1", View: d2}, {Shard: "s2", View: d2}},
				known:   known, held: map[string]int{"gone": 1}, placement: p2, desired: d2},
			want: decision{drop: []string{"gone"}, engage: mine(p2, "s1")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.give.resolve = resolve
			got := decide(tt.give)
			assert.Equal(t, tt.want.drop, got.drop, "drop")
			assert.Equal(t, tt.want.engage, got.engage, "engage")
		})
	}
}

// FuzzPlace checks place's invariants on arbitrary names: every cluster
// gets one of the shards, no shard more than its room, and the result does
// not depend on order or duplicates.
func FuzzPlace(f *testing.F) {
	f.Add("a,b,c,d,e", "s1,s2", uint8(0))
	f.Add(",x,,y", "only", uint8(3))
	f.Fuzz(func(t *testing.T, clusterList, shardList string, rot uint8) {
		clusters := strings.Split(clusterList, ",")
		shards := strings.Split(shardList, ",")
		got := place(clusters, shards)
		cs, ss := sortedSet(clusters), sortedSet(shards)
		require.Len(t, got, len(cs))
		room := max((len(cs)+len(ss)-1)/len(ss), int(LoadFactor*float64(len(cs))/float64(len(ss))))
		for s, n := range shares(got) {
			require.Contains(t, ss, s)
			require.LessOrEqual(t, n, room)
		}
		k := int(rot) % len(clusters)
		rotated := append(slices.Clone(clusters[k:]), clusters[:k]...)
		rev := slices.Clone(shards)
		slices.Reverse(rev)
		require.Equal(t, got, place(append(rotated, clusters...), rev))
	})
}
