// Command wakestalls measures how late this machine wakes an idle process:
// it sleeps 2 ms -n times, as bench/e2e's latency phase does between its
// events, and prints one line: the share of the sleeps that overslept by
// more than 0.5 ms and by more than 2 ms, and the longest oversleep.
// hack/bench.sh puts that line in the report's Machine section. A latency
// percentile near the share of late wake-ups moves with how many of them
// land in a run, whatever the code under test does (BENCHMARKS-perf.md,
// issue 33 item 2).
package main

import (
	"flag"
	"fmt"
	"time"
)

func main() {
	n := flag.Int("n", 5000, "number of 2 ms sleeps")
	flag.Parse()
	over := make([]time.Duration, 0, *n)
	for range *n {
		t := time.Now()
		time.Sleep(period)
		over = append(over, time.Since(t)-period)
	}
	fmt.Println(summarize(over))
}

// period is the sleep between two of the latency phase's events.
const period = 2 * time.Millisecond

// stalls summarizes oversleeps.
type stalls struct {
	n              int
	late, veryLate int // over 0.5 ms, over 2 ms
	longest        time.Duration
}

func summarize(over []time.Duration) stalls {
	s := stalls{n: len(over)}
	for _, o := range over {
		if o > 500*time.Microsecond {
			s.late++
		}
		if o > 2*time.Millisecond {
			s.veryLate++
		}
		s.longest = max(s.longest, o)
	}
	return s
}

func (s stalls) String() string {
	pct := func(k int) float64 { return 100 * float64(k) / float64(max(s.n, 1)) }
	return fmt.Sprintf("of %d sleeps of 2 ms, %.2f%% woke more than 0.5 ms late and %.2f%% more than 2 ms late; the latest by %.1f ms",
		s.n, pct(s.late), pct(s.veryLate), float64(s.longest)/float64(time.Millisecond))
}
