package certwatcher_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeloop/kubeloop/certwatcher"
)

// A TLS configuration that serves the pair in a directory and follows its
// rotation while Start runs (a manager runs it after mgr.Add(w)).
func Example() {
	dir, _ := os.MkdirTemp("", "certwatcher-example")
	defer os.RemoveAll(dir)
	p, _ := makePair(42) // a self-signed pair, in PEM
	_ = os.WriteFile(filepath.Join(dir, "tls.crt"), p.cert, 0o600)
	_ = os.WriteFile(filepath.Join(dir, "tls.key"), p.key, 0o600)

	w, err := certwatcher.New(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		fmt.Println(err)
		return
	}
	w.WithWatchInterval(30 * time.Second)
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: w.GetCertificate}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Start(ctx) }()

	c, _ := cfg.GetCertificate(&tls.ClientHelloInfo{})
	fmt.Println("serving", c.Leaf.SerialNumber)
	cancel()
	fmt.Println("Start returned", <-done)
	// Output:
	// serving 42
	// Start returned <nil>
}

// Counting reads under controller-runtime's names on a registry of one's
// own; a manager does this with its registry for a watcher given to
// mgr.Add.
func ExampleCertWatcher_WithMetrics() {
	dir, _ := os.MkdirTemp("", "certwatcher-metrics")
	defer os.RemoveAll(dir)
	p, _ := makePair(7)
	_ = os.WriteFile(filepath.Join(dir, "tls.crt"), p.cert, 0o600)
	_ = os.WriteFile(filepath.Join(dir, "tls.key"), p.key, 0o600)

	reg := prometheus.NewRegistry()
	m, err := certwatcher.NewMetrics(reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	w, err := certwatcher.New(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		fmt.Println(err)
		return
	}
	w.WithMetrics(m) // New's read is counted now
	_ = os.Remove(filepath.Join(dir, "tls.key"))
	_ = w.ReadCertificate() // fails: counted as a read and an error

	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		fmt.Println(mf.GetName(), mf.GetMetric()[0].GetCounter().GetValue())
	}
	// Output:
	// certwatcher_read_certificate_errors_total 1
	// certwatcher_read_certificate_total 2
}
