package e2e_bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubeloop/kubeloop/bench/fakeapiserver"
	"github.com/kubeloop/kubeloop/bench/internal/profiling"
	"github.com/kubeloop/kubeloop/bench/internal/stacks"
	"github.com/kubeloop/kubeloop/internal/probe"
)

const childEnv = "KUBELOOP_E2E_CHILD"

// result is what a child reports on its last stdout line.
type result struct {
	ColdSeconds, ColdCPUSeconds float64
	ColdUsage                   stacks.Usage // ColdCPUSeconds split, with page faults
	PeakRSSMiB, HeapMiB         float64
	HeapBaseMiB                 float64 // before the stack started (the recorder included)
	WatchLists, Lists           int64
	SteadyCPUMicrosPerEvent     float64
	EventsPerSecond             float64
	SteadyReconciles            int64
	SteadyAllocsPerEvent        float64 // heap allocations of the whole process
	SteadyBytesPerEvent         float64
	P50Micros, P99Micros        float64 // from the server's sending of the event
	// Of the latency phase: GC cycles that ended during it, the events
	// during which one ended, and p99 over the other events (for where a
	// tail comes from; not a target).
	LatencyGCs, LatencyInGC int
	P99NoGCMicros           float64
	FireP50Micros           float64 // from the trigger request, which the server answers
	PingMicros              float64
}

// BenchmarkE2E runs each stack once per iteration in a fresh child
// process, through the three phases. Run it with -benchtime 1x and
// -count N. With -interleave the stacks' latency phases run by turns over
// the same seconds (interleave_test.go) in one child per stack, after
// every stack's cold start and steady state ran alone in children of
// their own, which give those figures; -benchtime must then be 1x. With -floor, the reference stacks.Floor, stacks.WireWorker and
// stacks.Wire run beside the three stacks as impl=floor, impl=wire-worker
// and impl=wire (not peers: the least a controller, and any consumer, of
// the same watch can do).
func BenchmarkE2E(b *testing.B) {
	names := slices.Clone(stacks.Names)
	if *floor {
		names = append(names, "floor", "wire-worker", "wire")
	}
	if *traced {
		names = append(names, "kubeloop-hook", "kubeloop-otel")
	}
	if *reverse {
		slices.Reverse(names)
	}
	var turns map[string]result // with -interleave: every selected stack's result, run together
	if *interleave {
		var selected []string
		for _, name := range names {
			if benchSelects(name) {
				selected = append(selected, name)
			}
		}
		// Cold start and steady state one stack after the other in
		// children of their own, as without -interleave: a cold start
		// beside the other stacks' idle children, each holding its
		// cache, ran 10-30% slower (BENCHMARKS-perf.md).
		alone := make(map[string]result, len(selected))
		for _, name := range selected {
			alone[name] = runStack(b, name, *nEvents, *nEventObjects, 0)
		}
		turns = runInterleaved(b, selected, *nEvents, *nEventObjects, *nLatency, *interleaveBlock)
		for name, r := range alone {
			turns[name] = withLatencyOf(r, turns[name])
		}
	}
	for _, name := range names {
		b.Run("impl="+name, func(b *testing.B) {
			var rs []result
			for b.Loop() {
				if turns != nil {
					rs = append(rs, turns[name])
					continue
				}
				rs = append(rs, runStack(b, name, *nEvents, *nEventObjects, *nLatency))
			}
			avg := averager(rs)
			b.ReportMetric(avg(func(r result) float64 { return r.ColdSeconds }), "s/coldstart")
			b.ReportMetric(avg(func(r result) float64 { return r.ColdCPUSeconds }), "cpu-s/coldstart")
			b.ReportMetric(avg(func(r result) float64 { return r.PeakRSSMiB }), "peak-RSS-MiB")
			b.ReportMetric(avg(func(r result) float64 { return r.HeapMiB }), "heap-MiB")
			b.ReportMetric(avg(func(r result) float64 { return r.SteadyCPUMicrosPerEvent }), "cpu-us/event")
			b.ReportMetric(avg(func(r result) float64 { return r.EventsPerSecond }), "events/s")
			b.ReportMetric(avg(func(r result) float64 { return r.SteadyAllocsPerEvent }), "allocs/event")
			b.ReportMetric(avg(func(r result) float64 { return r.SteadyBytesPerEvent }), "B/event")
			b.ReportMetric(avg(func(r result) float64 { return r.P50Micros }), "p50-us")
			b.ReportMetric(avg(func(r result) float64 { return r.P99Micros }), "p99-us")
			b.ReportMetric(avg(func(r result) float64 { return r.FireP50Micros }), "fire-p50-us")
			b.ReportMetric(avg(func(r result) float64 { return float64(r.LatencyGCs) }), "latency-gcs")
			b.ReportMetric(avg(func(r result) float64 { return float64(r.LatencyInGC) }), "latency-in-gc")
			b.ReportMetric(avg(func(r result) float64 { return r.P99NoGCMicros }), "p99-nogc-us")
			b.ReportMetric(avg(func(r result) float64 { return r.PingMicros }), "ping-us")
			b.ReportMetric(avg(func(r result) float64 { return float64(r.WatchLists) }), "watchlists")
		})
	}
}

// BenchmarkColdStart is the scaling series: the cold start phase alone
// (no steady state, no latency) of -objects ConfigMaps, one child process
// per stack and iteration, as objects=N/impl=I. Besides the totals it
// reports the costs per object: wall time (us/object), CPU
// (cpu-us/object) and the heap the child holds after sync and GC above
// what it held before the stack started (B/object). Run it with
// -benchtime 1x against servers of different sizes (hack/bench.sh runs
// 10k, 100k and 1M).
func BenchmarkColdStart(b *testing.B) {
	names := slices.Clone(stacks.Names)
	if *reverse {
		slices.Reverse(names)
	}
	n := float64(*nObjects)
	for _, name := range names {
		b.Run(fmt.Sprintf("objects=%d/impl=%s", *nObjects, name), func(b *testing.B) {
			var rs []result
			for b.Loop() {
				rs = append(rs, runStack(b, name, 0, 0, 0))
			}
			avg := averager(rs)
			b.ReportMetric(avg(func(r result) float64 { return r.ColdSeconds }), "s/coldstart")
			b.ReportMetric(avg(func(r result) float64 { return r.ColdCPUSeconds }), "cpu-s/coldstart")
			b.ReportMetric(avg(func(r result) float64 { return r.PeakRSSMiB }), "peak-RSS-MiB")
			b.ReportMetric(avg(func(r result) float64 { return r.ColdSeconds * 1e6 / n }), "us/object")
			b.ReportMetric(avg(func(r result) float64 { return r.ColdCPUSeconds * 1e6 / n }), "cpu-us/object")
			b.ReportMetric(avg(func(r result) float64 { return (r.HeapMiB - r.HeapBaseMiB) * (1 << 20) / n }), "B/object")
			b.ReportMetric(avg(func(r result) float64 { return r.ColdUsage.SysSeconds * 1e6 / n }), "sys-us/object")
			b.ReportMetric(avg(func(r result) float64 { return float64(r.ColdUsage.MinorFaults) / n }), "minflt/object")
		})
	}
}

// averager returns the mean over rs of a figure.
func averager(rs []result) func(func(result) float64) float64 {
	return func(f func(result) float64) float64 {
		var s float64
		for _, r := range rs {
			s += f(r)
		}
		return s / float64(len(rs))
	}
}

// withLatencyOf returns phases, a result of the cold start and steady
// state, with the latency phase's figures of turns (-interleave).
func withLatencyOf(phases, turns result) result {
	phases.P50Micros, phases.P99Micros = turns.P50Micros, turns.P99Micros
	phases.LatencyGCs, phases.LatencyInGC = turns.LatencyGCs, turns.LatencyInGC
	phases.P99NoGCMicros = turns.P99NoGCMicros
	phases.FireP50Micros = turns.FireP50Micros
	phases.PingMicros = turns.PingMicros
	return phases
}

func runStack(b *testing.B, name string, events, eventObjects, latency int) result {
	b.StopTimer()
	defer b.StartTimer()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(),
		childEnv+"="+name,
		"KUBELOOP_E2E_URL="+server.URL,
		fmt.Sprintf("KUBELOOP_E2E_ARGS=%d,%d,%d,%d,%d", *nObjects, events, eventObjects, latency, *workers),
	)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s: %v\n%s", name, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var r result
	last := lines[len(lines)-1]
	if err := json.Unmarshal([]byte(strings.TrimPrefix(last, "RESULT ")), &r); err != nil {
		b.Fatalf("%s: bad result %q: %v", name, last, err)
	}
	return r
}

// runChild is the child's main: run one stack through the three phases
// and print RESULT <json>.
func runChild() int {
	name := os.Getenv(childEnv)
	// Without a logger, controller-runtime's delegating logger records a
	// promise per reconcile until it gives up after 30 s; real programs
	// set one. Both libraries discard their logs here.
	ctrllog.SetLogger(logr.Discard())
	var n, events, eventObjects, latency, workers int
	if _, err := fmt.Sscanf(os.Getenv("KUBELOOP_E2E_ARGS"), "%d,%d,%d,%d,%d", &n, &events, &eventObjects, &latency, &workers); err != nil {
		fmt.Fprintln(os.Stderr, "bad KUBELOOP_E2E_ARGS:", err)
		return 2
	}
	srv := fakeapiserver.Connect(os.Getenv("KUBELOOP_E2E_URL"))
	var turns turnTaker
	if v := os.Getenv(interleaveEnv); v != "" {
		if _, err := fmt.Sscanf(v, "%d", &turnBlock); err != nil || turnBlock <= 0 {
			fmt.Fprintf(os.Stderr, "bad %s=%q: want the events per turn\n", interleaveEnv, v)
			return 2
		}
		// Other stacks' children stay connected to the server while this
		// one runs: its events go to its own watches alone.
		srv = srv.InLane(laneOf(name))
		turns = takeTurns
	}
	r, err := child(name, srv, n, events, eventObjects, latency, workers, turns)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	js, _ := json.Marshal(r)
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "RESULT %s\n", js)
	_ = w.Flush()
	return 0
}

// child runs one stack through the three phases. With turns set (the
// parent's -interleave), the latency phase's events are run by turns,
// which calls event with k = 0, 1, ... when the parent says so, counted
// or not, until latency of them were counted.
func child(name string, srv *fakeapiserver.Process, n, events, eventObjects, latency, workers int, turns turnTaker) (result, error) {
	var r result
	st, ok := stacks.Lookup(name)
	if !ok {
		return r, fmt.Errorf("unknown stack %q", name)
	}
	if eventObjects > n || latency > n {
		return r, fmt.Errorf("-event-objects and -latency must not exceed -objects")
	}
	before, err := srv.Stats()
	if err != nil {
		return r, err
	}
	rec := newRecorder(n)
	r.HeapBaseMiB = heapMiB()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)

	// Cold start.
	cold := rec.phaseAll()
	stopColdProfile := startProfile("cold." + name)
	stopColdTrace := startTrace("cold." + name)
	usage0 := stacks.ReadUsage()
	cpu0, t0 := stacks.CPUSeconds(), time.Now()
	go func() {
		errc <- st(ctx, srv.Config(), workers, func(cm *corev1.ConfigMap) { rec.observe(cm.Name, cm.ResourceVersion) })
	}()
	select {
	case <-cold:
	case err := <-errc:
		return r, fmt.Errorf("stack stopped during cold start: %v", err)
	case <-time.After(10 * time.Minute):
		return r, fmt.Errorf("cold start: %d objects left after 10 minutes", rec.remaining.Load())
	}
	r.ColdSeconds, r.ColdCPUSeconds = time.Since(t0).Seconds(), stacks.CPUSeconds()-cpu0
	r.ColdUsage = usage0.Since()
	stopColdTrace()
	stopColdProfile()
	r.PeakRSSMiB = stacks.PeakRSSMiB()
	after, err := srv.Stats()
	if err != nil {
		return r, err
	}
	r.WatchLists = after.WatchListsProto + after.WatchListsJSON - before.WatchListsProto - before.WatchListsJSON
	r.Lists = after.ListsProto + after.ListsJSON - before.ListsProto - before.ListsJSON
	r.HeapMiB = heapMiB()

	// Steady state.
	if events > 0 {
		p, err := srv.Prepare(events, eventObjects)
		if err != nil {
			return r, err
		}
		goals := make(map[int]int64, eventObjects)
		for k := range events { // the last event of each object wins
			goals[k%eventObjects] = p.BaseRV + int64(k) + 1
		}
		done := rec.phase(goals)
		time.Sleep(200 * time.Millisecond) // let the heap settle after GC
		rec.reconciles.Store(0)
		var ms0, ms1 runtime.MemStats
		writeAllocProfile("steady-start." + name) // the base of a diff: pprof -diff_base
		runtime.ReadMemStats(&ms0)
		stopProfile := startProfile("steady." + name)
		cpu0, t0 := stacks.CPUSeconds(), time.Now()
		if _, err := srv.Fire(events); err != nil {
			return r, err
		}
		select {
		case <-done:
		case err := <-errc:
			return r, fmt.Errorf("stack stopped during steady state: %v", err)
		case <-time.After(10 * time.Minute):
			return r, fmt.Errorf("steady state: %d objects left after 10 minutes", rec.remaining.Load())
		}
		secs := time.Since(t0).Seconds()
		stopProfile()
		r.SteadyCPUMicrosPerEvent = (stacks.CPUSeconds() - cpu0) * 1e6 / float64(events)
		r.EventsPerSecond = float64(events) / secs
		r.SteadyReconciles = rec.reconciles.Load()
		runtime.ReadMemStats(&ms1)
		writeAllocProfile("steady." + name)
		r.SteadyAllocsPerEvent = float64(ms1.Mallocs-ms0.Mallocs) / float64(events)
		r.SteadyBytesPerEvent = float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(events)
	}

	// Latency.
	if latency > 0 {
		// By turns, each turn starts with an event that is not counted
		// (see -interleave-block): latency/block+1 more.
		prepared := latency
		if turns != nil {
			prepared += warmups(latency, turnBlock)
		}
		p, err := srv.Prepare(prepared, latency)
		if err != nil {
			return r, err
		}
		lat := make([]float64, 0, latency)
		fire := make([]float64, 0, latency)
		stopTrace := startTrace("latency." + name)
		stopProfile := startProfile("latency." + name)
		var marks [][probe.NumPoints]int64 // with the kubeloop_probe build tag: each event's way (probe.go)
		var sentRead []float64             // and from the server's send to the read, µs
		var noGC []float64                 // lat of the events during which no GC cycle ended
		gcs0 := gcCycles()
		// event fires the prepared event k (of ConfigMap k % latency) and
		// waits for its reconcile; counted, it records the event's figures.
		event := func(k int, counted bool) error {
			time.Sleep(2 * time.Millisecond)
			done := rec.phase(map[int]int64{k % latency: p.BaseRV + int64(k) + 1})
			t := rec.now()
			gcBefore := gcCycles()
			probe.Take()
			if _, err := srv.Fire(1); err != nil {
				return err
			}
			select {
			case <-done:
			case <-time.After(time.Minute):
				return fmt.Errorf("latency: event %d not reconciled after a minute", k)
			}
			if !counted {
				probe.Take()
				return nil
			}
			if probe.Enabled {
				marks = append(marks, probe.Take())
			}
			// From the server's sending of the event (read just before
			// the write that sends it, on the clock both processes share)
			// to the completion of the reconcile that saw it.
			st, err := srv.Stats()
			if err != nil {
				return err
			}
			d := rec.completedAtMono() - st.LastWatchFlush
			if st.LastWatchFlush == 0 || d < 0 {
				return fmt.Errorf("latency: event %d: reconciled at %d, sent at %d", k, rec.completedAtMono(), st.LastWatchFlush)
			}
			lat = append(lat, float64(d)/1e3)
			if gcCycles() == gcBefore {
				noGC = append(noGC, float64(d)/1e3)
			} else {
				r.LatencyInGC++
			}
			if probe.Enabled {
				// The probe's clock and the server's are both CLOCK_MONOTONIC,
				// apart by a fixed offset.
				off := fakeapiserver.MonotonicNow() - probe.Now()
				sr := -1.0 // none: the read was not marked
				if m := marks[len(marks)-1]; m[probe.Read] != 0 {
					sr = float64(m[probe.Read]+off-st.LastWatchFlush) / 1e3
				}
				sentRead = append(sentRead, sr)
			}
			if trace.IsEnabled() { // both ends of the event on the monotonic clock, to place it in the trace
				trace.Log(ctx, "latency", fmt.Sprintf("sent=%d done=%d now=%d", st.LastWatchFlush, rec.completedAtMono(), fakeapiserver.MonotonicNow()))
			}
			// From sending the trigger, which includes the trigger
			// request's way to the server (the method before the
			// server timed its sends; kept for comparison).
			fire = append(fire, float64((rec.completedAt() - t).Microseconds()))
			return nil
		}
		if turns != nil {
			err = turns(latency, event)
		} else {
			for k := range latency {
				if err = event(k, true); err != nil {
					break
				}
			}
		}
		if err != nil {
			return r, err
		}
		stopTrace()
		stopProfile()
		if probe.Enabled {
			printProbe(os.Stderr, name, sentRead, marks)
			// The same for the slowest 2% of the events: where the tail's
			// time goes.
			tr, tm := tailOf(lat, sentRead, marks, 0.98)
			printProbe(os.Stderr, name+"-tail", tr, tm)
		}
		r.LatencyGCs = int(gcCycles() - gcs0)
		if err := writeLatencies(name, lat); err != nil {
			return r, err
		}
		slices.Sort(lat)
		slices.Sort(fire)
		slices.Sort(noGC)
		r.P50Micros, r.P99Micros = lat[len(lat)/2], lat[len(lat)*99/100]
		if len(noGC) > 0 {
			r.P99NoGCMicros = noGC[len(noGC)*99/100]
		}
		r.FireP50Micros = fire[len(fire)/2]
		pings := make([]float64, 0, 100)
		for range 100 {
			t := time.Now()
			if err := srv.Ping(); err != nil {
				return r, err
			}
			pings = append(pings, float64(time.Since(t).Microseconds()))
		}
		slices.Sort(pings)
		r.PingMicros = pings[len(pings)/2]
	}
	return r, nil
}

func heapMiB() float64 {
	var ms runtimeMemStats
	readHeap(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

// startProfile writes a CPU profile of a phase to
// writeLatencies writes the latency phase's event-to-reconcile times (µs,
// one per line, in the order the events were sent) to
// $KUBELOOP_E2E_LATENCIES.<stack> when that variable is set: for the
// spread of a percentile within one run (BENCHMARKS-perf.md).
func writeLatencies(name string, lat []float64) error {
	prefix := os.Getenv("KUBELOOP_E2E_LATENCIES")
	if prefix == "" {
		return nil
	}
	var b strings.Builder
	for _, l := range lat {
		fmt.Fprintf(&b, "%.2f\n", l)
	}
	return os.WriteFile(prefix+"."+name, []byte(b.String()), 0o644)
}

// $KUBELOOP_E2E_CPUPROFILE.<phase>.<stack> when that variable is set, at
// $KUBELOOP_E2E_PROFILE_HZ samples a second if set (phases: cold, steady,
// latency).
func startProfile(name string) (stop func()) {
	hz, _ := strconv.Atoi(os.Getenv("KUBELOOP_E2E_PROFILE_HZ"))
	return profiling.CPU(os.Getenv("KUBELOOP_E2E_CPUPROFILE"), name, hz)
}

// writeAllocProfile writes the allocations so far (pprof's allocs
// profile: alloc_space and alloc_objects since the process started) to
// $KUBELOOP_E2E_MEMPROFILE.<name> when that variable is set.
func writeAllocProfile(name string) {
	path := os.Getenv("KUBELOOP_E2E_MEMPROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path + "." + name)
	if err != nil {
		return
	}
	defer f.Close()
	runtime.GC() // the profile holds the allocations up to the last GC
	_ = pprof.Lookup("allocs").WriteTo(f, 0)
}

// startTrace writes an execution trace of a phase to
// $KUBELOOP_E2E_TRACE.<phase>.<stack> when that variable is set.
func startTrace(name string) (stop func()) {
	path := os.Getenv("KUBELOOP_E2E_TRACE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path + "." + name)
	if err != nil {
		return func() {}
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return func() {}
	}
	return func() { trace.Stop(); f.Close() }
}
