package webhook

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// certCheckInterval is how often, at most, the certificate files are read
// again to see whether they changed.
const certCheckInterval = time.Second

// certWatcher serves a key pair from two files and picks up new contents
// without a restart. It needs no goroutine: GetCertificate, called on each
// TLS handshake, re-reads the files when certCheckInterval has passed since
// the last look, and swaps the pair when their bytes changed and form a
// valid pair. A half-written rotation (new certificate, old key) is ignored
// until both match, and the old pair is served meanwhile.
type certWatcher struct {
	certPath, keyPath string
	log               logr.Logger

	mu        sync.Mutex
	cert      *tls.Certificate
	certPEM   []byte
	keyPEM    []byte
	lastCheck time.Time
}

func newCertWatcher(certPath, keyPath string, log logr.Logger) *certWatcher {
	return &certWatcher{certPath: certPath, keyPath: keyPath, log: log}
}

// load reads the pair for the first time; an error means there is nothing
// to serve.
func (c *certWatcher) load() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reloadLocked(time.Now())
}

// GetCertificate returns the current pair, refreshed when the files
// changed. It has tls.Config.GetCertificate's signature.
func (c *certWatcher) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); now.Sub(c.lastCheck) >= certCheckInterval {
		if err := c.reloadLocked(now); err != nil {
			c.log.Error(err, "webhook: certificate not reloaded; serving the previous one")
		}
	}
	if c.cert == nil {
		return nil, fmt.Errorf("webhook: no certificate loaded from %s", c.certPath)
	}
	return c.cert, nil
}

func (c *certWatcher) reloadLocked(now time.Time) error {
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
