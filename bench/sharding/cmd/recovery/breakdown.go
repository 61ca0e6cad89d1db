package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The breakdown of a kill run: where the time from the kill to the last
// survivor's reconcile goes. Its stages, each timed from the kill:
//   - expiry: the first survivor's membership without the victim (its
//     Lease judged expired);
//   - relabelled: the last label patch that moved an object of the victim
//     (the watch of this process);
//   - in caches: the last change of a survivor's cache count (polled every
//     50 ms);
//   - reconciled: the last survivor's first reconcile of a moved object.
//
// And per survivor, from its witness (S/E lines) after the kill: the
// objects it got, the median duration of their first reconciles (those
// write; the repeat that the write's own event brings finds nothing to
// do), the serial floor (moved objects x that median: what one worker
// cannot go below once the objects are in its cache), and, between its first reconcile of a moved
// object and its last first one, how its worker spent the span: first
// reconciles of moved objects, repeats of moved objects (the echo of the
// reconcile's own Update), reconciles of other objects, and idle (no
// reconcile running: waiting for objects to arrive, or a wait in the
// gate). With several workers the busy times and idle are worker seconds
// (they add up to the span times the workers) and the floor is divided
// by the workers.

// survivorWork is one survivor's share of a kill run's recovery.
type survivorWork struct {
	shard                  string
	workers                int // reconcile workers of the replica
	moved                  int
	median                 time.Duration // of the moved objects' first reconciles
	medianAll              time.Duration // of every reconcile after the kill
	firstS, lastFirstE     time.Time
	firsts, repeats, other int
	busyFirst, busyRepeat  time.Duration
	busyOther              time.Duration
}

// floor is the serial floor: moved objects times the median of their
// first reconciles (the ones that write; a repeat finds nothing to do),
// over the workers.
func (w survivorWork) floor() time.Duration {
	return time.Duration(w.moved) * w.median / time.Duration(max(w.workers, 1))
}

// span is the time from its first reconcile of a moved object to the end
// of its last first one.
func (w survivorWork) span() time.Duration { return w.lastFirstE.Sub(w.firstS) }

// idle is the workers' time in the span without a reconcile (worker
// seconds: the span times the workers, less every reconcile's duration).
func (w survivorWork) idle() time.Duration {
	return w.span()*time.Duration(max(w.workers, 1)) - w.busyFirst - w.busyRepeat - w.busyOther
}

// work reads s's witness and returns its share of the recovery of owned
// (the victim's objects, by key) after the kill at k.
func (cl *cluster) work(s string, owned map[string]bool, k time.Time) (survivorWork, error) {
	w := survivorWork{shard: s, workers: cl.cfg.workers}
	lines, err := readAllWitness(cl.reps[s].witness)
	if err != nil {
		return w, err
	}
	type rec struct {
		key        string
		start, end time.Time
	}
	var recs []rec
	open := map[string]time.Time{}
	for _, l := range lines {
		if l.ts.Before(k) {
			continue
		}
		if l.start {
			open[l.key] = l.ts
			continue
		}
		if st, ok := open[l.key]; ok {
			recs = append(recs, rec{l.key, st, l.ts})
			delete(open, l.key)
		}
	}
	if len(recs) == 0 {
		return w, nil
	}
	slices.SortFunc(recs, func(a, b rec) int { return a.start.Compare(b.start) })
	var ds, firsts []time.Duration
	seen := map[string]bool{}
	for _, r := range recs {
		ds = append(ds, r.end.Sub(r.start))
		if owned[r.key] && !seen[r.key] {
			seen[r.key] = true
			firsts = append(firsts, r.end.Sub(r.start))
			w.moved++
			if w.firstS.IsZero() {
				w.firstS = r.start
			}
			if r.end.After(w.lastFirstE) {
				w.lastFirstE = r.end
			}
		}
	}
	slices.Sort(ds)
	w.medianAll = ds[len(ds)/2]
	if w.moved == 0 {
		return w, nil
	}
	slices.Sort(firsts)
	w.median = firsts[len(firsts)/2]
	seen = map[string]bool{}
	for _, r := range recs {
		if r.start.Before(w.firstS) || r.end.After(w.lastFirstE) {
			continue
		}
		d := r.end.Sub(r.start)
		switch {
		case owned[r.key] && !seen[r.key]:
			seen[r.key] = true
			w.firsts++
			w.busyFirst += d
		case owned[r.key]:
			w.repeats++
			w.busyRepeat += d
		default:
			w.other++
			w.busyOther += d
		}
	}
	return w, nil
}

// expiryObserved returns the earliest time after k at which a survivor's
// membership no longer listed the victim.
func (cl *cluster) expiryObserved(survivors []string, victim string, k time.Time) (time.Time, error) {
	var first time.Time
	for _, s := range survivors {
		lines, err := readLog(cl.reps[s], "ring membership")
		if err != nil {
			return first, err
		}
		for _, l := range lines {
			sh, ok := l.fields["shards"].([]any)
			if l.time.Before(k) || !ok || slices.Contains(sh, any(victim)) {
				continue
			}
			if first.IsZero() || l.time.Before(first) {
				first = l.time
			}
			break
		}
	}
	return first, nil
}

// breakdown adds the run's stages and every survivor's share as notes.
func (cl *cluster) breakdown(res *result, survivors []string, victim string, owned map[string]bool, k, relabelled, cached, reconciled time.Time) error {
	exp, err := cl.expiryObserved(survivors, victim, k)
	if err != nil {
		return err
	}
	at := func(t time.Time) string {
		if t.IsZero() {
			return "?"
		}
		return fmt.Sprintf("%.2f s", t.Sub(k).Seconds())
	}
	stage := func(from, to time.Time) string {
		if from.IsZero() || to.IsZero() {
			return "?"
		}
		return fmt.Sprintf("%.2f", to.Sub(from).Seconds())
	}
	res.stages = fmt.Sprintf("expiry %s, relabelled %s, in caches %s, reconciled %s", at(exp), at(relabelled), at(cached), at(reconciled))
	res.breakdown = append(res.breakdown, fmt.Sprintf("kill -> expiry observed %s -> relabelled %s -> in caches %s -> all reconciled %s (stages %s + %s + %s + %s s)",
		at(exp), at(relabelled), at(cached), at(reconciled), stage(k, exp), stage(exp, relabelled), stage(relabelled, cached), stage(cached, reconciled)))
	for _, s := range survivors {
		w, err := cl.work(s, owned, k)
		if err != nil {
			return err
		}
		res.work = append(res.work, w)
		if w.moved == 0 {
			res.breakdown = append(res.breakdown, fmt.Sprintf("%s: no moved object reconciled", s))
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %d moved, median first reconcile %.1f ms (of all %.1f ms), serial floor %.2f s; first moved reconcile %s, last first one ends %s: span %.2f s = ",
			s, w.moved, ms(w.median), ms(w.medianAll), w.floor().Seconds(), at(w.firstS), at(w.lastFirstE), w.span().Seconds())
		fmt.Fprintf(&b, "%d firsts %.2f s + %d repeats %.2f s + %d others %.2f s + idle %.2f s",
			w.firsts, w.busyFirst.Seconds(), w.repeats, w.busyRepeat.Seconds(), w.other, w.busyOther.Seconds(), w.idle().Seconds())
		res.breakdown = append(res.breakdown, b.String())
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
