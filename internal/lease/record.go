package lease

import (
	"math"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Clock reads the local clock. Only differences between its readings
// matter, so readings should carry the monotonic clock (time.Now's do);
// a clock offset from other replicas' clocks changes nothing.
type Clock interface {
	Now() time.Time
}

// RealClock is the system clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

var _ Clock = RealClock{}

// Record is what a Lease says about its hold: the fields of its spec that
// leader election uses.
type Record struct {
	// Holder is spec.holderIdentity; "" means nobody holds the Lease.
	Holder string
	// Duration is spec.leaseDurationSeconds, in whole seconds.
	Duration time.Duration
	// AcquireTime and RenewTime are the holder's wall-clock times of
	// acquisition and last renewal. Observers never compare them with
	// their own clock.
	AcquireTime, RenewTime time.Time
	// Transitions is spec.leaseTransitions: how often the holder changed.
	Transitions int32
}

// RecordOf returns the record of spec.
func RecordOf(spec coordinationv1.LeaseSpec) Record {
	r := Record{
		Holder:      ptr.Deref(spec.HolderIdentity, ""),
		Duration:    time.Duration(ptr.Deref(spec.LeaseDurationSeconds, 0)) * time.Second,
		Transitions: ptr.Deref(spec.LeaseTransitions, 0),
	}
	if spec.AcquireTime != nil {
		r.AcquireTime = spec.AcquireTime.Time
	}
	if spec.RenewTime != nil {
		r.RenewTime = spec.RenewTime.Time
	}
	return r
}

// Spec returns r as a Lease spec; Duration is written rounded up to whole
// seconds (see WrittenDuration).
func (r Record) Spec() coordinationv1.LeaseSpec {
	s := coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(r.Holder),
		LeaseDurationSeconds: ptr.To(writtenSeconds(r.Duration)),
		LeaseTransitions:     ptr.To(r.Transitions),
	}
	if !r.AcquireTime.IsZero() {
		s.AcquireTime = &metav1.MicroTime{Time: r.AcquireTime}
	}
	if !r.RenewTime.IsZero() {
		s.RenewTime = &metav1.MicroTime{Time: r.RenewTime}
	}
	return s
}

// Equal reports whether r and o say the same thing, to the microsecond a
// Lease stores.
func (r Record) Equal(o Record) bool {
	return r.Holder == o.Holder && r.Duration == o.Duration && r.Transitions == o.Transitions &&
		r.AcquireTime.Truncate(time.Microsecond).Equal(o.AcquireTime.Truncate(time.Microsecond)) &&
		r.RenewTime.Truncate(time.Microsecond).Equal(o.RenewTime.Truncate(time.Microsecond))
}

// WrittenDuration is d as a Lease stores it and as observers wait it:
// whole seconds, rounded up, so never less than d (client-go truncates,
// which makes a 1.9s lease expire after 1s). Durations beyond int32
// seconds are capped (Validate rejects them).
func WrittenDuration(d time.Duration) time.Duration {
	return time.Duration(writtenSeconds(d)) * time.Second
}

func writtenSeconds(d time.Duration) int32 {
	if d <= 0 {
		return 0
	}
	s := d / time.Second
	if d%time.Second != 0 {
		s++
	}
	if s > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(s)
}
