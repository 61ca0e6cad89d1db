package main

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	ms := time.Millisecond
	s := summarize([]time.Duration{0, ms / 4, ms, 3 * ms})
	if s.n != 4 || s.late != 2 || s.veryLate != 1 || s.longest != 3*ms {
		t.Fatalf("summarize = %+v; want 4 sleeps, 2 late, 1 very late, longest 3ms", s)
	}
	want := "of 4 sleeps of 2 ms, 50.00% woke more than 0.5 ms late and 25.00% more than 2 ms late; the latest by 3.0 ms"
	if got := s.String(); got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
}
