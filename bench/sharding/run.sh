#!/usr/bin/env bash
# run.sh runs the sharding benchmarks of bench/sharding against a real
# control plane (`make tools`), one process per benchmark (each starts its
# own control plane and creates its own objects), GOMAXPROCS=2, and prints
# benchstat's summary, then the recovery scenarios of cmd/recovery with
# their targets. `make bench-sharding` runs it (about 25 minutes on 2
# cores; BENCH_COUNT=1: 11 minutes).
#
#   bench/sharding/run.sh                  # 3 runs of each figure
#   BENCH_COUNT=1 bench/sharding/run.sh    # one run, to try it
#
# Raw outputs stay in $BENCH_OUT (a temporary directory by default).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
count="${BENCH_COUNT:-3}"
out="${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/kubeloop-bench-sharding.XXXXXX")}"
mkdir -p "$out"
benchstat="go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"
export GOMAXPROCS=2

cd "$here/.."
go test -c -o "$out/sharding.test" ./sharding/
cd "$here"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for bench in BenchmarkShardedThroughput BenchmarkShardedHeap BenchmarkSharderHeap BenchmarkShardingModes; do
	echo "# $bench" >&2
	"$out/sharding.test" -test.run '^$' -test.bench "^$bench\$" -test.benchtime 1x -test.count "$count" \
		-objects 3000 -work 5ms | tee -a "$out/sharding.txt"
done
# Recovery from a killed replica, every replica its own OS process, with
# the targets (LeaseDuration + 3 s) and met / not met; RECOVERY_ARGS adds
# flags (-workers 4, -scenarios kill, ...; see cmd/recovery).
echo "# recovery (kill, kill-sharder, scaleout)" >&2
(cd "$here/.." && go build -o "$out/recovery" ./sharding/cmd/recovery)
# shellcheck disable=SC2086
"$out/recovery" -runs "$count" ${RECOVERY_ARGS:-} | tee "$out/recovery.txt" || echo "# recovery: a run failed (see above)" >&2
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
$benchstat "$out/sharding.txt" | tee "$out/sharding.stat.txt"
echo "# raw results in $out" >&2
