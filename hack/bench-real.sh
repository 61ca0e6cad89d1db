#!/usr/bin/env bash
# bench-real.sh runs the end-to-end comparison of bench/real (kubeloop
# against controller-runtime v0.25.2 and client-go v0.37.2) and kubeloop's
# leader failover against a real control plane (envtest: etcd and
# kube-apiserver on loopback, from `make tools`), and writes
# BENCHMARKS-real.md. Opt-in: `make bench-real` (about 4 minutes on 2 cores).
#
#   hack/bench-real.sh                  # 5 rounds, 5,000 ConfigMaps
#   BENCH_COUNT=3 hack/bench-real.sh    # fewer rounds
#   BENCH_QUICK=1 hack/bench-real.sh    # small counts, to try the pipeline
#
# Each round is one process per benchmark with a fresh control plane
# (-count 1, so the stacks interleave; every other round reverses their
# order), GOMAXPROCS=2, summarised by benchstat. Raw outputs stay in
# $BENCH_OUT (a temporary directory by default).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
count="${BENCH_COUNT:-5}"
out="${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/kubeloop-bench-real.XXXXXX")}"
mkdir -p "$out"
benchstat="go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"
export GOMAXPROCS=2

if [[ -n "${BENCH_QUICK:-}" ]]; then
	e2e_flags=(-objects 1000 -events 1000 -event-objects 200 -latency 30 -floor)
else
	e2e_flags=(-objects 5000 -events 5000 -event-objects 1000 -latency 100 -floor)
fi

# shellcheck source=hack/bench-lib.sh
source "$root/hack/bench-lib.sh"

cd "$root/bench"
log "building into $out"
cat >>"$cmds" <<CMDS
# in bench/, with GOMAXPROCS=2; \$out is $out
go test -c -o \$out/real.test ./real/
# then $count rounds of:
CMDS
go test -c -o "$out/real.test" ./real/
go build -o "$out/realreport" ./cmd/realreport

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
others="$(ps -eo pcpu=,comm= --sort=-pcpu | awk '$1 > 20 && $2 !~ /(\.test|etcd|kube-apiserver|ps)$/' | head -5 | tr '\n' ';')"
start=$(date +%s)
for i in $(seq 1 "$count"); do
	order=()
	if (( i % 2 == 0 )); then order=(-reverse); fi
	log "round $i/$count: end to end"
	run "$out/real.txt" "$out/real.test" -test.run '^$' -test.bench 'BenchmarkRealE2E' -test.benchtime 1x -test.count 1 "${e2e_flags[@]}" "${order[@]}"
	log "round $i/$count: leader failover"
	run "$out/real.txt" "$out/real.test" -test.run '^$' -test.bench 'BenchmarkRealFailover' -test.benchtime 1x -test.count 1 -objects 0 -events 0 -event-objects 0 -latency 0
done
elapsed=$(( $(date +%s) - start ))
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

cat >>"$cmds" <<CMDS
# summary
$benchstat -col /impl \$out/real.txt
go run ./cmd/realreport -o ../BENCHMARKS-real.md -machine machine.txt -commands commands.txt -benchstat real.stat.txt \$out/real.txt
CMDS
$benchstat -col /impl "$out/real.txt" >"$out/real.stat.txt" 2>/dev/null || true

shared="no other heavy process was seen"
if [[ -n "$others" ]] || awk -v l="${load_before%% *}" 'BEGIN { exit !(l > 1.0) }'; then
	shared="**yes** (load average before the run: $load_before; after: $load_after; busy processes at the start: ${others:-none listed}). Absolute figures are noisy; the stacks ran interleaved against the same control plane"
fi
{
	echo "- CPUs: $(nproc) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
	echo "- memory: $(free -h | awk '/^Mem:/ {print $2}')"
	echo "- $(go version)"
	echo "- kernel: $(uname -sr)"
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); suite took $((elapsed / 60)) min $((elapsed % 60)) s, $count rounds"
	echo "- GOMAXPROCS=2 for the benchmark processes, etcd and kube-apiserver (envtest: kube-apiserver $(grep -o 'KubeAPIServerVersion = "[^"]*"' "$root/envtest/binaries.go" | cut -d'"' -f2), etcd $(grep -o 'EtcdVersion  *= "[^"]*"' "$root/envtest/binaries.go" | cut -d'"' -f2)), all on the same cores"
	echo "- objects: ${e2e_flags[*]}"
	echo "- shared machine: $shared"
} >"$out/machine.txt"

"$out/realreport" -o "$root/BENCHMARKS-real.md" -machine "$out/machine.txt" -commands "$cmds" -benchstat "$out/real.stat.txt" "$out/real.txt"
log "wrote $root/BENCHMARKS-real.md (raw results in $out)"
