// Package spec is what every part of a ring shares: its validated
// configuration, its sharded kinds, its label and Lease names and its
// metrics. The public package sharding builds one Spec in New; the parts
// (membership, gate, sharder, assign) read it and never change it.
//
// Guarantees:
//   - A Spec is immutable after New and safe for concurrent use.
//   - Label keys, Lease names and the hash key of an object are defined
//     here once; the public package re-exports them.
package spec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
)

// Label keys (see the public package's constants of the same names).
const (
	ShardLabelPrefix = "shard.sharding.kubeloop.dev/"
	DrainLabelPrefix = "drain.sharding.kubeloop.dev/"
	RingLabel        = "sharding.kubeloop.dev/ring"
	ShardNameLabel   = "sharding.kubeloop.dev/shard"
)

// Kind is one sharded kind.
type Kind struct {
	GVK   schema.GroupVersionKind
	Proto client.Object
	// Controlled: a child kind, moved without a drain.
	Controlled bool
}

// Spec is a ring's defaulted, validated configuration.
type Spec struct {
	Ring, Shard, Namespace string
	// Holder is this process's holder identity of its Leases.
	Holder string
	// ShardKey and DrainKey are the ring's label keys.
	ShardKey, DrainKey string

	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	SweepInterval, DrainCheckInterval         time.Duration
	SweepPageSize                             int64
	VirtualNodes                              int

	// C is the live client: Leases, label patches, sweeps.
	C       client.Client
	Kinds   []Kind
	Log     logr.Logger
	Metrics *Metrics
}

// KindOf returns the sharded kind of gk.
func (s *Spec) KindOf(gk schema.GroupKind) (Kind, bool) {
	for _, k := range s.Kinds {
		if k.GVK.GroupKind() == gk {
			return k, true
		}
	}
	return Kind{}, false
}

// MoveWindow is how long a judgment "shard S is gone" stays usable by the
// sharder for moving S's objects without a drain: it re-reads S's Lease
// once half of it passed, and every such move must reach the API server
// within MoveWindow of the read that judged S gone (the patch's context
// ends then). A shard that rejoins after a loss waits MoveWindow after it
// re-acquired its Lease before it admits reconciles, so no move decided
// while it was out can land while it reconciles. It is RenewDeadline.
func (s *Spec) MoveWindow() time.Duration { return s.RenewDeadline }

// Key returns the hash key of an object of kind gk: group/kind/namespace/name,
// or, when the object has a controller ownerReference, the key of that
// owner (in the object's namespace).
func Key(gk schema.GroupKind, obj client.Object) string {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err == nil {
				return keyOf(gv.Group, ref.Kind, obj.GetNamespace(), ref.Name)
			}
		}
	}
	return keyOf(gk.Group, gk.Kind, obj.GetNamespace(), obj.GetName())
}

func keyOf(group, kind, namespace, name string) string {
	return group + "/" + kind + "/" + namespace + "/" + name
}

// LeaseName is the name of shard's Lease in ring.
func LeaseName(ring, shard string) string { return ring + "-shard-" + shard }

// SharderLeaseName is the name of the Lease that elects ring's sharder.
func SharderLeaseName(ring string) string { return ring + "-sharder" }

// Sleep waits d or until ctx ends; it reports whether d passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Signal sends on a channel of capacity 1 without blocking.
func Signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// NowMillis formats t for the drain label.
func NowMillis(t time.Time) string { return fmt.Sprint(t.UnixMilli()) }

// EscapePointer escapes s for a JSON pointer (RFC 6901).
func EscapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// The sentinels of the public package (it re-exports them).
var (
	ErrInvalidOptions = errors.New("sharding: invalid options")
	ErrNotInScheme    = errors.New("sharding: kind not in the scheme")
	ErrOtherRing      = errors.New("sharding: kind already sharded by another ring")
)
