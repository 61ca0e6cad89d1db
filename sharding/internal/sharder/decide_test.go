package sharder

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

const (
	sk = "shard.sharding.kubeloop.dev/r"
	dk = "drain.sharding.kubeloop.dev/r"
)

func TestDecide(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_123)
	to := func(a action, shard string) move {
		return move{act: a, shard: shard, labels: map[string]any{sk: shard, dk: nil}}
	}
	base := input{want: "b", now: now, shardKey: sk, drainKey: dk}
	with := func(f func(*input)) input { in := base; f(&in); return in }
	tests := []struct {
		name string
		give input
		want move
	}{
		{name: "unassigned: assign", give: base, want: to(assign, "b")},
		{name: "unassigned in the drains-only pass: none", give: with(func(in *input) { in.drainsOnly = true }),
			want: move{act: none}},
		{name: "on its shard: none", give: with(func(in *input) { in.cur, in.alive = "b", true }),
			want: move{act: none, shard: "b"}},
		{name: "on its shard, draining: pending", give: with(func(in *input) { in.cur, in.alive, in.draining = "b", true, true }),
			want: move{act: none, shard: "b", pending: true}},
		{name: "drains-only pass, shard not alive: none", give: with(func(in *input) { in.cur, in.drainsOnly = "a", true }),
			want: move{act: none, shard: "a"}},
		{name: "drains-only pass, child: none", give: with(func(in *input) { in.cur, in.alive, in.controlled, in.drainsOnly = "a", true, true, true }),
			want: move{act: none, shard: "a"}},
		{name: "drains-only pass, draining already: none", give: with(func(in *input) { in.cur, in.alive, in.draining, in.drainsOnly = "a", true, true, true }),
			want: move{act: none, shard: "a"}},
		{name: "elsewhere, peer not read: read it", give: with(func(in *input) { in.cur = "a" }),
			want: move{act: readPeer}},
		{name: "shard gone: reassign", give: with(func(in *input) { in.cur, in.gone = "a", yes }),
			want: to(reassign, "b")},
		{name: "shard gone, child: reassign", give: with(func(in *input) { in.cur, in.gone, in.controlled = "a", yes, true }),
			want: to(reassign, "b")},
		{name: "shard not gone, not in the view (newer): none", give: with(func(in *input) { in.cur, in.gone = "a", no }),
			want: move{act: none, shard: "a"}},
		{name: "child, owner not read: read it", give: with(func(in *input) { in.cur, in.alive, in.gone, in.controlled = "a", true, no, true }),
			want: move{act: readOwner}},
		{name: "child, owner on its shard: child", give: with(func(in *input) {
			in.cur, in.alive, in.gone, in.controlled, in.ownerOn = "a", true, no, true, yes
		}), want: to(child, "b")},
		{name: "child, owner not there yet: pending", give: with(func(in *input) {
			in.cur, in.alive, in.gone, in.controlled, in.ownerOn = "a", true, no, true, no
		}), want: move{act: none, shard: "a", pending: true}},
		{name: "draining already: pending", give: with(func(in *input) { in.cur, in.alive, in.gone, in.draining = "a", true, no, true }),
			want: move{act: none, shard: "a", pending: true}},
		{name: "alive elsewhere: drain", give: with(func(in *input) { in.cur, in.alive, in.gone = "a", true, no }),
			want: move{act: drain, shard: "a", pending: true, labels: map[string]any{dk: "1700000000123"}}},
		{name: "alive elsewhere, drains-only pass: drain", give: with(func(in *input) { in.cur, in.alive, in.gone, in.drainsOnly = "a", true, no, true }),
			want: move{act: drain, shard: "a", pending: true, labels: map[string]any{dk: "1700000000123"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, decide(tt.give))
		})
	}
}

// Whatever the object, once decide's reads are answered (each at most
// once) it returns a move to make or none: place's loop ends.
func TestDecideAsksEachReadAtMostOnce(t *testing.T) {
	for _, cur := range []string{"", "a", "b"} {
		for flags := range 16 {
			for _, answer := range []tri{yes, no} {
				in := input{cur: cur, want: "b", alive: flags&1 != 0, draining: flags&2 != 0,
					controlled: flags&4 != 0, drainsOnly: flags&8 != 0, shardKey: sk, drainKey: dk}
				asked := map[action]bool{}
				m := decide(in)
				for m.act == readPeer || m.act == readOwner {
					if !assert.False(t, asked[m.act], "%+v asks %s twice", in, m.act) {
						break
					}
					asked[m.act] = true
					if m.act == readPeer {
						in.gone = answer
					} else {
						in.ownerOn = answer
					}
					m = decide(in)
				}
				if m.act != none {
					assert.NotEmpty(t, m.labels, "%+v: %s without a patch", in, m.act)
				}
			}
		}
	}
}

func TestActionString(t *testing.T) {
	assert.Equal(t, "reassign", reassign.String())
	assert.Equal(t, "readOwner", readOwner.String())
}
