package manager

import (
	"crypto/tls"
	"fmt"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"

	"github.com/kubeloop/kubeloop/certwatcher"
	"github.com/kubeloop/kubeloop/manager/internal/serving"
	"github.com/kubeloop/kubeloop/webhook"
)

// selfSignedValidity is how long the metrics server's generated
// certificate is valid.
const selfSignedValidity = 365 * 24 * time.Hour

// metricsTLSConfig returns the TLS configuration of the metrics server:
// the pair in CertDir, re-read when it changes, or a self-signed
// certificate generated now when CertDir is empty, unless TLSOpts set
// GetCertificate or Certificates (then neither is made). HTTP/2 is off (as
// in the kubebuilder scaffold, against CVE-2023-44487) unless TLSOpts
// turn it on.
func (o MetricsOptions) metricsTLSConfig(log logr.Logger, reads *certwatcher.Metrics) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	for _, opt := range o.TLSOpts {
		opt(cfg)
	}
	if cfg.GetCertificate != nil || len(cfg.Certificates) > 0 {
		// A certificate from TLSOpts (the kubebuilder scaffold's
		// certwatcher) wins, as in controller-runtime: no self-signed one
		// beside it, which Go would serve to clients sending no server name.
		return cfg, nil
	}
	if o.CertDir != "" {
		w := webhook.NewCertWatcher(filepath.Join(o.CertDir, o.CertName), filepath.Join(o.CertDir, o.KeyName), log).WithMetrics(reads)
		if err := w.Load(); err != nil {
			return nil, fmt.Errorf("manager: metrics server certificate: %w", err)
		}
		cfg.GetCertificate = w.GetCertificate
	} else {
		cert, err := serving.SelfSigned("kubeloop-metrics", selfSignedValidity)
		if err != nil {
			return nil, fmt.Errorf("manager: metrics server self-signed certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
