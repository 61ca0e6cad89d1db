package main

import (
	"bufio"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReport parses two runs and renders the targets: medians, met and
// not met, and a row for a target whose benchmark did not run.
func TestReport(t *testing.T) {
	in := `goos: linux
BenchmarkEngage/clusters=1000-2   1   5017862978 ns/op   1.480 all-reconciled-s   6.4 engage-p50-ms   121.1 engage-p99-ms   5.000 goroutines/cluster   109.1 heap-KiB/cluster
BenchmarkEngage/clusters=1000-2   1   5017862978 ns/op   1.480 all-reconciled-s   6.4 engage-p50-ms   1300 engage-p99-ms   3.000 goroutines/cluster   300 heap-KiB/cluster
BenchmarkEngage/clusters=1000-2   1   5017862978 ns/op   1.480 all-reconciled-s   6.4 engage-p50-ms   900 engage-p99-ms   3.000 goroutines/cluster   100 heap-KiB/cluster
PASS
`
	res := results{}
	lines, err := parse(strings.NewReader(in), res)
	require.NoError(t, err)
	require.Len(t, lines, 3)
	v, ok := res.median("BenchmarkEngage/clusters=1000", "engage-p99-ms")
	require.True(t, ok)
	assert.Equal(t, 900.0, v)
	var b strings.Builder
	w := bufio.NewWriter(&b)
	render(w, res, "", "", lines)
	require.NoError(t, w.Flush())
	out := b.String()
	assert.Contains(t, out, "| 30 | engage latency at 1000 clusters (Secret created to first reconcile in it), fake fleet | p99 900.0 ms")
	assert.Contains(t, out, "| p99 ≤ 1 s | **met** |")
	assert.Contains(t, out, "| 3.00 | "+notRunMCR+" | – | ≤ 4 | **met** |")
	assert.Contains(t, out, "cold start with 1,000 clusters: all synced (fake fleet) | not measured")
	assert.NotContains(t, out, "real control plane (TLS, HTTP/2) |", "a -real row is left out when it did not run")
}
