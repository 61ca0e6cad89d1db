package fakeapiserver

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// hub is the fleet's management cluster: Secrets of one namespace that
// change, with LIST, WATCH from a resourceVersion and WatchList served
// from an event log (the only kind of this package that is written).
type hub struct {
	s  *Server // codecs
	ns string

	mu      sync.Mutex
	rv      int64
	secrets map[string]*corev1.Secret
	log     []hubEvent    // every change, in resourceVersion order
	changed chan struct{} // closed and replaced on each change
}

type hubEvent struct {
	rv     int64
	frames [2][]byte
}

func newHub(s *Server, ns string) *hub {
	return &hub{s: s, ns: ns, rv: 1, secrets: map[string]*corev1.Secret{}, changed: make(chan struct{})}
}

func (h *hub) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.secrets)
}

// put creates the Secret of cluster name, or replaces its kubeconfig.
func (h *hub) put(name string, kubeconfig []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	typ := watch.Added
	if _, ok := h.secrets[name]; ok {
		typ = watch.Modified
	}
	h.rv++
	sec := hubSecret(h.ns, name, h.rv, kubeconfig)
	if err := h.appendLocked(typ, sec); err != nil {
		return err
	}
	h.secrets[name] = sec
	return nil
}

// remove deletes the Secret of cluster name.
func (h *hub) remove(name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	sec, ok := h.secrets[name]
	if !ok {
		return fmt.Errorf("secret %s/%s not found", h.ns, name)
	}
	h.rv++
	gone := sec.DeepCopy()
	gone.ResourceVersion = strconv.FormatInt(h.rv, 10)
	if err := h.appendLocked(watch.Deleted, gone); err != nil {
		return err
	}
	delete(h.secrets, name)
	return nil
}

func (h *hub) appendLocked(typ watch.EventType, sec *corev1.Secret) error {
	ev := hubEvent{rv: h.rv}
	for enc := range 2 {
		fr, err := h.s.frame(enc, typ, sec)
		if err != nil {
			return fmt.Errorf("encode secret %s: %w", sec.Name, err)
		}
		ev.frames[enc] = fr
	}
	h.log = append(h.log, ev)
	close(h.changed)
	h.changed = make(chan struct{})
	return nil
}

// snapshot returns the Secrets sorted by name and the current version.
func (h *hub) snapshot() ([]*corev1.Secret, int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*corev1.Secret, 0, len(h.secrets))
	for _, s := range h.secrets {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *corev1.Secret) int { return strings.Compare(a.Name, b.Name) })
	return out, h.rv
}

// serve answers a LIST or a WATCH of the hub's Secrets.
func (h *hub) serve(w http.ResponseWriter, r *http.Request, enc int) {
	q := r.URL.Query()
	if q.Get("watch") != "true" && q.Get("watch") != "1" {
		secs, rv := h.snapshot()
		l := &corev1.SecretList{Items: make([]corev1.Secret, len(secs))}
		for i, s := range secs {
			l.Items[i] = *s
		}
		l.ResourceVersion = strconv.FormatInt(rv, 10)
		var b bytes.Buffer
		if err := h.s.codec[enc].object.Encode(l, &b); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", mediaTypes[enc])
		_, _ = w.Write(b.Bytes())
		return
	}
	ct := mediaTypes[enc]
	if enc == encProto {
		ct += ";stream=watch"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	var from int64
	if q.Get("sendInitialEvents") == "true" {
		secs, rv := h.snapshot()
		for _, s := range secs {
			fr, err := h.s.frame(enc, watch.Added, s)
			if err != nil {
				return
			}
			if _, err := w.Write(fr); err != nil {
				return
			}
		}
		bm := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.FormatInt(rv, 10),
			Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
		fr, err := h.s.frame(enc, watch.Bookmark, runtime.Object(bm))
		if err != nil {
			return
		}
		if _, err := w.Write(fr); err != nil {
			return
		}
		from = rv
	} else {
		from, _ = strconv.ParseInt(q.Get("resourceVersion"), 10, 64)
	}
	fl.Flush()
	timeout := 30 * time.Minute
	if t, err := strconv.Atoi(q.Get("timeoutSeconds")); err == nil && t > 0 {
		timeout = time.Duration(t) * time.Second
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		h.mu.Lock()
		i, _ := slices.BinarySearchFunc(h.log, from+1, func(e hubEvent, rv int64) int { return int(e.rv - rv) })
		pending := slices.Clone(h.log[i:])
		changed := h.changed
		h.mu.Unlock()
		for _, ev := range pending {
			if _, err := w.Write(ev.frames[enc]); err != nil {
				return
			}
			from = ev.rv
		}
		if len(pending) > 0 {
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-timer.C:
			return
		case <-changed:
		}
	}
}
