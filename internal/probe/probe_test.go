package probe

import "testing"

func TestTake(t *testing.T) {
	Take()
	Mark(Read)
	Mark(Observed)
	got := Take()
	for p := range NumPoints {
		reached := p == Read || p == Observed
		if Enabled && reached != (got[p] != 0) {
			t.Errorf("%v: time %d after marking %v", p, got[p], reached)
		}
		if !Enabled && got[p] != 0 {
			t.Errorf("%v: time %d without the probe built in", p, got[p])
		}
	}
	if Enabled && got[Observed] < got[Read] {
		t.Errorf("observed at %d before read at %d", got[Observed], got[Read])
	}
	if again := Take(); again != ([NumPoints]int64{}) {
		t.Errorf("second Take = %v, want all cleared", again)
	}
}

func TestNames(t *testing.T) {
	seen := map[string]bool{}
	for p := range NumPoints {
		n := p.String()
		if n == "" || seen[n] {
			t.Errorf("point %d: name %q empty or repeated", p, n)
		}
		seen[n] = true
	}
	if NumPoints.String() != "point(?)" {
		t.Errorf("NumPoints.String() = %q", NumPoints.String())
	}
}

func TestNow(t *testing.T) {
	a := Now()
	Mark(Read)
	m := Take()
	b := Now()
	if !Enabled {
		if a != 0 || b != 0 {
			t.Errorf("Now = %d, %d without the probe built in, want 0", a, b)
		}
		return
	}
	// Now and Mark read the same clock: the mark lies between the two
	// readings (Mark sets the lowest bit, so allow one nanosecond).
	if m[Read] < a || m[Read] > b|1 {
		t.Errorf("read marked at %d, outside Now's %d..%d", m[Read], a, b)
	}
}
