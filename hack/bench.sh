#!/usr/bin/env bash
# bench.sh runs the side-by-side benchmarks of bench/ (kubeloop against
# client-go v0.37.2 and controller-runtime v0.25.2) and writes BENCHMARKS.md.
#
#   hack/bench.sh                 # the full suite (~18 minutes on 2 cores)
#   BENCH_COUNT=3 hack/bench.sh   # fewer runs per figure
#   BENCH_QUICK=1 hack/bench.sh   # small object counts, to try the pipeline
#
# Every comparison is one test binary holding every implementation, run
# BENCH_COUNT times in a row (-count 1 each, so the implementations
# interleave) with GOMAXPROCS=2, summarised by benchstat as medians.
# Raw outputs stay in $BENCH_OUT (a temporary directory by default).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
count="${BENCH_COUNT:-6}"
out="${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/kubeloop-bench.XXXXXX")}"
mkdir -p "$out"
benchstat="go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"
export GOMAXPROCS=2

if [[ -n "${BENCH_QUICK:-}" ]]; then
	cache_flags=(-configmaps 10000 -pods 1000 -secrets 1000)
	read_flags=(-configmaps 10000 -pods 0 -secrets 0)
	e2e_flags=(-objects 10000 -events 20000 -event-objects 2000 -latency 100)
	queue_time=(-test.benchtime 0.2s)
else
	cache_flags=(-configmaps 100000 -pods 10000 -secrets 10000)
	read_flags=(-configmaps 100000 -pods 0 -secrets 0)
	e2e_flags=(-objects 100000 -events 100000 -event-objects 10000 -latency 1000)
	queue_time=(-test.benchtime 0.5s)
fi

# shellcheck source=hack/bench-lib.sh
source "$root/hack/bench-lib.sh"

cd "$root/bench"
log "building test binaries into $out"
cat >>"$cmds" <<CMDS
# in bench/, with GOMAXPROCS=2; \$out is $out
go test -c -o \$out/workqueue.test ./workqueue/
go test -c -o \$out/cache.test ./cache/
go test -c -o \$out/e2e.test ./e2e/
go build -o \$out/fakeapiserver ./cmd/fakeapiserver   # KUBELOOP_FAKEAPISERVER=\$out/fakeapiserver
# then $count rounds of:
CMDS
go test -c -o "$out/workqueue.test" ./workqueue/
go test -c -o "$out/cache.test" ./cache/
go test -c -o "$out/e2e.test" ./e2e/
go build -o "$out/fakeapiserver" ./cmd/fakeapiserver
go build -o "$out/benchreport" ./cmd/benchreport
export KUBELOOP_FAKEAPISERVER="$out/fakeapiserver"

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
others="$(ps -eo pcpu=,comm= --sort=-pcpu | awk '$1 > 20 && $2 !~ /(\.test|fakeapiserver|ps)$/' | head -5 | tr '\n' ';')"
start=$(date +%s)

for i in $(seq 1 "$count"); do
	# Alternate the order of the implementations inside the cache and end
	# to end processes, so that none of them always runs first.
	order=()
	if (( i % 2 == 0 )); then order=(-reverse); fi
	log "round $i/$count: workqueue"
	run "$out/workqueue.txt" "$out/workqueue.test" -test.run '^$' -test.bench 'BenchmarkQueue$' -test.benchmem -test.count 1 "${queue_time[@]}"
	log "round $i/$count: cache sync and memory"
	run "$out/cache-sync.txt" "$out/cache.test" -test.run '^$' -test.bench 'BenchmarkCacheSync' -test.benchtime 1x -test.count 1 "${cache_flags[@]}" "${order[@]}"
	log "round $i/$count: cache reads"
	run "$out/cache-read.txt" "$out/cache.test" -test.run '^$' -test.bench 'BenchmarkCacheRead' -test.benchmem -test.benchtime 0.5s -test.count 1 "${read_flags[@]}" "${order[@]}"
	log "round $i/$count: end to end"
	run "$out/e2e.txt" "$out/e2e.test" -test.run '^$' -test.bench 'BenchmarkE2E' -test.benchtime 1x -test.count 1 "${e2e_flags[@]}" "${order[@]}"
done
elapsed=$(( $(date +%s) - start ))
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

cat >>"$cmds" <<CMDS
# summaries (benchreport reads the CSV)
$benchstat -col /impl \$out/<comparison>.txt
$benchstat -format csv -col /impl \$out/<comparison>.txt > <comparison>.csv
go run ./cmd/benchreport -o ../BENCHMARKS.md -machine machine.txt -commands commands.txt workqueue=... cache-sync=... cache-read=... e2e=...
CMDS

args=()
for c in workqueue cache-sync cache-read e2e; do
	$benchstat -col /impl "$out/$c.txt" >"$out/$c.stat.txt" 2>/dev/null
	$benchstat -format csv -col /impl "$out/$c.txt" >"$out/$c.csv" 2>/dev/null
	# benchreport includes <name>.txt beside <name>.csv: give it the summary.
	mkdir -p "$out/report"
	cp "$out/$c.csv" "$out/report/$c.csv"
	cp "$out/$c.stat.txt" "$out/report/$c.txt"
	args+=("$c=$out/report/$c.csv")
done

shared="no other heavy process was seen"
if [[ -n "$others" ]] || awk -v l="${load_before%% *}" 'BEGIN { exit !(l > 1.0) }'; then
	shared="**yes**: the machine was shared with other engineers' test runs (load average before the run: $load_before; after: $load_after; busy processes at the start: ${others:-none listed}). Absolute figures are therefore noisy; the ratios compare implementations run interleaved in the same processes and rounds"
fi
{
	echo "- CPUs: $(nproc) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
	echo "- memory: $(free -h | awk '/^Mem:/ {print $2}')"
	echo "- $(go version)"
	echo "- kernel: $(uname -sr)"
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); suite took $((elapsed / 60)) min $((elapsed % 60)) s, $count rounds"
	echo "- GOMAXPROCS=2 for every benchmark process and for the fake API server"
	echo "- shared machine: $shared"
} >"$out/machine.txt"

"$out/benchreport" -o "$root/BENCHMARKS.md" -machine "$out/machine.txt" -commands "$cmds" "${args[@]}"
# The store's table-or-map comparison and the sharding benchmarks (make
# bench-sharding, a real control plane) run on their own; their last
# reports are kept beside and appended here.
for extra in BENCHMARKS-store.md BENCHMARKS-sharding.md; do
	if [[ -f "$root/$extra" ]]; then
		{ echo; cat "$root/$extra"; } >>"$root/BENCHMARKS.md"
	fi
done
log "wrote $root/BENCHMARKS.md (raw results in $out)"
