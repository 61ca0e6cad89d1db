package webhook

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/kubeloop/kubeloop/certwatcher"
)

// CertCheckInterval is how often, at most, a CertWatcher reads its files
// again to see whether they changed.
const CertCheckInterval = time.Second

// CertWatcher serves a key pair from two files and picks up new contents
// without a restart; the webhook Server and the manager's HTTPS metrics
// server use it, and any tls.Config can (set GetCertificate). It needs no
// goroutine: GetCertificate, called on each TLS handshake, re-reads the
// files when CertCheckInterval has passed since the last look, and swaps
// the pair when their bytes changed and form a valid pair. A half-written
// rotation (new certificate, old key) is ignored until both match, and the
// old pair is served meanwhile. It replaces controller-runtime's
// certwatcher package.
type CertWatcher struct {
	certPath, keyPath string

	mu        sync.Mutex
	log       logr.Logger
	metrics   *certwatcher.Metrics // nil: reads not counted
	cert      *tls.Certificate
	certPEM   []byte
	keyPEM    []byte
	lastCheck time.Time
}

// NewCertWatcher returns a watcher of the PEM files certPath and keyPath
// that logs reloads and failed reloads to log (the zero Logger discards).
// It reads nothing until Load or GetCertificate.
func NewCertWatcher(certPath, keyPath string, log logr.Logger) *CertWatcher {
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	return &CertWatcher{certPath: certPath, keyPath: keyPath, log: log}
}

// WithMetrics makes c count every read of its files (Load's, and
// GetCertificate's at most once a CertCheckInterval) in m, controller-runtime's
// certwatcher_read_certificate_total and ..._errors_total; nil stops
// counting. A Server counts its watcher's reads on its metrics registerer.
// It returns c.
func (c *CertWatcher) WithMetrics(m *certwatcher.Metrics) *CertWatcher {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.metrics = m
	return c
}

// setLogger replaces the logger (a Server adopting its manager's).
func (c *CertWatcher) setLogger(log logr.Logger) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log = log
}

// Load reads the pair now; an error means there is nothing to serve yet.
// Call it before serving, so that a missing or broken pair fails start-up
// instead of every handshake.
func (c *CertWatcher) Load() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reloadLocked(time.Now())
}

// GetCertificate returns the current pair, refreshed when the files
// changed. It has tls.Config.GetCertificate's signature.
func (c *CertWatcher) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); now.Sub(c.lastCheck) >= CertCheckInterval {
		if err := c.reloadLocked(now); err != nil {
			c.log.Error(err, "webhook: certificate not reloaded; serving the previous one")
		}
	}
	if c.cert == nil {
		return nil, fmt.Errorf("webhook: no certificate loaded from %s", c.certPath)
	}
	return c.cert, nil
}

func (c *CertWatcher) reloadLocked(now time.Time) error {
	err := c.readLocked(now)
	c.metrics.Observe(err)
	return err
}

func (c *CertWatcher) readLocked(now time.Time) error {
	c.lastCheck = now
	certPEM, err := os.ReadFile(c.certPath)
	if err != nil {
		return fmt.Errorf("webhook: read certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(c.keyPath)
	if err != nil {
		return fmt.Errorf("webhook: read key: %w", err)
	}
	if c.cert != nil && bytes.Equal(certPEM, c.certPEM) && bytes.Equal(keyPEM, c.keyPEM) {
		return nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("webhook: key pair %s, %s: %w", c.certPath, c.keyPath, err)
	}
	first := c.cert == nil
	c.cert, c.certPEM, c.keyPEM = &pair, certPEM, keyPEM
	if !first {
		c.log.Info("serving certificate reloaded", "cert", c.certPath, "notAfter", pair.Leaf.NotAfter)
	}
	return nil
}
