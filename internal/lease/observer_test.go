package lease_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kubeloop/kubeloop/internal/lease"
)

func TestObserverExpiresFromItsOwnObservation(t *testing.T) {
	w := newWorld()
	clock := skewed{w: w}
	rec := lease.RecordOf(lease.Record{Holder: "a", Duration: 1900 * time.Millisecond, RenewTime: w.read()}.Spec())
	var o lease.Observer
	assert.True(t, o.Expired(clock.Now()), "nothing observed: nothing held")

	w.advance(10 * time.Second) // the observer reads the record late
	assert.True(t, o.Observe(rec, clock.Now()))
	assert.False(t, o.Expired(clock.Now()), "renewTime is 10s old, but this observer has just seen it")
	w.advance(1999 * time.Millisecond)
	assert.False(t, o.Expired(clock.Now()), "1.9s is written as 2s: not expired after 1.999s")
	assert.False(t, o.Observe(rec, clock.Now()), "the same record again is no change")
	w.advance(time.Millisecond)
	assert.True(t, o.Expired(clock.Now()), "expired 2s after first seeing the record")

	renewed := rec
	renewed.RenewTime = renewed.RenewTime.Add(time.Second)
	assert.True(t, o.Observe(renewed, clock.Now()), "a renewal is a change")
	assert.False(t, o.Expired(clock.Now()))

	released := lease.Record{Duration: time.Second}
	o.Observe(released, clock.Now())
	assert.True(t, o.Expired(clock.Now()), "an empty holder is expired at once")
	assert.True(t, o.ExpiresAt().IsZero())
}

// TestExpiryDoesNotDependOnClockOffsets: a holder and observers whose
// clocks are offset by minutes, either way, judge a Lease alike: each
// observer expires it the written duration after it saw the last change,
// at the same true moment, whatever renewTime says.
func TestExpiryDoesNotDependOnClockOffsets(t *testing.T) {
	offsets := []time.Duration{-30 * time.Minute, -90 * time.Second, 0, 90 * time.Second, 30 * time.Minute}
	for _, holderOff := range offsets {
		t.Run(fmt.Sprintf("holder%+v", holderOff), func(t *testing.T) {
			w := newWorld()
			api := newMemAPI(w)
			h := newHolder(t, api, "a", skewed{w: w, off: holderOff}, 1900*time.Millisecond, 1500*time.Millisecond)
			assert.NoError(t, h.TryAcquireOrRenew(t.Context()))
			written := w.read()

			observers := make([]*lease.Holder, len(offsets))
			for i, off := range offsets {
				observers[i] = newHolder(t, api, fmt.Sprintf("o%d", i), skewed{w: w, off: off}, 1900*time.Millisecond, 1500*time.Millisecond)
			}
			// Every observer sees the record at once, and keeps trying.
			var takenAt time.Time
			for step := 0; step < 100 && takenAt.IsZero(); step++ {
				for _, o := range observers {
					if o.TryAcquireOrRenew(t.Context()) == nil {
						takenAt = w.read()
						break
					}
				}
				if takenAt.IsZero() {
					w.advance(50 * time.Millisecond)
				}
			}
			assert.Equal(t, 2*time.Second, takenAt.Sub(written), "taken over exactly the written 2s after the observers saw the renewal")
			assert.False(t, h.Valid(h.Clock().Now()), "the holder's validity ended first")
		})
	}
}

// An observer's judgement of a Lease renewed 1.9s-fashion.
func ExampleObserver() {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) // this replica's clock
	rec := lease.RecordOf(lease.Record{Holder: "a", Duration: 1900 * time.Millisecond}.Spec())
	var o lease.Observer
	o.Observe(rec, start)
	fmt.Println(rec.Duration, o.Expired(start.Add(1999*time.Millisecond)), o.Expired(start.Add(2*time.Second)))
	// Output: 2s false true
}
