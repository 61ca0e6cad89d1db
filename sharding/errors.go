package sharding

import "errors"

var (
	// ErrInvalidOptions is wrapped by New's error when Options are wrong.
	ErrInvalidOptions = errors.New("sharding: invalid options")
	// ErrNotInScheme is wrapped when a sharded kind is not in the scheme.
	ErrNotInScheme = errors.New("sharding: kind not in the scheme")
	// ErrOtherRing is wrapped by ConfigureCache when a kind's cache is
	// already filtered by another ring's shard label: a manager runs one
	// ring.
	ErrOtherRing = errors.New("sharding: kind already sharded by another ring")
	// ErrLeaseLost is wrapped by Start's error when this shard could not
	// renew its Lease within RenewDeadline; it stopped reconciling sharded
	// objects before the Lease could expire.
	ErrLeaseLost = errors.New("sharding: shard lease lost")
)
