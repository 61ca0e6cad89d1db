package main

import (
	"fmt"
	"strconv"
	"strings"
)

// target is one goal of the workqueue, cache or controller issue, as a
// bound on kubeloop's figure over a peer's (or, with zero, on kubeloop's
// figure itself).
type target struct {
	issue, what      string
	table, row, unit string
	peer, peerRow    string  // peerRow "" means row
	max              float64 // the ratio must be at most max
	zero             bool    // kubeloop's figure must be 0
	// growth: kubeloop's figure at the largest size of the scaling series
	// over its own at the smallest (row and peerRow are found in table;
	// what is completed with the sizes).
	growth bool
}

var targets = []target{
	{issue: "workqueue", what: "0 allocations per Add/Get/Done cycle (serial, metrics off)", table: "workqueue", row: "Queue/case=serial/metrics=off", unit: "allocs/op", zero: true},
	{issue: "workqueue", what: "0 allocations per Add/Get/Done cycle (serial, metrics on)", table: "workqueue", row: "Queue/case=serial/metrics=on", unit: "allocs/op", zero: true},
	{issue: "workqueue", what: "with metrics: ≤0.5x client-go's time (dup50, 1 producer, 1 worker)", table: "workqueue", row: "Queue/case=dup50_p1w1/metrics=on", unit: "sec/op", peer: "clientgo", max: 0.5},
	{issue: "workqueue", what: "with metrics: ≤0.15x controller-runtime priority queue's time (dup50 p1w1)", table: "workqueue", row: "Queue/case=dup50_p1w1/metrics=on", unit: "sec/op", peer: "crpq", max: 0.15},
	{issue: "workqueue", what: "without metrics: within 1.1x of client-go (dup50 p1w1)", table: "workqueue", row: "Queue/case=dup50_p1w1/metrics=off", unit: "sec/op", peer: "clientgo", max: 1.1},
	{issue: "workqueue", what: "idle handoff (pingpong) ≤0.3x the priority queue's, metrics on", table: "workqueue", row: "Queue/case=pingpong/metrics=on", unit: "sec/op", peer: "crpq", max: 0.3},
	{issue: "workqueue", what: "idle handoff (pingpong) ≤0.3x the priority queue's, metrics off", table: "workqueue", row: "Queue/case=pingpong/metrics=off", unit: "sec/op", peer: "crpq", max: 0.3},

	{issue: "cache", what: "memory per cached ConfigMap ≤0.8x controller-runtime's default (100k)", table: "cache-sync", row: "CacheSync/kind=configmaps", unit: "B/object", peer: "controller-runtime", max: 0.8},
	{issue: "cache", what: "memory per cached Pod ≤0.8x controller-runtime's default (10k)", table: "cache-sync", row: "CacheSync/kind=pods", unit: "B/object", peer: "controller-runtime", max: 0.8},
	{issue: "cache", what: "no-copy Get (client.GetShared) ≥20x faster than controller-runtime's default (deep-copying) Get", table: "cache-read", row: "CacheRead/case=get_shared", unit: "sec/op", peer: "controller-runtime", peerRow: "CacheRead/case=get_copy", max: 0.05},
	{issue: "cache", what: "time until a 100k-ConfigMap cache is synced ≤0.7x controller-runtime's", table: "cache-sync", row: "CacheSync/kind=configmaps", unit: "s/sync", peer: "controller-runtime", max: 0.7},

	{issue: "controller", what: "cold start, 100k ConfigMaps until all reconciled: time ≤0.6x controller-runtime's", table: "e2e", row: "E2E", unit: "s/coldstart", peer: "controller-runtime", max: 0.6},
	{issue: "controller", what: "cold start, 100k ConfigMaps until all reconciled: CPU ≤0.6x controller-runtime's", table: "e2e", row: "E2E", unit: "cpu-s/coldstart", peer: "controller-runtime", max: 0.6},
	{issue: "controller", what: "steady state: client CPU per event ≤0.6x controller-runtime's", table: "e2e", row: "E2E", unit: "cpu-us/event", peer: "controller-runtime", max: 0.6},
	{issue: "controller", what: "event-to-reconcile latency p50 ≤0.8x controller-runtime's", table: "e2e", row: "E2E", unit: "p50-us", peer: "controller-runtime", max: 0.8},
	{issue: "controller", what: "event-to-reconcile latency p99 ≤0.8x controller-runtime's", table: "e2e", row: "E2E", unit: "p99-us", peer: "controller-runtime", max: 0.8},

	{issue: "perf (21)", what: "steady state: client CPU per event ≤0.4x controller-runtime's (kubeloop's defaults)", table: "e2e", row: "E2E", unit: "cpu-us/event", peer: "controller-runtime", max: 0.4},
	{issue: "perf (21)", what: "steady state: client CPU per event ≤0.7x client-go's (kubeloop's defaults)", table: "e2e", row: "E2E", unit: "cpu-us/event", peer: "client-go", max: 0.7},
	{issue: "perf (21)", what: "event-to-reconcile latency p50 ≤0.5x controller-runtime's", table: "e2e", row: "E2E", unit: "p50-us", peer: "controller-runtime", max: 0.5},
	{issue: "perf (21)", what: "event-to-reconcile latency p50 ≤0.85x client-go's", table: "e2e", row: "E2E", unit: "p50-us", peer: "client-go", max: 0.85},
	{issue: "perf (21)", what: "event-to-reconcile latency p99 ≤0.5x controller-runtime's", table: "e2e", row: "E2E", unit: "p99-us", peer: "controller-runtime", max: 0.5},
	{issue: "perf (21)", what: "event-to-reconcile latency p99 ≤0.85x client-go's", table: "e2e", row: "E2E", unit: "p99-us", peer: "client-go", max: 0.85},
	{issue: "perf (21)", what: "cold start, 100k ConfigMaps until all reconciled: time ≤0.3x controller-runtime's", table: "e2e", row: "E2E", unit: "s/coldstart", peer: "controller-runtime", max: 0.3},
	{issue: "perf (21)", what: "cold start, 100k ConfigMaps until all reconciled: CPU ≤0.3x controller-runtime's", table: "e2e", row: "E2E", unit: "cpu-s/coldstart", peer: "controller-runtime", max: 0.3},
	{issue: "perf (21)", what: "memory per cached ConfigMap ≤0.55x controller-runtime's default (100k)", table: "cache-sync", row: "CacheSync/kind=configmaps", unit: "B/object", peer: "controller-runtime", max: 0.55},
	{issue: "perf (21)", what: "memory per cached Pod ≤0.55x controller-runtime's default (10k)", table: "cache-sync", row: "CacheSync/kind=pods", unit: "B/object", peer: "controller-runtime", max: 0.55},
	{issue: "perf (21)", what: "cold start time per object", table: "coldstart", unit: "us/object", growth: true, max: 1.15},
	{issue: "perf (21)", what: "cold start CPU per object", table: "coldstart", unit: "cpu-us/object", growth: true, max: 1.15},
	{issue: "perf (21)", what: "heap per object after sync and GC", table: "coldstart", unit: "B/object", growth: true, max: 1.15},
}

const ours = "kubeloop"

// render writes the report; pool, if not empty, says how the latency
// percentiles were pooled (see -latencies).
func render(tables []*table, machine, commands string, raws map[string]string, runs map[string]rounds, svgLink, pool string) string {
	byName := map[string]*table{}
	for _, t := range tables {
		byName[t.name] = t
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Benchmarks\n\n")
	p("Generated by `make bench` (hack/bench.sh and bench/cmd/benchreport); do not edit by hand.\n")
	p("Every figure is the median of the runs (benchstat); ratios are kubeloop / peer, so below 1 is better for kubeloop\n")
	p("except for events/s, where above 1 is better.")
	if pool != "" {
		p(" %s", pool)
	}
	p("\n\n")
	p("## Machine\n\n%s\n\n", machine)
	p("## Targets\n\n")
	p("| issue | target | kubeloop | peer | ratio | bound | met | per round: spread (rounds met) |\n|---|---|---|---|---|---|---|---|\n")
	met, total, belowFloor := 0, 0, 0
	for _, tg := range targets {
		t := byName[tg.table]
		if tg.growth {
			tg = growthTarget(tg, t)
		}
		if t == nil {
			p("| %s | %s | – | – | – | – | not run | – |\n", tg.issue, tg.what)
			total++
			continue
		}
		ov, ok := t.get(tg.row, tg.unit, ours)
		if !ok {
			p("| %s | %s | – | – | – | – | no data | – |\n", tg.issue, tg.what)
			total++
			continue
		}
		total++
		if tg.zero {
			ok := ov == 0
			if ok {
				met++
			}
			p("| %s | %s | %s | – | – | = 0 | %s | – |\n", tg.issue, tg.what, withUnit(ov, tg.unit), yesNo(ok))
			continue
		}
		prow := tg.peerRow
		if prow == "" {
			prow = tg.row
		}
		pv, ok := t.get(prow, tg.unit, tg.peer)
		if !ok || pv == 0 {
			p("| %s | %s | %s | – | – | ≤%.2fx | no data | – |\n", tg.issue, tg.what, format(ov, tg.unit), tg.max)
			continue
		}
		r := ov / pv
		good := r <= tg.max
		verdict := yesNo(good)
		if good {
			met++
		} else if f, ok := latencyFloor(t, tg); ok && tg.max*pv < f {
			verdict = fmt.Sprintf("not met: the bound, %s, is below the floor's %s", withUnit(tg.max*pv, tg.unit), withUnit(f, tg.unit))
			belowFloor++
		}
		peer := tg.peer
		if tg.growth {
			n, _ := strconv.Atoi(strings.TrimPrefix(tg.peerRow, seriesPrefix))
			peer = "kubeloop at " + human(n)
		}
		per := spreadCell(runs[tg.table].spread(tg.row, ours, prow, tg.peer, tg.unit), tg.max)
		p("| %s | %s | %s | %s %s | %.3fx | ≤%.2fx | %s | %s |\n", tg.issue, tg.what, withUnit(ov, tg.unit), peer, withUnit(pv, tg.unit), r, tg.max, verdict, per)
	}
	p("\n%d of %d targets met (by the medians).", met, total)
	if belowFloor > 0 {
		p(" %d of those not met ask for less than the floor (impl=floor: the watch read, decoded with client-go's decoder and\n", belowFloor)
		p("handed to one worker, no cache or queue) took in the same run: a controller that decodes its objects as client-go\n")
		p("does could not meet them on this machine; see \"Latency and CPU floor\".")
	}
	p("\n\n")
	p("The growth targets read issue 21's \"within 15%%\" as: kubeloop's cost per object at the largest size of the\n")
	p("scaling series (1M ConfigMaps in `make bench`) is at most 1.15x its cost per object at the smallest (10k),\n")
	p("each the total over the object count (fixed start-up costs included); a cost that falls with size meets them.\n\n")
	if e := byName["e2e"]; e != nil {
		p("%s", renderFloor(e))
	}
	if st := byName["coldstart"]; st != nil {
		p("%s", renderScaling(st, svgLink))
	}
	p("## Commands\n\n```sh\n%s\n```\n\n", commands)
	p("%s\n", method)
	p("## All figures\n\n")
	p("Rows are benchmark cases, one line per unit. sec/op is per operation as the case defines it\n")
	p("(see bench/README.md); custom units are explained in each package's doc comment.\n\n")
	for _, t := range tables {
		peers := make([]string, 0, len(t.impls))
		for _, im := range t.impls {
			if im != ours {
				peers = append(peers, im)
			}
		}
		p("### %s\n\n| case | unit | kubeloop |", t.name)
		for _, pe := range peers {
			p(" %s | kubeloop / %s |", pe, pe)
		}
		p("\n|---|---|---|")
		for range peers {
			p("---|---|")
		}
		p("\n")
		for _, row := range t.rows {
			for _, u := range t.units(row) {
				ov, ok := t.get(row, u, ours)
				if !ok {
					continue
				}
				p("| %s | %s | %s |", row, u, format(ov, u))
				for _, pe := range peers {
					if pv, ok := t.get(row, u, pe); ok {
						p(" %s | %s |", format(pv, u), ratio(ov, pv))
					} else {
						p(" – | – |")
					}
				}
				p("\n")
			}
		}
		p("\n")
	}
	if len(raws) > 0 {
		p("## benchstat output\n\n")
		for _, t := range tables {
			if raw, ok := raws[t.name]; ok {
				p("<details><summary>%s</summary>\n\n```\n%s\n```\n\n</details>\n\n", t.name, strings.TrimSpace(raw))
			}
		}
	}
	return b.String()
}

const method = `## Method

- **Queue** (bench/workqueue): kubeloop's workqueue against client-go's typed rate-limiting queue
  (clientgo) and controller-runtime's priority queue (crpq), keys shaped like reconcile.Request,
  with and without metrics; cases are described in bench/README.md.
- **Cache** (bench/cache): kubeloop's cache and controller-runtime's cache, each with its
  library's defaults (kubeloop strips managedFields and interns repeated strings; controller-runtime
  keeps objects as decoded), both listing and watching the same fake API server. s/sync is the time
  from Start until an event handler has seen every object (no polling); B/object is the Go heap
  held after sync and GC, with the handler removed, divided by the object count. Reads use a
  synced cache of the ConfigMaps in 100 namespaces; Gets visit all the keys in a scattered order,
  the _hot cases cycle through a working set of 1,000 of them;
  "copy" is each library's default read, "nocopy" is client.UnsafeDisableDeepCopy (the cached
  object's top level copied into the caller's struct), "shared" is each library's cheapest read:
  kubeloop's client.GetShared, which returns the cached object itself, and controller-runtime's
  no-copy Get, as it has nothing cheaper. No Get case reads the object it gets.
- **End to end** (bench/e2e): one child process per stack and run, against the fake API server
  (bench/cmd/fakeapiserver, a separate process on loopback holding the objects pre-encoded in JSON
  and protobuf; each library negotiates its default, protobuf for all three here, and its default
  initial sync: a LIST for kubeloop (cache.InitialListPaged), WatchList for controller-runtime and
  client-go, see the watchlists column). kubeloop: manager + builder;
  controller-runtime: ctrl.NewManager + builder, defaults (priority queue); client-go: shared
  informer + typed rate-limiting queue without metrics + lister. Every stack has 2 workers and a
  reconciler that reads the object (kubeloop and controller-runtime through the manager's cached
  client, which deep-copies; client-go through the lister, which does not) and does nothing else.
  CPU and peak RSS come from getrusage of the child; cold start ends when every ConfigMap has been
  reconciled; steady state pushes the MODIFIED events as fast as the server writes them and ends
  when every modified object has been reconciled at its last version (the queue deduplicates, so
  there are fewer reconciles than events); latency is from the fake server's sending of the watch event
  (CLOCK_MONOTONIC, which both processes share, read just before the write) to the moment the
  reconcile that sees the new version completes, for single events 2 ms apart; it includes the
  event's way through the kernel to the client (the same for every stack). The stacks' latency
  phases run by turns over the same seconds (-interleave: after every stack's cold start and steady
  state ran alone, in children that then ended and that give those figures, a second child per stack
  repeats them and stays connected, idle; each stack in turn then gets 50 counted events, after one that is not counted,
  while the others wait, and each event reaches its own stack's watch alone), so a stretch of late
  wake-ups on the machine falls on every stack alike (BENCHMARKS-perf.md). fire-p50-us adds the
  trigger request's way to the server (the earlier measure); ping-us is a plain round trip, for scale.
- **Floor** (impl=floor in the end-to-end table; not a peer and in no target): stacks.Floor, the least a
  consumer of the same events can do, run in the same child process with the same phases and clock
  points: one WatchList (protobuf) on a plain net/http client, each frame decoded with apimachinery's
  protobuf serializer (the WatchEvent, the runtime.Unknown envelope, the ConfigMap: client-go's decode),
  handed over one buffered channel to a single worker goroutine that records the reconcile. No cache,
  queue, deduplication or deep copy, so its cold start and heap are not comparable; its p50/p99 and its
  CPU per event show how much of a stack's figure the wire, the kernel and the decode already cost.
- **Wire** (impl=wire and impl=wire-worker; not peers and in no target): stacks.Wire, Floor's WatchList with
  nothing decoded but each frame's event type and the object's namespace, name and resourceVersion, read in place,
  and the reconcile recorded on the goroutine that reads the connection (no decode, no handover): the least any
  consumer of the watch can see on this machine. stacks.WireWorker hands each object over a buffered channel to
  one worker goroutine, as a controller must: Floor without the decode. A latency target whose bound lies below
  the floor's figure is marked so in the target table.
- **Scaling series** (BenchmarkColdStart, the rows ColdStart/objects=N): the cold start phase alone
  (no steady state, no latency) at 10k, 100k and 1M ConfigMaps, one child process per stack and run as
  above, the stacks' order alternating between rounds; one fake API server per size serves all of that
  size's rounds. us/object and cpu-us/object are the cold start's time and CPU over the object count;
  B/object is the child's Go heap after sync and GC minus its heap before the stack started (the
  benchmark's own recorder excluded), over the object count.
- The fake server does no consistency checks and serves one LIST page; it shares the 2 CPUs with the
  client, which caps events/s. Real-control-plane runs (make bench-real) are not part of this suite.
`

// latencyFloor returns the floor's figure (impl=floor) for an end-to-end
// latency target, when it ran: the least a controller took.
func latencyFloor(t *table, tg target) (float64, bool) {
	if tg.table != "e2e" || (tg.unit != "p50-us" && tg.unit != "p99-us") {
		return 0, false
	}
	return t.get(tg.row, tg.unit, "floor")
}

// renderFloor compares the stacks' latency and steady CPU with the
// reference consumer's (impl=floor), when it ran.
func renderFloor(e *table) string {
	if _, ok := e.get("E2E", "p50-us", "floor"); !ok {
		return ""
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## Latency and CPU floor\n\n")
	p("What the reference consumers (see Method) measure in the same phases. impl=floor: a plain WatchList, client-go's\n")
	p("protobuf decode, one channel to one worker, no cache or queue: the least a controller does. impl=wire-worker: the\n")
	p("same without the decode (only the name and resourceVersion are read, in place). impl=wire: that, recorded on the\n")
	p("goroutine that reads the connection, with no worker at all: what the kernel, the loopback and waking an idle\n")
	p("process cost on this machine before any client code runs. A stack's figure minus the floor's is what its library\n")
	p("adds; a latency bound below the floor's cannot be met on this machine by a controller that decodes its objects.\n\n")
	impls := []string{ours, "controller-runtime", "client-go", "floor"}
	for _, ref := range []string{"wire-worker", "wire"} {
		if _, ok := e.get("E2E", "p50-us", ref); ok {
			impls = append(impls, ref)
		}
	}
	p("| figure | %s | kubeloop / floor | kubeloop − floor |\n|---|", strings.Join(impls, " | "))
	for range impls {
		p("---|")
	}
	p("---|---|\n")
	for _, u := range []struct{ unit, what string }{
		{"p50-us", "latency p50 (µs)"}, {"p99-us", "latency p99 (µs)"}, {"cpu-us/event", "steady state CPU per event (µs)"},
	} {
		p("| %s |", u.what)
		for _, im := range impls {
			if v, ok := e.get("E2E", u.unit, im); ok {
				p(" %s |", format(v, u.unit))
			} else {
				p(" – |")
			}
		}
		o, ok1 := e.get("E2E", u.unit, ours)
		f, ok2 := e.get("E2E", u.unit, "floor")
		if ok1 && ok2 {
			p(" %s | %s |\n", ratio(o, f), format(o-f, u.unit))
		} else {
			p(" – | – |\n")
		}
	}
	p("\n")
	return b.String()
}

func yesNo(ok bool) string {
	if ok {
		return "**met**"
	}
	return "not met"
}

// withUnit is format, followed by the unit where format does not show it.
func withUnit(v float64, unit string) string {
	if strings.HasPrefix(unit, "sec/") || unit == "B/op" {
		return format(v, unit)
	}
	if per, ok := strings.CutPrefix(unit, "B/"); ok {
		return format(v, unit) + "/" + per
	}
	return format(v, unit) + " " + unit
}
