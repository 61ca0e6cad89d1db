package e2e_bench

import "runtime"

type runtimeMemStats = runtime.MemStats

func readHeap(ms *runtime.MemStats) {
	runtime.GC()
	runtime.ReadMemStats(ms)
}
