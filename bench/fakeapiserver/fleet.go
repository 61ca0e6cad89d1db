package fakeapiserver

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// FleetConfig says what a Fleet serves.
type FleetConfig struct {
	// ConfigMaps is the number of ConfigMaps of every member cluster.
	ConfigMaps int
	// Namespace holds the hub's kubeconfig Secrets. "" means
	// FleetNamespace.
	Namespace string
}

const (
	// FleetNamespace is the hub's namespace of kubeconfig Secrets by
	// default.
	FleetNamespace = "fleet"
	// KubeconfigLabel marks the hub's Secrets (the kubeconfig provider's
	// default label).
	KubeconfigLabel = "multicluster.kubeloop.dev/kubeconfig"
	// clustersPrefix starts the path of every member cluster's request.
	clustersPrefix = "/clusters/"
)

// Fleet serves many clusters on one listener: a hub at the root, whose
// only writable kind is Secrets in one namespace (kubeconfigs that point
// at the members, created and deleted through /bench/fleet/secret), and
// member clusters under /clusters/<name>/, each with the same ConfigMaps
// (the bytes are shared), its own watchers and its own events
// (/bench/fleet/fire), any of which can be blackholed
// (/bench/fleet/blackhole): its open watches break and it answers no
// request after that, until the blackhole ends (?off=1). A member exists from its first request or Secret.
type Fleet struct {
	tmpl *Server // the members' encoded ConfigMaps and discovery
	hub  *hub
	url  atomic.Pointer[string]

	mu      sync.Mutex
	members map[string]*member

	requests, watches, held atomic.Int64
}

// NewFleet encodes the members' ConfigMaps once.
func NewFleet(cfg FleetConfig) (*Fleet, error) {
	tmpl, err := New(Config{ConfigMaps: cfg.ConfigMaps})
	if err != nil {
		return nil, err
	}
	tmpl.Compact()
	ns := cfg.Namespace
	if ns == "" {
		ns = FleetNamespace
	}
	return &Fleet{tmpl: tmpl, hub: newHub(tmpl, ns), members: map[string]*member{}}, nil
}

// SetURL tells the fleet its own base URL (http://host:port), which the
// hub's kubeconfigs point at. Call it before the first Secret.
func (f *Fleet) SetURL(u string) { f.url.Store(&u) }

// member is one cluster of the fleet.
type member struct {
	name       string
	rv         atomic.Int64
	mu         sync.Mutex
	watchers   map[*watcher]struct{}
	blackholed chan struct{} // closed when blackholed
	restored   chan struct{} // closed when the blackhole ends
	holed      bool
}

func (f *Fleet) member(name string) *member {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.members[name]
	if m == nil {
		m = &member{name: name, watchers: map[*watcher]struct{}{}, blackholed: make(chan struct{}), restored: make(chan struct{})}
		m.rv.Store(1 << 40)
		f.members[name] = m
	}
	return m
}

// ServeHTTP implements http.Handler.
func (f *Fleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	p := r.URL.Path
	if rest, ok := strings.CutPrefix(p, clustersPrefix); ok {
		name, sub, _ := strings.Cut(rest, "/")
		f.serveMember(w, r, f.member(name), "/"+sub)
		return
	}
	switch {
	case p == "/bench/fleet/secret":
		f.secret(w, r)
	case p == "/bench/fleet/fire":
		f.fire(w, r)
	case p == "/bench/fleet/blackhole":
		f.blackhole(w, r)
	case p == "/bench/fleet/stats":
		f.mu.Lock()
		n := len(f.members)
		f.mu.Unlock()
		writeJSON(w, FleetStats{Requests: f.requests.Load(), Watches: f.watches.Load(), Held: f.held.Load(), Members: n, Secrets: f.hub.len()})
	case p == "/api/v1/namespaces/"+f.hub.ns+"/secrets", p == "/api/v1/secrets":
		f.hub.serve(w, r, encodingOf(r))
	default:
		f.tmpl.ServeHTTP(w, r) // discovery, /version, /healthz; empty kinds
	}
}

// FleetStats counts what the fleet served.
type FleetStats struct {
	Requests, Watches int64
	// Held is how many requests a blackhole holds now.
	Held             int64
	Members, Secrets int
}

func encodingOf(r *http.Request) int {
	if strings.Contains(r.Header.Get("Accept"), "application/vnd.kubernetes.protobuf") {
		return encProto
	}
	return encJSON
}

// serveMember serves request path p of member m.
func (f *Fleet) serveMember(w http.ResponseWriter, r *http.Request, m *member, p string) {
	m.mu.Lock()
	holed, restored, blackholed := m.holed, m.restored, m.blackholed
	m.mu.Unlock()
	if holed { // nothing comes back until the client gives up or the blackhole ends
		f.held.Add(1)
		defer f.held.Add(-1)
		select {
		case <-r.Context().Done():
		case <-restored:
			http.Error(w, "the blackhole ended", http.StatusServiceUnavailable)
		}
		return
	}
	if p != "/api/v1/configmaps" {
		r2 := r.Clone(r.Context())
		r2.URL.Path = p
		f.tmpl.ServeHTTP(w, r2)
		return
	}
	enc := encodingOf(r)
	k := f.tmpl.kinds["configmaps"]
	q := r.URL.Query()
	if q.Get("watch") != "true" && q.Get("watch") != "1" {
		w.Header().Set("Content-Type", mediaTypes[enc])
		_, _ = w.Write(k.list[enc])
		return
	}
	f.watches.Add(1)
	ct := mediaTypes[enc]
	if enc == encProto {
		ct += ";stream=watch"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	wt := &watcher{enc: enc, ch: make(chan [2][][]byte, 16), done: make(chan struct{})}
	m.mu.Lock()
	m.watchers[wt] = struct{}{}
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.watchers, wt)
		m.mu.Unlock()
		close(wt.done)
	}()
	if q.Get("sendInitialEvents") == "true" {
		for _, fr := range k.added[enc] {
			if _, err := w.Write(fr); err != nil {
				return
			}
		}
		if _, err := w.Write(k.bookmark[enc]); err != nil {
			return
		}
	}
	fl.Flush()
	timeout := 30 * time.Minute
	if t, err := strconv.Atoi(q.Get("timeoutSeconds")); err == nil && t > 0 {
		timeout = time.Duration(t) * time.Second
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-timer.C:
			return
		case <-blackholed: // the watch breaks; what follows hangs
			return
		case batch := <-wt.ch:
			for _, fr := range batch[enc] {
				if _, err := w.Write(fr); err != nil {
					return
				}
			}
			fl.Flush()
		}
	}
}

// fire sends one MODIFIED event of ConfigMap 0, data["seq"] = seq, to
// every watcher of each cluster named in clusters (comma-separated);
// it answers with the number of watchers reached.
func (f *Fleet) fire(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	seq := q.Get("seq")
	names := strings.Split(q.Get("clusters"), ",")
	if seq == "" || q.Get("clusters") == "" {
		http.Error(w, "fire needs seq and clusters", http.StatusBadRequest)
		return
	}
	reached := 0
	for _, name := range names {
		m := f.member(name)
		cm := ConfigMap(0)
		cm.ResourceVersion = strconv.FormatInt(m.rv.Add(1), 10)
		cm.Data["seq"] = seq
		var frames [2][][]byte
		for enc := range 2 {
			fr, err := f.tmpl.frame(enc, watch.Modified, cm)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			frames[enc] = [][]byte{fr}
		}
		m.mu.Lock()
		for wt := range m.watchers {
			select {
			case wt.ch <- frames:
				reached++
			case <-wt.done:
			default: // a watcher 16 events behind loses this one
			}
		}
		m.mu.Unlock()
	}
	_, _ = fmt.Fprintf(w, `{"watchers":%d}`, reached)
}

// blackhole makes cluster ?cluster= answer nothing from now on, or, with
// ?off=1, ends its blackhole: the requests it held get a 503.
func (f *Fleet) blackhole(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("cluster")
	if name == "" {
		http.Error(w, "blackhole needs cluster", http.StatusBadRequest)
		return
	}
	m := f.member(name)
	m.mu.Lock()
	switch off := r.URL.Query().Get("off") == "1"; {
	case !off && !m.holed:
		m.holed = true
		close(m.blackholed)
	case off && m.holed:
		m.holed = false
		close(m.restored)
		m.blackholed, m.restored = make(chan struct{}), make(chan struct{})
	}
	m.mu.Unlock()
	_, _ = w.Write([]byte("{}"))
}

// secret creates (POST) or deletes (DELETE) the kubeconfig Secret of
// cluster ?name=, whose server is the fleet's /clusters/<name>.
func (f *Fleet) secret(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if name == "" {
		http.Error(w, "secret needs name", http.StatusBadRequest)
		return
	}
	base := f.url.Load()
	if base == nil {
		http.Error(w, "the fleet does not know its URL (SetURL)", http.StatusConflict)
		return
	}
	var err error
	switch r.Method {
	case http.MethodPost:
		err = f.hub.put(name, Kubeconfig(*base+clustersPrefix+name))
	case http.MethodDelete:
		err = f.hub.remove(name)
	default:
		http.Error(w, "POST or DELETE", http.StatusMethodNotAllowed)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	_, _ = w.Write([]byte("{}"))
}

// Kubeconfig returns a kubeconfig for server with a bearer token.
func Kubeconfig(server string) []byte {
	return []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: ` + server + `
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
users:
- name: u
  user: {token: fleet-token}
`)
}

// hubSecret returns the kubeconfig Secret of cluster name.
func hubSecret(ns, name string, rv int64, kubeconfig []byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid("HubSecret", int(rv)),
			ResourceVersion: strconv.FormatInt(rv, 10), CreationTimestamp: created,
			Labels: map[string]string{KubeconfigLabel: "true"}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"kubeconfig": kubeconfig},
	}
}
