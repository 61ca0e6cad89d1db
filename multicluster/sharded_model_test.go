package multicluster

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/sharding"
)

// simReplica is one replica of the protocol model: what Sharded keeps,
// and its Lease as the API server stores it.
type simReplica struct {
	name    string
	alive   bool // its Lease is held; false: gone by the lease rules (and fenced)
	term    int
	known   []string // its Provider's clusters, "" included
	held    map[string]int
	views   map[string]map[string]string
	desired string
	gen     uint64
	note    string  // what its next renewal carries (PublishView)
	stored  string  // its Lease's annotation
	inWire  *string // a renewal sent, not yet stored
}

// step is Sharded.step on the model (drains are instant: the model
// checks the placement protocol, not the waits).
func (r *simReplica) step(all []*simReplica) {
	var members []sharding.Member
	var shards []string
	for _, o := range all {
		if o.alive {
			members = append(members, sharding.Member{Shard: o.name, View: o.stored})
			shards = append(shards, o.name)
		}
	}
	hash := viewHash(shards, r.known)
	p, ok := r.views[hash]
	if !ok {
		p = place(r.known, shards)
		r.views[hash] = p
	}
	if hashOf(r.desired) != hash {
		r.gen++
		r.desired = published(hash, r.gen)
	}
	d := decide(stepInput{self: r.name, term: r.term, admitting: r.alive, members: members, known: r.known,
		held: r.held, placement: p, desired: r.desired,
		resolve: func(h string) (map[string]string, bool) { pl, ok := r.views[h]; return pl, ok }})
	for _, c := range d.drop {
		delete(r.held, c)
	}
	r.note = r.desired
	for _, c := range d.engage {
		r.held[c] = r.term
	}
}

// TestProtocolModel drives replicas of the placement protocol through
// random interleavings of steps, renewals sent and stored late, replicas
// gone and back, and clusters discovered at different times on different
// replicas, and checks after every action that no cluster is held by two
// live replicas, and that once everything settles every cluster is held.
func TestProtocolModel(t *testing.T) {
	universe := []string{"", "a", "b", "c", "d", "e", "f", "g", "h"}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var rs []*simReplica
		for i := range 2 + rng.IntN(3) {
			rs = append(rs, &simReplica{name: fmt.Sprintf("s%d", i), alive: true, term: 1,
				known: slices.Clone(universe[:5]), held: map[string]int{}, views: map[string]map[string]string{}})
		}
		check := func(action string) {
			owner := map[string]string{}
			for _, r := range rs {
				if !r.alive {
					continue
				}
				for c := range r.held {
					require.Empty(t, owner[c], "seed %d after %s: cluster %q held by %s and %s", seed, action, c, owner[c], r.name)
					owner[c] = r.name
				}
			}
		}
		for range 400 {
			r := rs[rng.IntN(len(rs))]
			var action string
			switch k := rng.IntN(20); {
			case k < 10:
				action = "step " + r.name
				r.step(rs)
			case k < 13:
				if r.alive && r.inWire == nil {
					v := r.note
					r.inWire = &v
					action = "renewal sent by " + r.name
				}
			case k < 16:
				if r.inWire != nil {
					r.stored, r.inWire = *r.inWire, nil
					action = "renewal stored for " + r.name
				}
			case k < 17:
				// Gone by the lease rules: its hold ended first, so it
				// holds nothing; a renewal on the wire is refused.
				if r.alive {
					r.alive, r.held, r.inWire = false, map[string]int{}, nil
					action = r.name + " gone"
				} else {
					r.alive = true
					r.term++
					action = r.name + " back"
				}
			default:
				c := universe[1+rng.IntN(len(universe)-1)]
				if i := slices.Index(r.known, c); i >= 0 {
					r.known = slices.Delete(r.known, i, i+1)
					action = r.name + " lost " + c
				} else {
					r.known = append(r.known, c)
					action = r.name + " found " + c
				}
			}
			check(action)
		}
		// Settle: every replica alive with the same clusters; steps and
		// renewals until nothing changes.
		for _, r := range rs {
			if !r.alive {
				r.alive, r.term = true, r.term+1
			}
			r.known = slices.Clone(universe)
		}
		for range 10 {
			for _, r := range rs {
				r.step(rs)
				check("settling step")
				if r.inWire != nil {
					r.stored, r.inWire = *r.inWire, nil
				}
				r.stored = r.note
				check("settling renewal")
			}
		}
		held := 0
		for _, r := range rs {
			held += len(r.held)
		}
		require.Equal(t, len(universe), held, "seed %d: every cluster is held once settled", seed)
	}
}

// TestProtocolGenerationRace is the interleaving that the generation in
// a published value exists for: a replica's view goes V1 -> V2 -> V1
// while the renewal carrying V2 is still on the wire. Were the value the
// view hash alone, the replica would take its Lease's old V1 for its own
// latest write, engage V1's clusters, and the late V2 would then tell the
// other replica it may engage one of them too.
func TestProtocolGenerationRace(t *testing.T) {
	k1 := []string{"", "a", "b", "c", "d", "e"}
	shards := []string{"s0", "s1"}
	p1 := place(k1, shards)
	var z, moved string
	for i := 0; i < 200 && moved == ""; i++ {
		z = fmt.Sprintf("z%d", i)
		p2 := place(append(slices.Clone(k1), z), shards)
		for _, c := range k1 {
			if p1[c] == "s0" && p2[c] == "s1" {
				moved = c
				break
			}
		}
	}
	require.NotEmpty(t, moved, "a cluster that adding z moves from s0 to s1")
	newSim := func(name string) *simReplica {
		return &simReplica{name: name, alive: true, term: 1, known: slices.Clone(k1), held: map[string]int{}, views: map[string]map[string]string{}}
	}
	r, s := newSim("s0"), newSim("s1")
	rs := []*simReplica{r, s}
	land := func(x *simReplica) { x.stored = x.note }
	both := func(c string) bool { _, a := r.held[c]; _, b := s.held[c]; return a && b }
	for range 3 { // settle at V1
		r.step(rs)
		s.step(rs)
		land(r)
		land(s)
	}
	require.Contains(t, r.held, moved)

	r.known = append(r.known, z) // r discovers z first: V2
	r.step(rs)                   // drops moved
	require.NotContains(t, r.held, moved)
	wire := r.note // the renewal carrying V2 is sent
	r.known = slices.DeleteFunc(r.known, func(c string) bool { return c == z })
	r.step(rs) // V1 again: its Lease still shows the old V1, and s's does too
	assert := require.New(t)
	assert.NotContains(r.held, moved, "not engaged again before its latest value is stored")
	r.stored = wire // the late V2 lands
	s.known = append(s.known, z)
	s.step(rs)
	land(s)
	s.step(rs) // s sees r's V2, which does not give r the cluster
	assert.False(both(moved), "cluster %q held by both", moved)
	for range 3 {
		land(r)
		r.step(rs)
		s.step(rs)
		assert.False(both(moved), "cluster %q held by both", moved)
	}
}
