package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeloop/kubeloop/examples/sharded"
	"github.com/kubeloop/kubeloop/sharding"
)

var (
	shardKey = sharding.ShardLabel(sharded.Ring)
	drainKey = sharding.DrainLabel(sharded.Ring)
)

// objState is one ConfigMap as the tracker last saw it.
type objState struct {
	shard, drain string
	by           string // the annotation sharded.kubeloop.dev/by
	done         bool   // observed == desired
	labelled     time.Time
}

// tracker watches the sharded ConfigMaps from this process: an outside
// view of every label change, timed when its event arrived.
type tracker struct {
	mu   sync.Mutex
	objs map[string]*objState
	// firstDrain is when the first drain label was seen (zero: none yet).
	firstDrain time.Time
	// handovers counts updates that removed a shard label.
	handovers int
}

// watchObjects lists and then watches the ConfigMaps of objectNS until
// ctx ends.
func (cl *cluster) watchObjects(ctx context.Context) (*tracker, error) {
	t := &tracker{objs: map[string]*objState{}}
	l, err := cl.cs.CoreV1().ConfigMaps(objectNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for i := range l.Items {
		t.update(&l.Items[i], now)
	}
	rv := l.ResourceVersion
	go func() {
		for ctx.Err() == nil {
			w, err := cl.cs.CoreV1().ConfigMaps(objectNS).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if !ok {
					continue
				}
				rv = cm.ResourceVersion
				switch ev.Type {
				case watch.Added, watch.Modified:
					t.update(cm, time.Now())
				case watch.Deleted:
					t.mu.Lock()
					delete(t.objs, cm.Name)
					t.mu.Unlock()
				}
			}
			w.Stop()
		}
	}()
	return t, nil
}

func (t *tracker) update(cm *corev1.ConfigMap, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.objs[cm.Name]
	if o == nil {
		o = &objState{}
		t.objs[cm.Name] = o
	}
	shard, drain := cm.Labels[shardKey], cm.Labels[drainKey]
	if shard != o.shard || drain != o.drain {
		if shard == "" && o.shard != "" {
			t.handovers++
		}
		o.labelled = at
	}
	if drain != "" && t.firstDrain.IsZero() {
		t.firstDrain = at
	}
	o.shard, o.drain = shard, drain
	o.by = cm.Annotations["sharded.kubeloop.dev/by"]
	o.done = cm.Data["observed"] == cm.Data["desired"]
}

// snapshot returns a copy of every object's state.
func (t *tracker) snapshot() map[string]objState {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]objState, len(t.objs))
	for n, o := range t.objs {
		out[n] = *o
	}
	return out
}

// converged reports whether all n objects are assigned to a shard of
// shards and reconciled by it.
func (t *tracker) converged(n int, shards []string) bool {
	s := t.snapshot()
	if len(s) != n {
		return false
	}
	for _, o := range s {
		if !slices.Contains(shards, o.shard) || o.drain != "" || o.by != o.shard || !o.done {
			return false
		}
	}
	return true
}

// witnessLine is one line of a replica's reconcile log: S (start) or E
// (end) of a reconcile of key by shard at ts.
type witnessLine struct {
	start bool
	shard string
	key   string
	ts    time.Time
}

// witnessReader reads a witness file incrementally, complete lines only.
type witnessReader struct {
	path string
	off  int64
	rest []byte
}

func (w *witnessReader) read() ([]witnessLine, error) {
	f, err := os.Open(w.path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(w.off, io.SeekStart); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	w.off += int64(len(b))
	b = append(w.rest, b...)
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		w.rest = b
		return nil, nil
	}
	w.rest = append([]byte(nil), b[i+1:]...)
	var out []witnessLine
	for _, line := range strings.Split(string(b[:i]), "\n") {
		fs := strings.Fields(line)
		if len(fs) != 4 || (fs[0] != "S" && fs[0] != "E") {
			continue // a line cut by kill -9
		}
		ns, err := strconv.ParseInt(fs[3], 10, 64)
		if err != nil {
			continue
		}
		out = append(out, witnessLine{start: fs[0] == "S", shard: fs[1], key: fs[2], ts: time.Unix(0, ns)})
	}
	return out, nil
}

// readAllWitness reads a whole witness file.
func readAllWitness(path string) ([]witnessLine, error) {
	w := &witnessReader{path: path}
	return w.read()
}

// overlaps reads every replica's witness and returns the reconciles of
// one key by two shards at once (a start without an end, in a killed
// process, lasts until the kill), and the number of reconciles.
func (cl *cluster) overlaps() (overlaps []string, total int, err error) {
	type interval struct {
		shard      string
		start, end time.Time
	}
	byKey := map[string][]interval{}
	for _, r := range cl.reps {
		lines, err := readAllWitness(r.witness)
		if err != nil {
			return nil, 0, err
		}
		open := map[string]time.Time{}
		for _, l := range lines {
			if l.start {
				open[l.key] = l.ts
				continue
			}
			byKey[l.key] = append(byKey[l.key], interval{r.shard, open[l.key], l.ts})
			delete(open, l.key)
			total++
		}
		end := time.Now()
		if !r.killed.IsZero() {
			end = r.killed
		}
		for k, s := range open {
			byKey[k] = append(byKey[k], interval{r.shard, s, end})
		}
	}
	for k, ivs := range byKey {
		slices.SortFunc(ivs, func(a, b interval) int { return a.start.Compare(b.start) })
		for i := 1; i < len(ivs); i++ {
			for j := range i {
				if ivs[j].shard != ivs[i].shard && ivs[i].start.Before(ivs[j].end) {
					overlaps = append(overlaps, fmt.Sprintf("%s by %s [%s, %s] and %s [%s, %s]", k,
						ivs[j].shard, ivs[j].start.Format(tsFormat), ivs[j].end.Format(tsFormat),
						ivs[i].shard, ivs[i].start.Format(tsFormat), ivs[i].end.Format(tsFormat)))
				}
			}
		}
	}
	return overlaps, total, nil
}

const tsFormat = "15:04:05.000"

// logLine is one line of a replica's JSON log.
type logLine struct {
	shard  string
	time   time.Time
	msg    string
	fields map[string]any
}

// readLog returns the lines of r's log whose message is one of msgs.
func readLog(r *replica, msgs ...string) ([]logLine, error) {
	f, err := os.Open(r.log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []logLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		msg, _ := m["msg"].(string)
		if !slices.Contains(msgs, msg) {
			continue
		}
		ts, _ := m["time"].(string)
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			continue
		}
		out = append(out, logLine{shard: r.shard, time: at, msg: msg, fields: m})
	}
	return out, sc.Err()
}

// cachePoller asks the replicas how many objects their caches hold,
// every 50 ms, and remembers when each count last changed.
type cachePoller struct {
	mu      sync.Mutex
	count   map[string]int
	changed map[string]time.Time
}

func pollCaches(ctx context.Context, reps []*replica) *cachePoller {
	p := &cachePoller{count: map[string]int{}, changed: map[string]time.Time{}}
	go func() {
		for ctx.Err() == nil {
			for _, r := range reps {
				n, err := r.cached()
				if err != nil {
					continue
				}
				p.mu.Lock()
				if old, ok := p.count[r.shard]; !ok || old != n {
					p.count[r.shard], p.changed[r.shard] = n, time.Now()
				}
				p.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return p
}

// last returns each replica's count and when it last changed.
func (p *cachePoller) last() (map[string]int, map[string]time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, t := map[string]int{}, map[string]time.Time{}
	for k, v := range p.count {
		c[k] = v
	}
	for k, v := range p.changed {
		t[k] = v
	}
	return c, t
}
