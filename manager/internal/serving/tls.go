package serving

import (
	"crypto/tls"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/kubeloop/kubeloop/certwatcher"
	"github.com/kubeloop/kubeloop/webhook"
)

// selfSignedValidity is how long the metrics server's generated
// certificate is valid.
const selfSignedValidity = 365 * 24 * time.Hour

// MetricsTLS returns the TLS configuration of the metrics server: TLS 1.2
// at least, HTTP/1.1 only (as in the kubebuilder scaffold, against
// CVE-2023-44487) unless opts turn HTTP/2 on; the pair certFile and
// keyFile, re-read when it changes (reads counted in reads), or with
// certFile "" a self-signed certificate generated now; neither when opts
// set GetCertificate or Certificates.
func MetricsTLS(opts []func(*tls.Config), certFile, keyFile string, log logr.Logger, reads *certwatcher.Metrics) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	for _, opt := range opts {
		opt(cfg)
	}
	if cfg.GetCertificate != nil || len(cfg.Certificates) > 0 {
		// A certificate from opts (the kubebuilder scaffold's
		// certwatcher) wins, as in controller-runtime: no self-signed one
		// beside it, which Go would serve to clients sending no server name.
		return cfg, nil
	}
	if certFile != "" {
		w := webhook.NewCertWatcher(certFile, keyFile, log).WithMetrics(reads)
		if err := w.Load(); err != nil {
			return nil, fmt.Errorf("manager: metrics server certificate: %w", err)
		}
		cfg.GetCertificate = w.GetCertificate
		return cfg, nil
	}
	cert, err := SelfSigned("kubeloop-metrics", selfSignedValidity)
	if err != nil {
		return nil, fmt.Errorf("manager: metrics server self-signed certificate: %w", err)
	}
	cfg.Certificates = []tls.Certificate{cert}
	return cfg, nil
}
