// Package providertest holds what the providers' tests share: a Sink that
// records what was engaged, with which host, and which engagements ended,
// and kubeconfig bytes made from a rest.Config.
package providertest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubeloop/kubeloop/multicluster"
)

// Event is one thing a Recorder saw: Op is "engage" or "end".
type Event struct {
	Op, Name, Host string
}

// String reads "engage eu-1 https://...".
func (e Event) String() string { return e.Op + " " + e.Name + " " + e.Host }

// engagement is one Engage call.
type engagement struct {
	ctx   context.Context
	cfg   *rest.Config
	ended bool
}

// Recorder is a multicluster.Sink that records engagements. It checks the
// Sink contract's validation (ValidateName, a nil cfg) as the fleet does,
// and counts a Violation when a provider engages a name whose previous
// engagement's context has not ended (a provider must cancel first).
type Recorder struct {
	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every change
	events     []Event
	current    map[string]*engagement
	violations []string
}

var _ multicluster.Sink = (*Recorder)(nil)

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{changed: make(chan struct{}), current: make(map[string]*engagement)}
}

// Engage records the engagement; its end is recorded when ctx ends.
func (r *Recorder) Engage(ctx context.Context, name string, cfg *rest.Config) error {
	if err := multicluster.ValidateName(name); err != nil {
		return err
	}
	if cfg == nil {
		return fmt.Errorf("cluster %q: nil rest.Config", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.current[name]; old != nil {
		if old.ctx.Err() == nil {
			r.violations = append(r.violations, fmt.Sprintf("%s engaged again while its previous engagement's context is live", name))
		}
		r.endLocked(name, old)
	}
	e := &engagement{ctx: ctx, cfg: cfg}
	r.current[name] = e
	r.events = append(r.events, Event{Op: "engage", Name: name, Host: cfg.Host})
	r.notifyLocked()
	context.AfterFunc(ctx, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.endLocked(name, e)
	})
	return nil
}

func (r *Recorder) endLocked(name string, e *engagement) {
	if e.ended {
		return
	}
	e.ended = true
	if r.current[name] == e {
		delete(r.current, name)
	}
	r.events = append(r.events, Event{Op: "end", Name: name, Host: e.cfg.Host})
	r.notifyLocked()
}

func (r *Recorder) notifyLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// Current returns the engaged clusters whose contexts have not ended, by
// name.
func (r *Recorder) Current() map[string]*rest.Config {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]*rest.Config, len(r.current))
	for name, e := range r.current {
		if !e.ended {
			out[name] = e.cfg
		}
	}
	return out
}

// Names returns the names of Current, sorted.
func (r *Recorder) Names() []string {
	return slices.Sorted(maps.Keys(r.Current()))
}

// Events returns every event so far, in order.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Violations returns the contract violations seen so far.
func (r *Recorder) Violations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.violations)
}

// Wait blocks until cond, called with the Recorder after every change,
// returns true, or ctx ends; it returns ctx's error with the events seen
// in that case.
func (r *Recorder) Wait(ctx context.Context, cond func(*Recorder) bool) error {
	for {
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		if cond(r) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%w; engaged %v; events %v", ctx.Err(), r.Names(), r.Events())
		}
	}
}

// WaitNames waits until exactly names (in any order) are engaged.
func (r *Recorder) WaitNames(ctx context.Context, names ...string) error {
	want := slices.Sorted(slices.Values(names))
	if want == nil {
		want = []string{}
	}
	return r.Wait(ctx, func(r *Recorder) bool { return slices.Equal(r.Names(), want) })
}

// Kubeconfig returns kubeconfig bytes with one context per entry of
// clusters (the context, cluster and user named after the key), each
// holding that rest.Config's host, CA and client credentials inline;
// current is the current-context ("" for none).
func Kubeconfig(clusters map[string]*rest.Config, current string) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	for name, cfg := range clusters {
		if cfg == nil {
			return nil, errors.New("providertest: nil rest.Config")
		}
		kc.Clusters[name] = &clientcmdapi.Cluster{
			Server:                   cfg.Host,
			CertificateAuthorityData: cfg.CAData,
			InsecureSkipTLSVerify:    cfg.Insecure,
		}
		kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
			ClientCertificateData: cfg.CertData,
			ClientKeyData:         cfg.KeyData,
			Token:                 cfg.BearerToken,
		}
		kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	kc.CurrentContext = current
	return clientcmd.Write(*kc)
}

// WithHost returns a copy of cfg pointing at host.
func WithHost(cfg *rest.Config, host string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Host = host
	return c
}
