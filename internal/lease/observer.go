package lease

import "time"

// Observer judges one Lease's expiry the way client-go's elector does:
// from its own observation of a change, never from the holder's
// renewTime. It remembers the last record it saw and when, by the local
// clock, it first saw that record. It is not safe for concurrent use; its
// zero value has observed nothing.
type Observer struct {
	rec  Record
	at   time.Time
	seen bool
}

// Observe records rec as read at now. now must be a reading of the local
// clock taken after the read's response arrived (the record was stored no
// later than that), never before the request was sent. It returns whether
// rec differs from the record observed before (true for the first one);
// only then does the observation's clock restart.
func (o *Observer) Observe(rec Record, now time.Time) bool {
	if o.seen && o.rec.Equal(rec) {
		return false
	}
	o.rec, o.at, o.seen = rec, now, true
	return true
}

// Record returns the last record observed and whether there was one.
func (o *Observer) Record() (Record, bool) { return o.rec, o.seen }

// ExpiresAt returns when, by the local clock, the observed hold expires:
// the record's duration after it was first seen. It is the zero time when
// nothing was observed or nobody holds the Lease.
func (o *Observer) ExpiresAt() time.Time {
	if !o.seen || o.rec.Holder == "" {
		return time.Time{}
	}
	return o.at.Add(o.rec.Duration)
}

// Expired reports whether the observed hold has ended by now (a local
// clock reading): nothing observed, no holder (released), or the record's
// duration has passed since this Observer first saw it.
func (o *Observer) Expired(now time.Time) bool {
	if !o.seen || o.rec.Holder == "" {
		return true
	}
	return !now.Before(o.at.Add(o.rec.Duration))
}
