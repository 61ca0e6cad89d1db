#!/usr/bin/env bash
# bench.sh runs the side-by-side benchmarks of bench/ (kubeloop against
# client-go v0.37.2 and controller-runtime v0.25.2) and writes BENCHMARKS.md.
#
#   hack/bench.sh                 # the full suite (~27 minutes on 2 cores)
#   BENCH_COUNT=3 hack/bench.sh   # fewer runs per figure
#   BENCH_QUICK=1 hack/bench.sh   # small object counts, to try the pipeline
#   BENCH_REPORT=/tmp/b.md hack/bench.sh   # write the report elsewhere
#   BENCH_SERIES="10000:3 1000000:1" hack/bench.sh   # other sizes:rounds
#
# Every comparison is one test binary holding every implementation, run
# BENCH_COUNT times in a row (-count 1 each, so the implementations
# interleave) with GOMAXPROCS=2, summarised by benchstat as medians.
# Raw outputs stay in $BENCH_OUT (a temporary directory by default).
#
# The scaling series (BenchmarkColdStart: cold start alone at 10k, 100k and
# 1M ConfigMaps) runs after the rounds, one fake API server per size kept
# across that size's rounds (encoding 1M objects takes a minute or two),
# fewer rounds at 1M. The report ($BENCH_REPORT, ../BENCHMARKS.md by
# default) gets its plot beside it, as <report>-scaling.svg.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
count="${BENCH_COUNT:-6}"
out="${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/kubeloop-bench.XXXXXX")}"
report="${BENCH_REPORT:-$root/BENCHMARKS.md}"
mkdir -p "$out"
benchstat="go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"
export GOMAXPROCS=2

if [[ -n "${BENCH_QUICK:-}" ]]; then
	cache_flags=(-configmaps 10000 -pods 1000 -secrets 1000)
	read_flags=(-configmaps 10000 -pods 0 -secrets 0)
	e2e_flags=(-objects 10000 -events 20000 -event-objects 2000 -latency 100 -floor -interleave -interleave-block 20)
	queue_time=(-test.benchtime 0.2s)
	read -r -a series <<<"${BENCH_SERIES:-1000:2 10000:2 50000:1}"
else
	cache_flags=(-configmaps 100000 -pods 10000 -secrets 10000)
	read_flags=(-configmaps 100000 -pods 0 -secrets 0)
	e2e_flags=(-objects 100000 -events 100000 -event-objects 10000 -latency 3000 -floor -interleave -interleave-block 50)
	queue_time=(-test.benchtime 0.5s)
	read -r -a series <<<"${BENCH_SERIES:-10000:6 100000:5 1000000:3}"
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
# then $count rounds of (the e2e run with KUBELOOP_E2E_LATENCIES=\$out/latency/r<round>,
# whose files give benchreport -latencies the pooled p50 and p99):
CMDS
go test -c -o "$out/workqueue.test" ./workqueue/
go test -c -o "$out/cache.test" ./cache/
go test -c -o "$out/e2e.test" ./e2e/
go build -o "$out/fakeapiserver" ./cmd/fakeapiserver
go build -o "$out/benchreport" ./cmd/benchreport
go build -o "$out/wakestalls" ./cmd/wakestalls
export KUBELOOP_FAKEAPISERVER="$out/fakeapiserver"
rm -rf "$out/latency" && mkdir -p "$out/latency"

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
others="$(ps -eo pcpu=,comm= --sort=-pcpu | awk '$1 > 20 && $2 !~ /(\.test|fakeapiserver|ps)$/' | head -5 | tr '\n' ';')"
# How late this machine wakes an idle process, before and after the suite:
# the latency phase's p99 sits near the share of late wake-ups.
log "wake-up stalls (about 11 s)"
stalls_before="$("$out/wakestalls" -n 5000)"
start=$(date +%s)

# timed runs one part of a round and adds its seconds to took[$1].
declare -A took=()
timed() {
	local part="$1"; shift
	local t0=$SECONDS
	"$@"
	took[$part]=$(( ${took[$part]:-0} + SECONDS - t0 ))
}

for i in $(seq 1 "$count"); do
	# Alternate the order of the implementations inside the cache and end
	# to end processes, so that none of them always runs first.
	order=()
	if (( i % 2 == 0 )); then order=(-reverse); fi
	log "round $i/$count: workqueue"
	timed workqueue run "$out/workqueue.txt" "$out/workqueue.test" -test.run '^$' -test.bench 'BenchmarkQueue$' -test.benchmem -test.count 1 "${queue_time[@]}"
	log "round $i/$count: cache sync and memory"
	timed cache-sync run "$out/cache-sync.txt" "$out/cache.test" -test.run '^$' -test.bench 'BenchmarkCacheSync' -test.benchtime 1x -test.count 1 "${cache_flags[@]}" "${order[@]}"
	log "round $i/$count: cache reads"
	timed cache-read run "$out/cache-read.txt" "$out/cache.test" -test.run '^$' -test.bench 'BenchmarkCacheRead' -test.benchmem -test.benchtime 0.5s -test.count 1 "${read_flags[@]}" "${order[@]}"
	log "round $i/$count: end to end"
	KUBELOOP_E2E_LATENCIES="$out/latency/r$i" timed e2e run "$out/e2e.txt" "$out/e2e.test" -test.run '^$' -test.bench 'BenchmarkE2E' -test.benchtime 1x -test.count 1 "${e2e_flags[@]}" "${order[@]}"
done

# serve starts a fake API server holding $1 ConfigMaps as a coprocess and
# sets server_url; unserve closes its standard input, which ends it.
serve() {
	coproc FAKE { exec "$out/fakeapiserver" -configmaps "$1"; }
	fake_pid=$FAKE_PID
	fake_in=${FAKE[1]}
	local line
	if ! read -r line <&"${FAKE[0]}" || [[ "$line" != READY\ * ]]; then
		log "fakeapiserver with $1 ConfigMaps did not start"
		exit 1
	fi
	server_url="${line#READY }"
}
unserve() { exec {fake_in}>&-; wait "$fake_pid" || true; }

echo "# the scaling series, per size N:rounds in ${series[*]}: one server kept across the rounds" >>"$cmds"
echo "\$out/fakeapiserver -configmaps N   # KUBELOOP_E2E_SERVER=its URL for the rounds" >>"$cmds"
for sr in "${series[@]}"; do
	n="${sr%%:*}" rounds="${sr##*:}"
	log "scaling series: $n ConfigMaps: starting the fake API server"
	t0=$SECONDS
	serve "$n"
	took[serve-$n]=$(( SECONDS - t0 ))
	for i in $(seq 1 "$rounds"); do
		order=()
		if (( i % 2 == 0 )); then order=(-reverse); fi
		log "scaling series: $n ConfigMaps, round $i/$rounds"
		KUBELOOP_E2E_SERVER="$server_url" timed "coldstart-$n" run "$out/coldstart.txt" "$out/e2e.test" -test.run '^$' -test.bench 'BenchmarkColdStart' -test.benchtime 1x -test.count 1 -objects "$n" "${order[@]}"
	done
	unserve
done
elapsed=$(( $(date +%s) - start ))
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
stalls_after="$("$out/wakestalls" -n 5000)"

cat >>"$cmds" <<CMDS
# summaries (benchreport reads the CSV)
$benchstat -col /impl \$out/<comparison>.txt
$benchstat -format csv -col /impl \$out/<comparison>.txt > <comparison>.csv
go run ./cmd/benchreport -o ../BENCHMARKS.md -machine machine.txt -commands commands.txt -latencies \$out/latency workqueue=... cache-sync=... cache-read=... e2e=... coldstart=...
CMDS

args=()
for c in workqueue cache-sync cache-read e2e coldstart; do
	$benchstat -col /impl "$out/$c.txt" >"$out/$c.stat.txt" 2>/dev/null
	$benchstat -format csv -col /impl "$out/$c.txt" >"$out/$c.csv" 2>/dev/null
	# benchreport includes <name>.txt beside <name>.csv: give it the summary.
	mkdir -p "$out/report"
	cp "$out/$c.csv" "$out/report/$c.csv"
	cp "$out/$c.stat.txt" "$out/report/$c.txt"
	# and the raw lines, for each target's spread over the rounds.
	cp "$out/$c.txt" "$out/report/$c.raw.txt"
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
	parts=()
	for p in workqueue cache-sync cache-read e2e; do parts+=("$p ${took[$p]:-0} s"); done
	for sr in "${series[@]}"; do
		n="${sr%%:*}"
		parts+=("scaling series at $n: server start ${took[serve-$n]:-0} s, ${sr##*:} rounds ${took[coldstart-$n]:-0} s")
	done
	echo "- time per part (all rounds): $(IFS=';'; echo "${parts[*]}" | sed 's/;/; /g')"
	echo "- GOMAXPROCS=2 for every benchmark process and for the fake API server"
	echo "- transparent huge pages: $(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown) (with madvise, Go's heap is in 4 KiB pages, and the 1M cold start's CPU per object depends on the cost of address translation; see BENCHMARKS-perf.md, issue 33 item 2)"
	echo "- wake-up stalls (\`bench/cmd/wakestalls\`, a lone Go process sleeping 2 ms as the latency phase does between events): before the suite $stalls_before; after it $stalls_after. A stack's p99 over the latency phase's events moves with how many of these land in its run (BENCHMARKS-perf.md, issue 33 item 2)"
	echo "- shared machine: $shared"
} >"$out/machine.txt"

"$out/benchreport" -o "$report" -machine "$out/machine.txt" -commands "$cmds" -latencies "$out/latency" "${args[@]}"
# The store's table-or-map comparison and the sharding benchmarks (make
# bench-sharding, a real control plane) run on their own; their last
# reports are kept beside and appended here.
for extra in BENCHMARKS-perf.md BENCHMARKS-store.md BENCHMARKS-sharding.md; do
	if [[ -f "$root/$extra" ]]; then
		{ echo; cat "$root/$extra"; } >>"$report"
	fi
done
log "wrote $report (raw results in $out)"
