package manager

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"

	"github.com/kubeloop/kubeloop/certwatcher"
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
		cert, err := selfSignedCertificate()
		if err != nil {
			return nil, fmt.Errorf("manager: metrics server self-signed certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// selfSignedCertificate makes a serving certificate for localhost, the
// loopback addresses and the host name, signed by its own key.
func selfSignedCertificate() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "kubeloop-metrics"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(selfSignedValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // so that a client may trust it as its own root
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if host, err := os.Hostname(); err == nil && host != "" && host != "localhost" {
		tmpl.DNSNames = append(tmpl.DNSNames, host)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}
