package sharding

import (
	"github.com/kubeloop/kubeloop/internal/lease"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

var (
	// ErrInvalidOptions is wrapped by New's error when Options are wrong.
	ErrInvalidOptions = spec.ErrInvalidOptions
	// ErrNotInScheme is wrapped when a sharded kind is not in the scheme.
	ErrNotInScheme = spec.ErrNotInScheme
	// ErrOtherRing is wrapped by ConfigureCache when a kind's cache is
	// already filtered by another ring's shard label: a manager runs one
	// ring.
	ErrOtherRing = spec.ErrOtherRing
	// ErrLeaseLost is wrapped by Start's error, with
	// Options.ExitOnLeaseLoss, when this shard could not renew its Lease
	// within RenewDeadline (it stopped reconciling sharded objects before
	// the Lease could expire), and by the error of a gated reconcile's
	// write refused by the shard's fence. It is client.ErrLeaseLost, the
	// lease core's one sentinel.
	ErrLeaseLost = lease.ErrLost
)
