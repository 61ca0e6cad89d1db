package engage

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/multicluster"
)

// Target is one cluster as a provider's source describes it now.
type Target struct {
	// Name is the cluster's name, as engaged.
	Name string
	// Source says where the cluster comes from, for log lines and
	// errors: "Secret fleet/eu-1", "file /etc/fleet/eu-1.yaml".
	Source string
	// Key identifies the connection details (normally Hash of the
	// kubeconfig bytes): a change of Key re-engages the cluster.
	Key string
	// Config builds the cluster's rest.Config. It is called only when
	// the Target is to be engaged (new, or its Key changed); an error
	// means the Target is broken: it is logged and not engaged.
	Config func() (*rest.Config, error)
	// Err, when set, marks the Target broken without calling Config (a
	// Secret without the label that names its cluster: Name is then a
	// placeholder such as the Source).
	Err error
}

// Hash returns a Key for the given bytes: the hex SHA-256 of each part,
// length-prefixed so that parts never run into one another.
func Hash(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// engagement is one engaged cluster.
type engagement struct {
	key, source string
	cancel      context.CancelFunc
}

// Set is the engaged clusters of one provider; see the package doc.
type Set struct {
	sink      multicluster.Sink
	log       logr.Logger
	engaged   map[string]*engagement
	broken    map[string]string // name -> Key whose failure was logged
	conflicts map[string]string // name -> the losing Sources, as logged
}

// NewSet returns an empty Set that engages clusters through sink and logs
// to log.
func NewSet(sink multicluster.Sink, log logr.Logger) *Set {
	return &Set{
		sink:      sink,
		log:       log,
		engaged:   make(map[string]*engagement),
		broken:    make(map[string]string),
		conflicts: make(map[string]string),
	}
}

// Sync makes the engaged clusters those of targets; see the package doc.
// Engagement contexts derive from ctx.
func (s *Set) Sync(ctx context.Context, targets []Target) {
	targets = slices.Clone(targets)
	slices.SortStableFunc(targets, func(a, b Target) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Source, b.Source))
	})
	want := make(map[string]bool, len(targets))
	for i, t := range targets {
		if want[t.Name] {
			continue
		}
		want[t.Name] = true
		s.noteConflicts(t, targets[i+1:])
		s.syncOne(ctx, t)
	}
	for name, e := range s.engaged {
		if !want[name] {
			s.disengage(name, e)
			s.log.Info("disengaged cluster", "cluster", name, "source", e.source)
		}
	}
	for name := range s.broken {
		if !want[name] {
			delete(s.broken, name)
		}
	}
	for name := range s.conflicts {
		if !want[name] {
			delete(s.conflicts, name)
		}
	}
}

// noteConflicts logs, once per set of losers, the Targets after t (sorted
// by name) that share its name.
func (s *Set) noteConflicts(t Target, rest []Target) {
	var losers []string
	for _, o := range rest {
		if o.Name != t.Name {
			break
		}
		losers = append(losers, o.Source)
	}
	if len(losers) == 0 {
		delete(s.conflicts, t.Name)
		return
	}
	key := fmt.Sprint(losers)
	if s.conflicts[t.Name] == key {
		return
	}
	s.conflicts[t.Name] = key
	s.log.Error(fmt.Errorf("cluster %q is named by %s and by %v", t.Name, t.Source, losers),
		"ignoring duplicate cluster names: the first source wins", "cluster", t.Name, "source", t.Source)
}

func (s *Set) syncOne(ctx context.Context, t Target) {
	e := s.engaged[t.Name]
	if e != nil && e.key == t.Key {
		return
	}
	if s.broken[t.Name] == t.Key && e == nil {
		return // logged already; tried again when the Key changes
	}
	fail := func(err error) {
		if e != nil {
			s.disengage(t.Name, e)
		}
		s.broken[t.Name] = t.Key
		s.log.Error(err, "not engaging cluster: fix its source and it is engaged", "cluster", t.Name, "source", t.Source)
	}
	if t.Err != nil {
		fail(t.Err)
		return
	}
	if err := multicluster.ValidateName(t.Name); err != nil {
		fail(fmt.Errorf("%s: %w", t.Source, err))
		return
	}
	cfg, err := t.Config()
	if err == nil && cfg == nil {
		err = fmt.Errorf("%s: no rest.Config", t.Source)
	}
	if err != nil {
		fail(err)
		return
	}
	if e != nil {
		s.disengage(t.Name, e) // the Sink sees the old context end first
	}
	cctx, cancel := context.WithCancel(ctx)
	if err := s.sink.Engage(cctx, t.Name, cfg); err != nil {
		cancel()
		e = nil
		fail(fmt.Errorf("%s: engage: %w", t.Source, err))
		return
	}
	delete(s.broken, t.Name)
	s.engaged[t.Name] = &engagement{key: t.Key, source: t.Source, cancel: cancel}
	verb := "engaged cluster"
	if e != nil {
		verb = "re-engaged cluster: its connection details changed"
	}
	s.log.Info(verb, "cluster", t.Name, "source", t.Source, "host", cfg.Host)
}

func (s *Set) disengage(name string, e *engagement) {
	e.cancel()
	delete(s.engaged, name)
}

// Engaged returns the names engaged now, sorted.
func (s *Set) Engaged() []string {
	names := make([]string, 0, len(s.engaged))
	for name := range s.engaged {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Close disengages every cluster.
func (s *Set) Close() {
	for name, e := range s.engaged {
		s.disengage(name, e)
	}
}
