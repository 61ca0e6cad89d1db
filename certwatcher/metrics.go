package certwatcher

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts certificate reads under controller-runtime's names and
// help texts: certwatcher_read_certificate_total (every ReadCertificate,
// the ones Start makes included) and
// certwatcher_read_certificate_errors_total (those that failed). Both are
// counters without labels, as controller-runtime's are.
type Metrics struct {
	reads, errors prometheus.Counter
}

// NewMetrics registers the two counters on reg, at 0, and returns them.
// Counters of these names already registered there (by another watcher's
// NewMetrics, or by a manager, which registers them on its own registry)
// are reused, so that every watcher of one registry counts into one pair,
// as controller-runtime's process-wide counters do. A nil reg gives
// counters that count but are not exported.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	reads, err := registerCounter(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "certwatcher_read_certificate_total",
		Help: "Total number of certificate reads",
	}))
	if err != nil {
		return nil, err
	}
	errs, err := registerCounter(reg, prometheus.NewCounter(prometheus.CounterOpts{
		Name: "certwatcher_read_certificate_errors_total",
		Help: "Total number of certificate read errors",
	}))
	if err != nil {
		return nil, err
	}
	return &Metrics{reads: reads, errors: errs}, nil
}

func registerCounter(reg prometheus.Registerer, c prometheus.Counter) (prometheus.Counter, error) {
	if reg == nil {
		return c, nil
	}
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(prometheus.Counter); ok {
			return existing, nil
		}
	}
	return nil, fmt.Errorf("certwatcher: register metrics: %w", err)
}

// Observe counts one read of a key pair and its outcome (err nil: it
// worked), for watchers other than CertWatcher that count under these
// names (webhook.CertWatcher does). A nil m counts nothing.
func (m *Metrics) Observe(err error) { m.observe(err) }

// observe counts one read and its outcome.
func (m *Metrics) observe(err error) {
	if m == nil {
		return
	}
	m.reads.Inc()
	if err != nil {
		m.errors.Inc()
	}
}

// WithMetrics makes cw count its reads in m: the ones made so far, New's
// included (as controller-runtime counts them), at once, and every
// ReadCertificate from now on. Nil stops counting. It returns cw, so it
// chains after New. A watcher given to a manager (mgr.Add(cw)) without
// WithMetrics counts in the manager's registry (UseDefaultMetrics).
func (cw *CertWatcher) WithMetrics(m *Metrics) *CertWatcher {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.attachLocked(m)
	cw.metricsSet = true
	return cw
}

// UseDefaultMetrics makes cw count in m, as WithMetrics does, unless
// WithMetrics was called: what a manager calls, with the counters of its
// registry, when the watcher is added to it.
func (cw *CertWatcher) UseDefaultMetrics(m *Metrics) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if !cw.metricsSet {
		cw.attachLocked(m)
	}
}

// attachLocked makes m cw's counters, adding the reads made so far unless
// m already has them. cw.mu is held.
func (cw *CertWatcher) attachLocked(m *Metrics) {
	if m == cw.metrics {
		return
	}
	cw.metrics = m
	if m != nil {
		m.reads.Add(float64(cw.reads))
		m.errors.Add(float64(cw.readErrors))
	}
}
