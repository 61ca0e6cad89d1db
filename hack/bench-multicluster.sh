#!/usr/bin/env bash
# bench-multicluster.sh runs bench/multicluster (issue 30: engage latency,
# per-cluster heap and goroutines, cold start, engage/disengage cycles, a
# blackholed cluster) and writes BENCHMARKS-multicluster.md. Opt-in:
# `make bench-multicluster` (about 8 minutes on 2 cores), separate from
# `make bench` so that it does not lengthen it.
#
#   hack/bench-multicluster.sh                  # 5 rounds
#   BENCH_COUNT=2 hack/bench-multicluster.sh    # fewer rounds
#   BENCH_REAL=0 hack/bench-multicluster.sh     # without the real control plane
#   BENCH_REPORT=/tmp/m.md hack/bench-multicluster.sh
#
# Every benchmark runs in its own process per round (heap and goroutine
# figures are the process's), GOMAXPROCS=2, the rounds interleaved. The
# fake fleet server is a child process of each. Raw outputs stay in
# $BENCH_OUT (a temporary directory by default).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
count="${BENCH_COUNT:-5}"
out="${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/kubeloop-bench-mc.XXXXXX")}"
report="${BENCH_REPORT:-$root/BENCHMARKS-multicluster.md}"
real="${BENCH_REAL:-1}"
mkdir -p "$out"
export GOMAXPROCS=2

# shellcheck source=hack/bench-lib.sh
source "$root/hack/bench-lib.sh"

cd "$root/bench"
log "building into $out"
cat >>"$cmds" <<CMDS
# in bench/, with GOMAXPROCS=2; \$out is $out
go test -c -o \$out/multicluster.test ./multicluster/
go build -o \$out/fakefleet ./cmd/fakefleet   # KUBELOOP_FAKEFLEET=\$out/fakefleet
# then $count rounds of:
CMDS
go test -c -o "$out/multicluster.test" ./multicluster/
go build -o "$out/fakefleet" ./cmd/fakefleet
go build -o "$out/mcreport" ./multicluster/mcreport
export KUBELOOP_FAKEFLEET="$out/fakefleet"

# Each entry is a -test.bench pattern and the extra flags of its run. The
# real control plane's 50 clusters also measure the heap 35 s after they
# left (x/net/http2 holds a closed connection for its 30 s health check).
benches=('BenchmarkEngage/clusters=10$' 'BenchmarkEngage/clusters=100$' 'BenchmarkEngage/clusters=1000$'
	'BenchmarkColdStart' 'BenchmarkCycles' 'BenchmarkBlackhole')
if [[ "$real" != 0 ]]; then benches+=('BenchmarkRealEngage/clusters=10$ -real' 'BenchmarkRealEngage/clusters=50$ -real -late-wait 35s'); fi

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
others="$(ps -eo pcpu=,comm= --sort=-pcpu | awk '$1 > 20 && $2 !~ /(\.test|fakefleet|etcd|kube-apiserver|ps)$/' | head -5 | tr '\n' ';')"
start=$(date +%s)
for i in $(seq 1 "$count"); do
	for entry in "${benches[@]}"; do
		read -r -a flags <<<"$entry"
		log "round $i/$count: ${flags[0]}"
		run "$out/mc.txt" "$out/multicluster.test" -test.run '^$' -test.bench "${flags[0]}" -test.benchtime 1x -test.count 1 "${flags[@]:1}"
	done
done
elapsed=$(( $(date +%s) - start ))
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

cat >>"$cmds" <<CMDS
# summary
\$out/mcreport -o ../BENCHMARKS-multicluster.md -machine machine.txt -commands commands.txt \$out/mc.txt
CMDS
shared="no other heavy process was seen"
if [[ -n "$others" ]] || awk -v l="${load_before%% *}" 'BEGIN { exit !(l > 1.0) }'; then
	shared="**yes** (load average before the run: $load_before; after: $load_after; busy processes at the start: ${others:-none listed}). Absolute figures are noisy"
fi
{
	echo "- CPUs: $(nproc) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
	echo "- memory: $(free -h | awk '/^Mem:/ {print $2}')"
	echo "- $(go version)"
	echo "- kernel: $(uname -sr)"
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); suite took $((elapsed / 60)) min $((elapsed % 60)) s, $count rounds"
	echo "- GOMAXPROCS=2 for the benchmark processes and the fake fleet server (and the real control plane), all on the same cores"
	echo "- shared machine: $shared"
} >"$out/machine.txt"

"$out/mcreport" -o "$report" -machine "$out/machine.txt" -commands "$cmds" "$out/mc.txt"
log "wrote $report (raw results in $out)"
