package e2e_bench

import (
	"runtime"
	"runtime/metrics"
)

type runtimeMemStats = runtime.MemStats

func readHeap(ms *runtime.MemStats) {
	runtime.GC()
	runtime.ReadMemStats(ms)
}

// gcCycles returns the number of GC cycles completed so far.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
