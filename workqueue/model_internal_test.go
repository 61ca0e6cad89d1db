package workqueue

import (
	"flag"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestModel drives a queue with a seeded random sequence of every
// operation, on one goroutine in a synctest bubble (plus, at times, one
// worker parked in Get), and after each step runs q.check() and compares
// what the queue shows (the key Get hands out, Len, NumRequeues, a parked
// worker's key, the metrics' counts) with model, a plain reference model
// of the package's guarantees. A failure names its seed and prints the
// last steps; go test -run 'TestModel/seed=N$' replays it.
func TestModel(t *testing.T) {
	seeds, steps := 64, 3000
	if testing.Short() {
		seeds, steps = 8, 600
	}
	if *modelSeeds > 0 {
		seeds = *modelSeeds
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { runModel(t, seed, steps) })
		})
	}
}

var modelSeeds = flag.Int("model.seeds", 0, "seeds TestModel runs, instead of 64 (8 with -short)")

// Rate limiter of the model test: 1ms doubling up to 64ms.
const (
	modelBase = time.Millisecond
	modelMax  = 64 * time.Millisecond
)

// mkey is the model's state of one key. A key is pending (ready, or dirty
// if in flight), waiting, or neither, and in flight or not.
type mkey struct {
	flight  bool
	pending bool
	waiting bool
	readyAt int64
	prio    int
	seq     int64 // arrival in its priority while ready; keys made ready by one timer share it
	enq     int64 // when it became pending, once stamping is on
}

// model is the reference: what the package documentation promises, kept
// in maps and sorted slices.
type model struct {
	keys     map[string]*mkey
	failures map[string]int
	now      int64
	seq      int64
	stamp    bool // enqueue times recorded: metrics, or a priority other than 0 was added
	ageAfter int64
	fair     func(string) string
	shutdown bool
	parked   bool     // a worker is parked in Get
	handed   []string // the keys one of which the parked worker was handed
	taken    bool     // the model took the handed key (there was one)
	adds     uint64
	retries  uint64

	// Fairness: Gets so far, and for each group of each priority when it
	// was last handed out in turn (not for its age), and since when it has
	// had a key ready (its last Get or its first ready key).
	gets       int64
	lastServed map[group2]int64
	waitFrom   map[group2]int64
}

// group2 is a fairness group of one priority.
type group2 struct {
	prio  int
	group string
}

func (m *model) key(k string) *mkey {
	e := m.keys[k]
	if e == nil {
		e = &mkey{}
		m.keys[k] = e
	}
	return e
}

// when is the rate limiter's delay for k, counting a failure.
func (m *model) when(k string) time.Duration {
	d := modelBase
	for range m.failures[k] {
		d = min(2*d, modelMax)
	}
	m.failures[k]++
	return d
}

// add is one add of k, as the guarantees describe it.
func (m *model) add(k string, prio int, after time.Duration) {
	if m.shutdown {
		return
	}
	if prio != 0 && !m.stamp {
		m.stamp = true
		for _, e := range m.keys {
			if e.pending {
				e.enq = m.now
			}
		}
	}
	e := m.key(k)
	switch {
	case e.pending: // the highest priority wins; a delay changes nothing
		m.raise(e, prio)
		return
	case after > 0 && e.waiting: // the earliest time wins
		e.prio = max(e.prio, prio)
		e.readyAt = min(e.readyAt, m.now+int64(after))
		return
	case after > 0:
		e.prio, e.readyAt, e.waiting = prio, m.now+int64(after), true
		return
	case e.waiting:
		e.waiting = false
		prio = max(prio, e.prio)
	}
	e.prio = prio
	m.adds++
	m.enqueue(k, e, m.now, []string{k}, m.nextSeq())
}

func (m *model) nextSeq() int64 { m.seq++; return m.seq }

// raise keeps the highest priority of a pending key; a ready key moves to
// the back of its new priority.
func (m *model) raise(e *mkey, prio int) {
	if prio <= e.prio {
		return
	}
	e.prio = prio
	if !e.flight {
		e.seq = m.nextSeq()
	}
}

// enqueue makes k pending at time at: dirty if in flight, else handed to
// the parked worker (which takes one of tie, the keys made ready at once),
// else ready with arrival seq.
func (m *model) enqueue(k string, e *mkey, at int64, tie []string, seq int64) {
	if m.stamp {
		e.enq = at
	}
	e.pending = true
	if e.flight {
		return
	}
	e.seq = seq
	if m.parked {
		m.parked = false
		m.handed = tie
		if len(tie) == 1 {
			m.take(k)
			m.taken = true
		}
	}
}

// advance moves the clock by d: the waiting keys become ready by deadline,
// the keys of one deadline at once.
func (m *model) advance(d time.Duration) {
	end := m.now + int64(d)
	for !m.shutdown {
		at := int64(-1)
		for _, e := range m.keys {
			if e.waiting && e.readyAt <= end && (at < 0 || e.readyAt < at) {
				at = e.readyAt
			}
		}
		if at < 0 {
			break
		}
		m.now = at
		var fired, tie []string
		for k, e := range m.keys {
			if e.waiting && e.readyAt == at {
				fired = append(fired, k)
				if !e.flight {
					tie = append(tie, k)
				}
			}
		}
		slices.Sort(fired)
		slices.Sort(tie)
		seq := m.nextSeq()
		for _, k := range fired {
			e := m.keys[k]
			e.waiting = false
			m.adds++
			m.enqueue(k, e, at, tie, seq)
		}
	}
	m.now = end
}

// ready returns the keys ready to be handed out.
func (m *model) ready() []string {
	var ks []string
	for k, e := range m.keys {
		if e.pending && !e.flight {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// next returns the keys one of which Get may hand out: the first arrived
// of the highest priority (of each fairness group, with a FairnessKey),
// unless the first of a lower priority has waited ageAfter and is older.
func (m *model) next() (keys []string, aged bool) {
	ready := m.ready()
	if len(ready) == 0 {
		return nil, false
	}
	byPrio := map[int][]string{}
	for _, k := range ready {
		byPrio[m.keys[k].prio] = append(byPrio[m.keys[k].prio], k)
	}
	prios := make([]int, 0, len(byPrio))
	for p := range byPrio {
		prios = append(prios, p)
	}
	slices.Sort(prios)
	slices.Reverse(prios)
	heads := func(ks []string) []string { // the first arrived (several: made ready at once)
		first := slices.MinFunc(ks, func(a, b string) int { return int(m.keys[a].seq - m.keys[b].seq) })
		return slices.DeleteFunc(slices.Clone(ks), func(k string) bool { return m.keys[k].seq != m.keys[first].seq })
	}
	top := heads(byPrio[prios[0]])
	if len(prios) > 1 && m.ageAfter > 0 && m.stamp {
		oldest, limit := m.keys[top[0]].enq, m.now-m.ageAfter
		var aged []string
		for _, p := range prios[1:] {
			h := heads(byPrio[p])
			if at := m.keys[h[0]].enq; at <= limit && at < oldest {
				oldest, aged = at, h
			}
		}
		if aged != nil {
			return aged, true
		}
	}
	if m.fair == nil {
		return top, false
	}
	groups := map[string][]string{}
	for _, k := range byPrio[prios[0]] {
		groups[m.fair(k)] = append(groups[m.fair(k)], k)
	}
	var cands []string
	for _, ks := range groups {
		cands = append(cands, heads(ks)...)
	}
	slices.Sort(cands)
	return cands, false
}

// served checks that Get handing out k in turn (not aged) keeps round-robin
// among the fairness groups of its priority: no group with a key ready
// waits through two turns of another; then it counts the Get.
func (m *model) served(k string, aged bool) error {
	if m.fair == nil {
		return nil
	}
	g := group2{m.keys[k].prio, m.fair(k)}
	m.gets++
	defer func() { m.waitFrom[g] = m.gets }()
	if aged {
		return nil
	}
	prev, ok := m.lastServed[g]
	m.lastServed[g] = m.gets
	if !ok {
		return nil
	}
	for h, from := range m.waitFrom {
		if h.prio == g.prio && h != g && from < prev {
			return fmt.Errorf("fairness: group %q of priority %d waited through two turns of group %q (Gets %d and %d, waiting since %d)",
				h.group, h.prio, g.group, prev, m.gets, from)
		}
	}
	return nil
}

// waiting notes the fairness groups that have keys ready, from when.
func (m *model) waiting() {
	if m.fair == nil {
		return
	}
	now := map[group2]bool{}
	for _, k := range m.ready() {
		now[group2{m.keys[k].prio, m.fair(k)}] = true
	}
	for g := range now {
		if _, ok := m.waitFrom[g]; !ok {
			m.waitFrom[g] = m.gets
		}
	}
	for g := range m.waitFrom {
		if !now[g] {
			delete(m.waitFrom, g)
		}
	}
}

// take hands k out.
func (m *model) take(k string) {
	e := m.keys[k]
	e.pending, e.flight = false, true
}

// done finishes k: a dirty key becomes ready (or goes to the parked
// worker).
func (m *model) done(k string) {
	e := m.keys[k]
	if e == nil || !e.flight {
		return
	}
	e.flight = false
	if e.pending {
		e.pending = false
		m.enqueue(k, e, e.enq, []string{k}, m.nextSeq())
	}
	m.gc(k)
}

// gc forgets a key in no state.
func (m *model) gc(k string) {
	if e := m.keys[k]; !e.flight && !e.pending && !e.waiting {
		delete(m.keys, k)
	}
}

// shutDown drops every key not in flight.
func (m *model) shutDown() {
	m.shutdown = true
	m.parked = false
	for k, e := range m.keys {
		e.pending, e.waiting = false, false
		m.gc(k)
	}
}

// flying returns the keys in flight, sorted.
func (m *model) flying() []string {
	var ks []string
	for k, e := range m.keys {
		if e.flight {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

func runModel(t *testing.T, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	nkeys := []int{3, 8, 24, 64}[r.IntN(4)]
	opts := Options[string]{
		RateLimiter: NewItemExponentialFailureRateLimiter[string](modelBase, modelMax),
		AgeAfter:    []time.Duration{0, -1, 20 * time.Millisecond, 200 * time.Millisecond}[r.IntN(4)],
	}
	if r.IntN(2) == 0 {
		opts.Metrics = nopProvider{}
	}
	if r.IntN(3) == 0 {
		opts.FairnessKey = func(k string) string { return "g" + k[len(k)-1:] }
	}
	switch r.IntN(4) { // hashes that collide: every key on one probe run, or few homes
	case 0:
		opts.Hash = func(string, maphash.Seed) uint64 { return 0 }
	case 1:
		opts.Hash = func(k string, _ maphash.Seed) uint64 { return uint64(k[len(k)-1]) << 61 }
	}
	prioFrom := 0 // the step from which adds have priorities: later, stamping starts with keys pending
	if r.IntN(2) == 0 {
		prioFrom = steps / 4
	}
	q := New(opts)
	m := &model{
		keys: map[string]*mkey{}, failures: map[string]int{},
		stamp: opts.Metrics != nil, ageAfter: int64(DefaultAgeAfter), fair: opts.FairnessKey,
		lastServed: map[group2]int64{}, waitFrom: map[group2]int64{},
	}
	if opts.AgeAfter != 0 {
		m.ageAfter = int64(opts.AgeAfter)
	}
	start := time.Now()

	var log []string
	step := 0
	logf := func(format string, args ...any) {
		log = append(log, fmt.Sprintf("%5d %8v ", step, time.Duration(m.now))+fmt.Sprintf(format, args...))
	}
	fail := func(format string, args ...any) {
		t.Helper()
		from := max(0, len(log)-60)
		t.Fatalf("seed %d (%d keys, %+v), step %d: %s\nlast steps:\n%s", seed, nkeys,
			struct {
				Metrics, Fair bool
				AgeAfter      time.Duration
				PrioFrom      int
			}{opts.Metrics != nil, opts.FairnessKey != nil, opts.AgeAfter, prioFrom},
			step, fmt.Sprintf(format, args...), strings.Join(log[from:], "\n"))
	}

	parked := make(chan string, 1) // the key a parked worker got; "" for shutdown
	park := func() {
		m.parked = true
		go func() {
			k, shutdown := q.Get()
			if shutdown {
				k = ""
			}
			parked <- k
		}()
	}
	key := func() string { return fmt.Sprint("k", r.IntN(nkeys)) }
	prio := func() int {
		if step < prioFrom {
			return 0
		}
		return []int{0, 0, 1, LowPriority, 5}[r.IntN(5)]
	}
	delay := func() time.Duration {
		if r.IntN(4) == 0 {
			return time.Duration(r.IntN(3) - 1) // 0 or less: now
		}
		return time.Duration(1+r.IntN(40)) * time.Millisecond / 4
	}

	verify := func() {
		t.Helper()
		synctest.Wait()
		if d := time.Since(start); int64(d) != m.now {
			fail("clock: %v passed, the model says %v", d, time.Duration(m.now))
		}
		select {
		case k := <-parked:
			if m.handed == nil && !(m.shutdown && k == "") {
				fail("parked worker got %q, the model handed it nothing", k)
			}
			if k != "" {
				if !slices.Contains(m.handed, k) {
					fail("parked worker got %q, the model handed it one of %q", k, m.handed)
				}
				if !m.taken {
					m.take(k)
				}
			}
			logf("  parked worker got %q", k)
			m.handed, m.taken = nil, false
		default:
			if m.handed != nil {
				fail("parked worker got nothing, the model handed it one of %q", m.handed)
			}
		}
		if err := q.check(); err != nil {
			fail("check: %v", err)
		}
		m.waiting()
		if got, want := q.Len(), len(m.ready()); got != want {
			fail("Len %d, the model has %d ready: %q", got, want, m.ready())
		}
		k := key()
		if got, want := q.NumRequeues(k), m.failures[k]; got != want {
			fail("NumRequeues(%s) %d, the model %d", k, got, want)
		}
		if q.metrics != nil {
			var s Stats
			q.readStats(&s)
			want := len(m.ready())
			for _, e := range m.keys {
				if e.flight && e.pending {
					want++
				}
			}
			if s.Depth != want || s.Adds != m.adds || s.Retries != m.retries {
				fail("stats: depth %d adds %d retries %d, the model %d %d %d", s.Depth, s.Adds, s.Retries, want, m.adds, m.retries)
			}
		}
	}

	shutAt := steps - steps/10
	for step = range steps {
		if step == shutAt {
			logf("ShutDown")
			q.ShutDown()
			m.shutDown()
			verify()
			continue
		}
		switch op := r.IntN(100); {
		case op < 20:
			k, p := key(), prio()
			if p == 0 && r.IntN(2) == 0 {
				logf("Add %s", k)
				q.Add(k)
			} else {
				logf("AddWithOpts %s prio %d", k, p)
				q.AddWithOpts(AddOpts{Priority: p}, k)
			}
			m.add(k, p, 0)
		case op < 28:
			k, d := key(), delay()
			logf("AddAfter %s %v", k, d)
			q.AddAfter(k, d)
			if !m.shutdown {
				m.retries++
			}
			m.add(k, 0, d)
		case op < 34:
			k := key()
			logf("AddRateLimited %s (failures %d)", k, m.failures[k])
			q.AddRateLimited(k)
			if !m.shutdown {
				m.retries++
				m.add(k, 0, m.when(k))
			}
		case op < 42:
			o := AddOpts{Priority: prio(), After: delay(), RateLimited: r.IntN(3) == 0}
			ks := make([]string, 1+r.IntN(3))
			for i := range ks {
				ks[i] = key()
			}
			logf("AddWithOpts %q %+v", ks, o)
			q.AddWithOpts(o, ks...)
			for _, k := range ks {
				if m.shutdown {
					break
				}
				d := o.After
				if o.RateLimited {
					d = m.when(k)
					if o.After > 0 && o.After < d {
						d = o.After
					}
				}
				if o.RateLimited || o.After > 0 {
					m.retries++
				}
				m.add(k, o.Priority, d)
			}
		case op < 45:
			k := key()
			logf("Forget %s", k)
			q.Forget(k)
			delete(m.failures, k)
		case op < 65:
			if m.parked || m.handed != nil {
				break
			}
			if m.shutdown {
				k, shutdown := q.Get()
				logf("Get: %q %v", k, shutdown)
				if !shutdown {
					fail("Get after ShutDown handed out %q", k)
				}
				break
			}
			cands, aged := m.next()
			if cands == nil {
				if r.IntN(3) == 0 {
					logf("Get parks")
					park()
				}
				break
			}
			k, shutdown := q.Get()
			logf("Get: %q (the model: one of %q)", k, cands)
			if shutdown || !slices.Contains(cands, k) {
				fail("Get handed out %q (shutdown %v), the model one of %q", k, shutdown, cands)
			}
			if err := m.served(k, aged); err != nil {
				fail("%v", err)
			}
			m.take(k)
		case op < 82:
			fl := m.flying()
			if len(fl) == 0 || r.IntN(10) == 0 {
				k := key()
				logf("Done %s (not in flight: no-op unless it is)", k)
				q.Done(k)
				m.done(k)
				break
			}
			k := fl[r.IntN(len(fl))]
			if !m.parked && m.handed == nil && r.IntN(3) == 0 {
				// DoneAndGet, when the Get half would not block.
				m.done(k)
				cands, aged := m.next()
				switch {
				case m.shutdown:
					got, shutdown := q.DoneAndGet(k)
					logf("DoneAndGet %s: %q %v", k, got, shutdown)
					if !shutdown {
						fail("DoneAndGet after ShutDown handed out %q", got)
					}
				case cands != nil:
					got, shutdown := q.DoneAndGet(k)
					logf("DoneAndGet %s: %q (the model: one of %q)", k, got, cands)
					if shutdown || !slices.Contains(cands, got) {
						fail("DoneAndGet handed out %q (shutdown %v), the model one of %q", got, shutdown, cands)
					}
					if err := m.served(got, aged); err != nil {
						fail("%v", err)
					}
					m.take(got)
				default:
					logf("Done %s (nothing ready for a DoneAndGet)", k)
					q.Done(k)
				}
				break
			}
			logf("Done %s", k)
			q.Done(k)
			m.done(k)
		case op < 84:
			n := r.IntN(2 * expectAt)
			logf("Expect %d", n)
			q.Expect(n)
		default:
			d := time.Duration(r.IntN(12)) * time.Millisecond / 2
			if r.IntN(20) == 0 {
				d = 100 * time.Millisecond
			}
			logf("Sleep %v", d)
			time.Sleep(d)
			m.advance(d)
		}
		verify()
	}
	// Finish the keys in flight, then the parked worker, if any.
	for _, k := range m.flying() {
		q.Done(k)
		m.done(k)
	}
	verify()
	if err := q.check(); err != nil {
		fail("check at the end: %v", err)
	}
}
