package manager_test

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/metrics"
)

// portedReconciles is registered the way a ported operator does it: on
// metrics.Registry in an init().
var portedReconciles = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "ported_reconciles_total",
	Help: "A collector registered on metrics.Registry in init().",
})

func init() { metrics.Registry.MustRegister(portedReconciles) }

// syncBuffer is a bytes.Buffer safe for the manager's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestMetricsServesGlobalRegistry(t *testing.T) {
	var logs syncBuffer
	mgr := newManager(t, restConfig, manager.Options{
		Logger:  logr.FromSlogHandler(slog.NewTextHandler(&logs, nil)),
		Metrics: manager.MetricsOptions{BindAddress: "127.0.0.1:0"},
	})
	own := prometheus.NewCounter(prometheus.CounterOpts{Name: "own_widgets_total", Help: "On the manager's registry."})
	require.NoError(t, mgr.Metrics().Register(own))
	own.Add(2)
	portedReconciles.Add(5)

	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	require.Eventually(t, func() bool { return mgr.MetricsAddr() != nil }, 30*time.Second, 10*time.Millisecond)
	url := "http://" + mgr.MetricsAddr().String() + "/metrics"

	code, body := get(t, url)
	require.Equal(t, 200, code, body)
	got := seriesValue(t, body, "ported_reconciles_total")
	assert.True(t, got >= 5 && int(got)%5 == 0, "ported_reconciles_total %v: want 5 per run", got)
	assert.True(t, containsLine(body, "own_widgets_total 2"), "/metrics lacks the manager's own collector")
	assert.True(t, containsLine(body, "go_goroutines "), "/metrics lacks the Go collector")

	// A program that also registers the Go and process collectors on the
	// global registry, and a family that clashes in type with one of the
	// manager's: the scrape still succeeds, each family once, the
	// manager's series winning, and nothing is logged as an error.
	global := prometheus.NewRegistry()
	global.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "own_widgets_total", Help: "A clash."}, func() float64 { return 99 }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "global_only", Help: "Only here."}, func() float64 { return 7 }),
	)
	saved := metrics.Registry
	metrics.Registry = global
	defer func() { metrics.Registry = saved }()

	code, body = get(t, url)
	require.Equal(t, 200, code, body)
	assert.Equal(t, 1, strings.Count(body, "\ngo_goroutines "), "go_goroutines once")
	assert.Equal(t, 1, strings.Count(body, "# TYPE go_goroutines "), "go_goroutines' family once")
	assert.Equal(t, 1, strings.Count(body, "\nprocess_start_time_seconds "), "process_start_time_seconds once")
	assert.True(t, containsLine(body, "own_widgets_total 2"), "the manager's series wins")
	assert.False(t, containsLine(body, "own_widgets_total 99"), "the clashing global series is left out")
	assert.True(t, containsLine(body, "# TYPE own_widgets_total counter"))
	assert.True(t, containsLine(body, "global_only 7"), "a family only on the global registry is served")
	assert.False(t, containsLine(body, "ported_reconciles_total"), "the variable is read at each scrape")
	assert.NotContains(t, logs.String(), "serve /metrics", "no scrape error logged")

	// A nil Registry serves the manager's own registry alone.
	metrics.Registry = nil
	code, body = get(t, url)
	require.Equal(t, 200, code, body)
	assert.True(t, containsLine(body, "own_widgets_total 2"))
	assert.False(t, containsLine(body, "global_only"))
}

// seriesValue returns the value of the unlabelled series name in a text
// exposition.
func seriesValue(t *testing.T, body, name string) float64 {
	t.Helper()
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, l)
			return f
		}
	}
	t.Fatalf("/metrics lacks %s:\n%s", name, body)
	return 0
}
