package certwatcher

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// DefaultWatchInterval is how often a started CertWatcher reads its files
// even when they look unchanged, unless WithWatchInterval says otherwise.
const DefaultWatchInterval = 10 * time.Second

// statInterval is how often, at most, a started CertWatcher looks at the
// files' metadata to see whether they changed.
const statInterval = time.Second

// CertWatcher serves the key pair in two PEM files and reloads it when the
// files change, while Start runs. Its methods are safe for concurrent use.
type CertWatcher struct {
	certPath, keyPath string

	mu       sync.RWMutex
	current  *tls.Certificate
	certPEM  []byte
	keyPEM   []byte
	interval time.Duration
	log      logr.Logger
	callback func(tls.Certificate)
	readHook func(error)
	metrics  *Metrics // metrics.go
	// metricsSet records WithMetrics, which UseDefaultMetrics does not
	// override.
	metricsSet bool
	// reads and readErrors count every ReadCertificate since New (New's
	// included), so that Metrics attached later count them too.
	reads, readErrors uint64
}

// New returns a watcher of the PEM files certPath and keyPath, with the
// pair already read: an error names the file that cannot be read or says
// why the two do not form a key pair.
func New(certPath, keyPath string) (*CertWatcher, error) {
	cw := &CertWatcher{
		certPath: certPath,
		keyPath:  keyPath,
		interval: DefaultWatchInterval,
		log:      logr.FromSlogHandler(slogDefault{}).WithName("certwatcher").WithValues("cert", certPath, "key", keyPath),
	}
	if err := cw.ReadCertificate(); err != nil {
		return nil, err
	}
	return cw, nil
}

// WithWatchInterval sets how often Start reads the files even when they
// look unchanged; zero or negative keeps DefaultWatchInterval. It returns
// cw, so it chains after New. Call it before Start.
func (cw *CertWatcher) WithWatchInterval(interval time.Duration) *CertWatcher {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if interval > 0 {
		cw.interval = interval
	}
	return cw
}

// WithLogger sets the logger of reloads and failed reloads; the zero
// Logger keeps the default (log/slog's default handler). It returns cw.
func (cw *CertWatcher) WithLogger(log logr.Logger) *CertWatcher {
	if log.GetSink() == nil {
		return cw
	}
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.log = log.WithValues("cert", cw.certPath, "key", cw.keyPath)
	return cw
}

// WithReadHook sets a function called after every ReadCertificate with
// its result (nil on success, whether or not the pair changed). The read
// counters of controller-runtime are WithMetrics's. Nil removes it. The hook must not call back into cw. It returns cw.
func (cw *CertWatcher) WithReadHook(hook func(err error)) *CertWatcher {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.readHook = hook
	return cw
}

// RegisterCallback sets the function called with each new pair (it
// replaces an earlier one) and calls it now with the current pair.
func (cw *CertWatcher) RegisterCallback(callback func(tls.Certificate)) {
	cw.mu.Lock()
	cw.callback = callback
	current := cw.current
	cw.mu.Unlock()
	if callback != nil && current != nil {
		callback(*current)
	}
}

// GetCertificate returns the pair loaded last; it has
// tls.Config.GetCertificate's signature and never fails after New.
func (cw *CertWatcher) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	cw.mu.RLock()
	defer cw.mu.RUnlock()
	if cw.current == nil {
		return nil, fmt.Errorf("certwatcher: no certificate loaded from %s", cw.certPath)
	}
	return cw.current, nil
}

// ReadCertificate reads and parses the files now and, when they hold a
// valid pair different from the current one, serves it and calls the
// callback. On error the current pair stays.
func (cw *CertWatcher) ReadCertificate() error {
	changed, cert, err := cw.read()
	cw.mu.Lock()
	cw.reads++
	if err != nil {
		cw.readErrors++
	}
	cw.metrics.observe(err)
	hook, callback, log := cw.readHook, cw.callback, cw.log
	cw.mu.Unlock()
	if hook != nil {
		hook(err)
	}
	if err != nil || !changed {
		return err
	}
	log.Info("serving certificate loaded", "notAfter", cert.Leaf.NotAfter)
	if callback != nil {
		callback(cert)
	}
	return nil
}

// read loads the pair and reports whether it replaced the current one.
func (cw *CertWatcher) read() (bool, tls.Certificate, error) {
	certPEM, err := os.ReadFile(cw.certPath)
	if err != nil {
		return false, tls.Certificate{}, fmt.Errorf("certwatcher: read certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(cw.keyPath)
	if err != nil {
		return false, tls.Certificate{}, fmt.Errorf("certwatcher: read key: %w", err)
	}
	cw.mu.RLock()
	same := cw.current != nil && bytes.Equal(certPEM, cw.certPEM) && bytes.Equal(keyPEM, cw.keyPEM)
	cw.mu.RUnlock()
	if same {
		return false, tls.Certificate{}, nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, tls.Certificate{}, fmt.Errorf("certwatcher: key pair %s, %s: %w", cw.certPath, cw.keyPath, err)
	}
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if cw.current != nil && bytes.Equal(certPEM, cw.certPEM) && bytes.Equal(keyPEM, cw.keyPEM) {
		return false, tls.Certificate{}, nil // a concurrent read won
	}
	cw.current, cw.certPEM, cw.keyPEM = &pair, certPEM, keyPEM
	return true, pair, nil
}

// Start polls the files until ctx ends and reloads the pair when they
// change (see the package doc for how often); then it returns nil. It is a
// manager runnable: mgr.Add(cw).
func (cw *CertWatcher) Start(ctx context.Context) error {
	cw.mu.RLock()
	interval, log := cw.interval, cw.log
	cw.mu.RUnlock()
	tick := min(statInterval, interval)
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	log.V(1).Info("watching the certificate", "interval", interval)
	last := cw.stat()
	lastRead := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-ticker.C:
			st := cw.stat()
			if st.equal(last) && now.Sub(lastRead) < interval {
				continue
			}
			last, lastRead = st, now
			if err := cw.ReadCertificate(); err != nil {
				log.Error(err, "certificate not reloaded; serving the previous one")
			}
		}
	}
}

// NeedLeaderElection returns false: every replica serves its certificate.
func (cw *CertWatcher) NeedLeaderElection() bool { return false }

// fileStates is what Start compares between two looks at the files.
type fileStates [2]os.FileInfo

func (cw *CertWatcher) stat() fileStates {
	var s fileStates
	for i, p := range []string{cw.certPath, cw.keyPath} {
		if fi, err := os.Stat(p); err == nil {
			s[i] = fi
		}
	}
	return s
}

func (s fileStates) equal(o fileStates) bool {
	for i := range s {
		a, b := s[i], o[i]
		if a == nil || b == nil {
			if a != b {
				return false
			}
			continue
		}
		if !os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) {
			return false
		}
	}
	return true
}

// slogDefault is a slog.Handler that forwards to whatever slog.Default()
// is when a record is handled, so that a watcher made before main sets
// the default logger still logs through it. The package may not import
// kubeloop's log package (deps_test.go), whose Default does the same.
type slogDefault struct {
	ops []func(slog.Handler) slog.Handler // WithAttrs and WithGroup, in order
}

func (h slogDefault) handler() slog.Handler {
	d := slog.Default().Handler()
	for _, op := range h.ops {
		d = op(d)
	}
	return d
}

func (h slogDefault) with(op func(slog.Handler) slog.Handler) slogDefault {
	return slogDefault{ops: append(append([]func(slog.Handler) slog.Handler(nil), h.ops...), op)}
}

func (h slogDefault) Enabled(ctx context.Context, l slog.Level) bool {
	return h.handler().Enabled(ctx, l)
}

func (h slogDefault) Handle(ctx context.Context, r slog.Record) error {
	return h.handler().Handle(ctx, r)
}

func (h slogDefault) WithAttrs(attrs []slog.Attr) slog.Handler {
	return h.with(func(d slog.Handler) slog.Handler { return d.WithAttrs(attrs) })
}

func (h slogDefault) WithGroup(name string) slog.Handler {
	return h.with(func(d slog.Handler) slog.Handler { return d.WithGroup(name) })
}
