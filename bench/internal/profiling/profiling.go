// Package profiling writes CPU profiles of the benchmarks' phases when
// asked to by an environment variable (bench/e2e, bench/real).
package profiling

import (
	"os"
	"runtime"
	"runtime/pprof"
)

// CPU starts a CPU profile of a phase, written to prefix.name, when prefix
// is not empty, at hz samples a second when hz > 0 (pprof's default is
// 100; a finer rate makes StartCPUProfile warn that the rate is already
// set). The returned function stops it.
func CPU(prefix, name string, hz int) (stop func()) {
	if prefix == "" {
		return func() {}
	}
	f, err := os.Create(prefix + "." + name)
	if err != nil {
		return func() {}
	}
	if hz > 0 {
		runtime.SetCPUProfileRate(hz)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
