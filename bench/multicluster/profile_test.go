package multicluster_bench

import (
	"os"
	"runtime/pprof"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeProfiles writes the goroutine (debug=1) and heap profiles of the
// moment to $KUBELOOP_MC_PROFILE.<phase>.goroutines and .heap, when that
// variable is set: which goroutines an idle cluster runs, and what stays
// once every cluster has left (compare idle and left with pprof
// -diff_base).
func writeProfiles(tb testing.TB, phase string) {
	prefix := os.Getenv("KUBELOOP_MC_PROFILE")
	if prefix == "" {
		return
	}
	for _, p := range []struct {
		name  string
		debug int
	}{{"goroutine", 1}, {"heap", 0}} {
		f, err := os.Create(prefix + "." + phase + "." + p.name)
		require.NoError(tb, err)
		require.NoError(tb, pprof.Lookup(p.name).WriteTo(f, p.debug))
		require.NoError(tb, f.Close())
	}
}
