package sharder

import (
	"time"

	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// The sharder's placement is split in two: decide, a pure function of
// what is known about one object, returns the move; place (sweep.go)
// makes the reads decide asks for, sends the move's patch, counts it and
// retries a conflict.

// action is what a move does.
type action int

const (
	// none: the object stays as it is.
	none action = iota
	// assign an unassigned object to its shard.
	assign
	// reassign the object of a shard that is gone, without a drain.
	reassign
	// drain: ask the object's shard, alive but no longer the object's, to
	// hand it over.
	drain
	// child: move a controlled object to its owner's new shard, without a
	// drain.
	child
	// readPeer: decide needs to know whether the object's shard is gone.
	readPeer
	// readOwner: decide needs to know whether the owner of a controlled
	// object sits on its shard.
	readOwner
)

var actionNames = [...]string{"none", "assign", "reassign", "drain", "child", "readPeer", "readOwner"}

// String names the action.
func (a action) String() string { return actionNames[a] }

// tri is a fact decide may need: not read yet, true or false.
type tri int

const (
	unread tri = iota
	yes
	no
)

// input is what decide knows about one object.
type input struct {
	cur      string // the object's shard label ("" unassigned)
	draining bool   // it carries the drain label
	want     string // its shard on the ring of live shards
	alive    bool   // cur is alive in the sharder's view
	// controlled: a child kind, moved without a drain once its owner sits
	// on want.
	controlled bool
	// drainsOnly: the first pass of a sweep that found a shard gone and
	// another joined; it requests drains and nothing else.
	drainsOnly bool
	// gone: cur is known to be gone (Lease expired or released); read on
	// request (readPeer).
	gone tri
	// ownerOn: the controller owner is on want and not draining (or the
	// object has no owner to follow); read on request (readOwner).
	ownerOn tri
	now     time.Time // for the drain label's value
	// shardKey and drainKey are the ring's label keys.
	shardKey, drainKey string
}

// move is decide's answer.
type move struct {
	act action
	// shard is the object's shard once the move is made ("" unknown).
	shard string
	// labels is the label patch of assign, reassign, drain and child
	// (a nil value removes a label).
	labels map[string]any
	// pending: the object waits, for its drain to be acknowledged or for
	// its owner to move (none and drain).
	pending bool
}

// decide returns the move that brings the object in towards its shard.
func decide(in input) move {
	to := func(a action) move {
		return move{act: a, shard: in.want, labels: map[string]any{in.shardKey: in.want, in.drainKey: nil}}
	}
	stay := move{act: none, shard: in.cur}
	switch {
	case in.cur == "" && in.drainsOnly:
		return move{act: none}
	case in.cur == "":
		return to(assign)
	case in.cur == in.want:
		stay.pending = in.draining
		return stay
	case in.drainsOnly && (!in.alive || in.controlled || in.draining):
		return stay
	case in.gone == unread:
		return move{act: readPeer}
	case in.gone == yes:
		return to(reassign)
	case !in.alive:
		return stay // alive but newer than the view
	case in.controlled && in.ownerOn == unread:
		return move{act: readOwner}
	case in.controlled && in.ownerOn == yes:
		return to(child)
	case in.controlled, in.draining:
		stay.pending = true
		return stay
	}
	return move{act: drain, shard: in.cur, pending: true,
		labels: map[string]any{in.drainKey: spec.NowMillis(in.now)}}
}
