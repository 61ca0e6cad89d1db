package fakeapiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

// Encodings the server speaks, indexed by enc.
const (
	encJSON  = 0
	encProto = 1
)

var mediaTypes = [2]string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf}

// Config says how many objects of each kind the server holds.
type Config struct {
	ConfigMaps, Secrets, Pods int
}

// Server serves discovery, LIST and WATCH of the configured objects and
// the /bench/ control endpoints. Build it with New.
type Server struct {
	kinds map[string]*kind // by resource
	codec [2]codec

	mu     sync.Mutex
	lanes  map[string]*lane // by name; "" is every watcher
	nextRV int64

	lists, watches, watchLists [2]atomic.Int64
	lastFlush                  atomic.Int64 // MonotonicNow when watch events were last sent
}

// A lane is the prepared events of the watchers of one client, named by
// the User-Agent of their requests: with several benchmark children
// connected at once, each prepares and fires its own events, which reach
// its watches alone (bench/e2e's -interleave). The lane "" prepares and
// fires to every watcher.
type lane struct {
	prepared  [2][][]byte // MODIFIED ConfigMap frames by encoding; guarded by Server.mu
	cursor    int         // guarded by Server.mu
	lastFlush atomic.Int64
}

// lane returns the lane of that name, made on first use.
func (s *Server) lane(name string) *lane {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.laneLocked(name)
}

func (s *Server) laneLocked(name string) *lane {
	l := s.lanes[name]
	if l == nil {
		l = &lane{}
		s.lanes[name] = l
	}
	return l
}

type codec struct {
	object runtime.Encoder // objects and lists, with apiVersion/kind
	stream runtime.Encoder // watch events
	frame  bool            // length-prefixed frames (protobuf)
}

type kind struct {
	resource, name string
	list           [2][]byte   // the whole LIST body
	added          [2][][]byte // one ADDED frame per object, for WatchList
	bookmark       [2][]byte   // the initial-events-end BOOKMARK frame
	listRV         int64

	mu       sync.Mutex
	watchers map[*watcher]struct{}
}

type watcher struct {
	enc  int
	lane string // the User-Agent of the watch request
	ln   *lane
	ch   chan [2][][]byte
	done chan struct{} // closed when the watch ends
}

// New encodes every object in JSON and protobuf; it takes a few seconds
// for 100k objects.
func New(cfg Config) (*Server, error) {
	s := &Server{kinds: map[string]*kind{}, lanes: map[string]*lane{}, nextRV: 1 << 40}
	for i, mt := range mediaTypes {
		info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), mt)
		if !ok {
			return nil, fmt.Errorf("fakeapiserver: no serializer for %s", mt)
		}
		s.codec[i] = codec{
			object: scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion),
			stream: info.StreamSerializer.Serializer,
			frame:  i == encProto,
		}
	}
	type spec struct {
		resource, name string
		n              int
		obj            func(int) runtime.Object
		list           func([]runtime.Object) runtime.Object
		empty          func() metav1.Object
	}
	specs := []spec{
		{"configmaps", "ConfigMap", cfg.ConfigMaps, func(i int) runtime.Object { return ConfigMap(i) }, func(objs []runtime.Object) runtime.Object {
			l := &corev1.ConfigMapList{Items: make([]corev1.ConfigMap, len(objs))}
			for i, o := range objs {
				l.Items[i] = *o.(*corev1.ConfigMap)
			}
			return l
		}, func() metav1.Object { return &corev1.ConfigMap{} }},
		{"secrets", "Secret", cfg.Secrets, func(i int) runtime.Object { return Secret(i) }, func(objs []runtime.Object) runtime.Object {
			l := &corev1.SecretList{Items: make([]corev1.Secret, len(objs))}
			for i, o := range objs {
				l.Items[i] = *o.(*corev1.Secret)
			}
			return l
		}, func() metav1.Object { return &corev1.Secret{} }},
		{"pods", "Pod", cfg.Pods, func(i int) runtime.Object { return Pod(i) }, func(objs []runtime.Object) runtime.Object {
			l := &corev1.PodList{Items: make([]corev1.Pod, len(objs))}
			for i, o := range objs {
				l.Items[i] = *o.(*corev1.Pod)
			}
			return l
		}, func() metav1.Object { return &corev1.Pod{} }},
	}
	for _, sp := range specs {
		k := &kind{resource: sp.resource, name: sp.name, listRV: int64(sp.n) + 1, watchers: map[*watcher]struct{}{}}
		objs := make([]runtime.Object, sp.n)
		for i := range objs {
			objs[i] = sp.obj(i)
		}
		list := sp.list(objs)
		list.(metav1.ListInterface).SetResourceVersion(strconv.FormatInt(k.listRV, 10))
		bm := sp.empty()
		bm.SetResourceVersion(strconv.FormatInt(k.listRV, 10))
		bm.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		// One encoding after the other: the versioning encoders set each
		// object's apiVersion and kind while they encode it, so two at once
		// would race on the shared objects.
		errs := make([]error, 2)
		for enc := range 2 {
			func() {
				var b bytes.Buffer
				if errs[enc] = s.codec[enc].object.Encode(list, &b); errs[enc] != nil {
					return
				}
				k.list[enc] = b.Bytes()
				k.added[enc] = make([][]byte, len(objs))
				for i, o := range objs {
					if k.added[enc][i], errs[enc] = s.frame(enc, watch.Added, o); errs[enc] != nil {
						return
					}
				}
				k.bookmark[enc], errs[enc] = s.frame(enc, watch.Bookmark, bm.(runtime.Object))
			}()
		}
		for _, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("fakeapiserver: encode %s: %w", sp.resource, err)
			}
		}
		s.kinds[sp.resource] = k
	}
	return s, nil
}

// frame encodes one watch event as it travels on the wire.
func (s *Server) frame(enc int, typ watch.EventType, obj runtime.Object) ([]byte, error) {
	c := s.codec[enc]
	var raw bytes.Buffer
	if err := c.object.Encode(obj, &raw); err != nil {
		return nil, err
	}
	var ev bytes.Buffer
	if c.frame {
		ev.Write([]byte{0, 0, 0, 0})
	}
	if err := c.stream.Encode(&metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: raw.Bytes()}}, &ev); err != nil {
		return nil, err
	}
	b := ev.Bytes()
	if c.frame {
		n := len(b) - 4
		b[0], b[1], b[2], b[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	}
	return b, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/api":
		writeJSON(w, &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}}})
	case p == "/apis":
		writeJSON(w, &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}})
	case p == "/api/v1":
		verbs := metav1.Verbs{"get", "list", "watch"}
		writeJSON(w, &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "v1",
			APIResources: []metav1.APIResource{
				{Name: "configmaps", SingularName: "configmap", Namespaced: true, Kind: "ConfigMap", Verbs: verbs},
				{Name: "secrets", SingularName: "secret", Namespaced: true, Kind: "Secret", Verbs: verbs},
				{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Verbs: verbs},
			}})
	case p == "/version":
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.2","platform":"linux/amd64"}`))
	case p == "/healthz", p == "/readyz", p == "/livez", p == "/bench/ping":
		_, _ = w.Write([]byte("ok"))
	case p == "/bench/prepare":
		s.prepare(w, r)
	case p == "/bench/fire":
		s.fire(w, r)
	case p == "/bench/stats":
		s.stats(w, r)
	case strings.HasPrefix(p, "/api/v1/"):
		k, ok := s.kinds[strings.TrimPrefix(p, "/api/v1/")]
		if !ok {
			notFound(w, p)
			return
		}
		enc := encJSON
		if strings.Contains(r.Header.Get("Accept"), runtime.ContentTypeProtobuf) {
			enc = encProto
		}
		q := r.URL.Query()
		if q.Get("watch") == "true" || q.Get("watch") == "1" {
			s.watch(w, r, k, enc, q.Get("sendInitialEvents") == "true")
			return
		}
		s.lists[enc].Add(1)
		w.Header().Set("Content-Type", mediaTypes[enc])
		_, _ = w.Write(k.list[enc])
	default:
		notFound(w, p)
	}
}

func (s *Server) watch(w http.ResponseWriter, r *http.Request, k *kind, enc int, initial bool) {
	ct := mediaTypes[enc]
	if enc == encProto {
		ct += ";stream=watch"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	ua := r.UserAgent()
	wt := &watcher{enc: enc, lane: ua, ln: s.lane(ua), ch: make(chan [2][][]byte, 4096), done: make(chan struct{})}
	k.mu.Lock()
	k.watchers[wt] = struct{}{}
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		delete(k.watchers, wt)
		k.mu.Unlock()
		close(wt.done)
	}()
	if initial {
		s.watchLists[enc].Add(1)
		for _, f := range k.added[enc] {
			if _, err := w.Write(f); err != nil {
				return
			}
		}
		if _, err := w.Write(k.bookmark[enc]); err != nil {
			return
		}
	} else {
		s.watches[enc].Add(1)
	}
	fl.Flush()
	timeout := 30 * time.Minute
	if t, err := strconv.Atoi(r.URL.Query().Get("timeoutSeconds")); err == nil && t > 0 {
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
		case batch := <-wt.ch:
			for _, f := range batch[enc] {
				if _, err := w.Write(f); err != nil {
					return
				}
			}
			if len(wt.ch) == 0 {
				now := MonotonicNow()
				s.lastFlush.Store(now)
				wt.ln.lastFlush.Store(now)
				fl.Flush()
			}
		}
	}
}

// PrepareResult describes a prepared batch of MODIFIED events: event k
// (from 0) modifies ConfigMap k % Objects and carries resourceVersion
// BaseRV + k + 1.
type PrepareResult struct {
	Count   int   `json:"count"`
	Objects int   `json:"objects"`
	BaseRV  int64 `json:"baseRV"`
}

// prepare encodes count MODIFIED ConfigMap events over the first objects
// ConfigMaps, each with a fresh resourceVersion and data, for fire to push
// (in the lane the query's lane names: the watches whose User-Agent it
// is; none, every watch).
func (s *Server) prepare(w http.ResponseWriter, r *http.Request) {
	count, err1 := strconv.Atoi(r.URL.Query().Get("count"))
	objects, err2 := strconv.Atoi(r.URL.Query().Get("objects"))
	if err1 != nil || err2 != nil || count <= 0 || objects <= 0 {
		http.Error(w, "count and objects must be positive integers", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	base := s.nextRV
	s.nextRV += int64(count) + 1
	var frames [2][][]byte
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for enc := range 2 {
		frames[enc] = make([][]byte, count)
		wg.Go(func() {
			for k := range count {
				cm := ConfigMap(k % objects)
				cm.ResourceVersion = strconv.FormatInt(base+int64(k)+1, 10)
				cm.Data["revision"] = strconv.Itoa(k)
				if frames[enc][k], errs[enc] = s.frame(enc, watch.Modified, cm); errs[enc] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	l := s.laneLocked(r.URL.Query().Get("lane"))
	l.prepared, l.cursor = frames, 0
	writeJSON(w, PrepareResult{Count: count, Objects: objects, BaseRV: base})
}

// fire pushes the next count prepared events of the query's lane to its
// ConfigMap watchers (no lane: every watcher) and answers with the index
// of the first one once they are queued.
func (s *Server) fire(w http.ResponseWriter, r *http.Request) {
	count, err := strconv.Atoi(r.URL.Query().Get("count"))
	if err != nil || count <= 0 {
		http.Error(w, "count must be a positive integer", http.StatusBadRequest)
		return
	}
	name := r.URL.Query().Get("lane")
	s.mu.Lock()
	l := s.laneLocked(name)
	first := l.cursor
	if first+count > len(l.prepared[0]) {
		s.mu.Unlock()
		http.Error(w, "not enough prepared events", http.StatusConflict)
		return
	}
	l.cursor += count
	var batch [2][][]byte
	for enc := range 2 {
		batch[enc] = l.prepared[enc][first : first+count]
	}
	s.mu.Unlock()
	k := s.kinds["configmaps"]
	k.mu.Lock()
	watchers := make([]*watcher, 0, len(k.watchers))
	for wt := range k.watchers {
		if name == "" || wt.lane == name {
			watchers = append(watchers, wt)
		}
	}
	k.mu.Unlock()
	const chunk = 256 // let writers start before the whole batch is queued
	for lo := 0; lo < count; lo += chunk {
		hi := min(lo+chunk, count)
		for _, wt := range watchers {
			select {
			case wt.ch <- [2][][]byte{batch[0][lo:hi], batch[1][lo:hi]}:
			case <-wt.done:
			}
		}
	}
	_, _ = fmt.Fprintf(w, `{"first":%d,"watchers":%d}`, first, len(watchers))
}

// Stats counts the requests served, by encoding.
type Stats struct {
	ListsJSON, ListsProto           int64
	WatchesJSON, WatchesProto       int64
	WatchListsJSON, WatchListsProto int64
	// LastWatchFlush is when watch events were last sent (to the watches
	// of the lane asked for, if one was), as MonotonicNow read just before
	// the write that sends them; 0 if never.
	LastWatchFlush int64
	// ConfigMaps is how many ConfigMaps the server holds.
	ConfigMaps int
}

// MonotonicNow is the system-wide monotonic clock (CLOCK_MONOTONIC) in
// nanoseconds: unlike time.Now's monotonic reading, it compares across
// processes, so a benchmark can time an event from the moment this server
// sent it.
func MonotonicNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err) // cannot fail on Linux with a valid clock id
	}
	return ts.Nano()
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) {
	last := s.lastFlush.Load()
	if name := r.URL.Query().Get("lane"); name != "" {
		last = s.lane(name).lastFlush.Load()
	}
	writeJSON(w, Stats{
		ListsJSON: s.lists[encJSON].Load(), ListsProto: s.lists[encProto].Load(),
		WatchesJSON: s.watches[encJSON].Load(), WatchesProto: s.watches[encProto].Load(),
		WatchListsJSON: s.watchLists[encJSON].Load(), WatchListsProto: s.watchLists[encProto].Load(),
		LastWatchFlush: last,
		ConfigMaps:     len(s.kinds["configmaps"].added[encJSON]),
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter, p string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"%s not found","reason":"NotFound","code":404}`, p)
}
