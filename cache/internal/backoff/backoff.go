// Package backoff is the retry policy of the cache's informers: how long
// an informer waits before its next list or watch after a failure, and the
// prober that cuts the wait short once the API server answers again.
//
// client-go's Reflector waits 800 ms doubling to 30 s (jittered up to twice
// that) between failed attempts and forgets the count only after two
// minutes without a failure, so an informer that failed through a 20 s
// outage resumes 30-60 s after the server is back. The cache builds its
// Reflectors with a constant, tiny delay of their own and puts every list
// and watch call through a Gate instead:
//
//   - After a failed call the Gate waits Policy's capped, jittered
//     exponential delay (250 ms doubling to 30 s, each wait uniform in
//     [d/2, d]), and at least the Retry-After the server asked for (a
//     second for a 429 without one).
//   - When the failure says the server is unreachable or sick (no HTTP
//     answer at all, a 5xx, a watch that ended within a second having
//     delivered nothing), the wait can also end early: the cache's Prober, shared
//     by all its informers and running only while one of them waits so,
//     sends GET /readyz on the cache's HTTP client, every 250-500 ms for
//     the first 5 s of an outage and every 0.5-1 s after that; when a
//     probe (or any list or watch of any informer) succeeds after one
//     failed, every waiting informer is released, each after a random
//     delay spread over up to a second (100 ms per waiting informer), so
//     that they relist one after another rather than all at once, and
//     their failure counts start again from zero.
//   - Answers that say the server is up and refuses (403, 404, 429, 400)
//     are not released early: probing cannot tell when they change.
//
// Bound: every informer sends its next list or watch within about 2 s of
// the API server answering again (a probe interval of at most 1 s plus
// its round trip, then the spread of at most 1 s; 1.5 s for outages of
// under 5 s), whatever the length of the outage, and one whose wait was
// not released (it was inside client-go's own once-a-second retries of a
// request) within about 1 s.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Policy is a capped exponential backoff with jitter. The zero value is
// the default: DefaultInitial doubling to DefaultMax.
type Policy struct {
	Initial time.Duration // the first wait's upper end; 0: 250 ms
	Max     time.Duration // the cap; 0: 30 s
}

// The default policy.
const (
	DefaultInitial = 250 * time.Millisecond
	DefaultMax     = 30 * time.Second
)

// Ceiling returns the upper end of the wait after failures failed
// attempts in a row (failures ≥ 1): Initial·2^(failures-1), capped at Max.
func (p Policy) Ceiling(failures int) time.Duration {
	initial, maxWait := p.Initial, p.Max
	if initial <= 0 {
		initial = DefaultInitial
	}
	if maxWait <= 0 {
		maxWait = DefaultMax
	}
	if failures < 1 {
		return 0
	}
	d := initial
	for i := 1; i < failures && d < maxWait; i++ {
		d *= 2
	}
	return min(d, maxWait)
}

// Delay returns the wait after failures failed attempts in a row: uniform
// in [c/2, c] for c = Ceiling(failures), u being a number in [0, 1).
func (p Policy) Delay(failures int, u float64) time.Duration {
	c := p.Ceiling(failures)
	return c/2 + time.Duration(u*float64(c/2))
}

// random returns a number in [0, 1).
func random() float64 { return rand.Float64() }
