package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/reconcile"
)

// countingSink counts WithValues calls on the sink it wraps.
type countingSink struct {
	logr.LogSink
	withValues *int
}

func (c countingSink) WithValues(kv ...any) logr.LogSink {
	*c.withValues++
	return countingSink{LogSink: c.LogSink.WithValues(kv...), withValues: c.withValues}
}

func (c countingSink) WithCallDepth(depth int) logr.LogSink {
	return countingSink{LogSink: c.LogSink.(logr.CallDepthLogSink).WithCallDepth(depth), withValues: c.withValues}
}

func here() int {
	_, _, line, _ := runtime.Caller(1)
	return line
}

func TestRequestLoggerFuncr(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{LogCaller: funcr.All}).WithName("ctrl")
	var calls int
	base = base.WithSink(countingSink{LogSink: base.GetSink(), withValues: &calls})

	log := requestLogger(base, "", "ns", "web", fixedReconcileID("id-1"))
	assert.Zero(t, calls, "nothing is attached before something is logged")
	line := here() + 1
	log.Info("hello", "k", "v")
	log.V(1).Info("hidden")
	log.Error(nil, "failed")
	assert.Equal(t, 1, calls, "the values are attached once")
	require.Len(t, lines, 2)
	for _, l := range lines {
		assert.Contains(t, l, `"object"={"name"="web" "namespace"="ns"} "namespace"="ns" "name"="web" "reconcileID"="id-1"`)
	}
	assert.Contains(t, lines[0], `"k"="v"`)
	assert.Contains(t, lines[0], `"file"="reqlog_test.go" "line"=`+itoa(line), "the call site is the caller's")

	lines = nil
	derived := log.WithValues("extra", 1).WithName("sub")
	line = here() + 1
	derived.Info("again")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], `"object"={"name"="web" "namespace"="ns"} "namespace"="ns" "name"="web" "reconcileID"="id-1" "extra"=1`)
	assert.Contains(t, lines[0], `"file"="reqlog_test.go" "line"=`+itoa(line))

	assert.Equal(t, logr.Discard(), requestLogger(logr.Discard(), "", "ns", "web", fixedReconcileID("id")))
}

func TestRequestLoggerSlogSource(t *testing.T) {
	var buf bytes.Buffer
	base := logr.FromSlogHandler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{AddSource: true}))
	log := requestLogger(base, "Widget", "ns", "web", fixedReconcileID("id-2"))
	line := here() + 1
	log.Info("hello")
	var rec struct {
		Namespace, Name, ReconcileID string
		Source                       struct {
			File string
			Line int
		}
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &rec), buf.String())
	assert.Equal(t, "ns", rec.Namespace)
	assert.Equal(t, "web", rec.Name)
	assert.Equal(t, "id-2", rec.ReconcileID)
	assert.Equal(t, "reqlog_test.go", filepath.Base(rec.Source.File))
	assert.Equal(t, line, rec.Source.Line)
}

func itoa(n int) string { return strconv.Itoa(n) }

// jsonLines decodes each line of a slog JSON handler's output.
func jsonLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var m map[string]any
		require.NoError(t, json.Unmarshal(line, &m), string(line))
		out = append(out, m)
	}
	return out
}

// keysOf returns the keys of m other than slog's own (time, level, msg).
func keysOf(m map[string]any) []string {
	var keys []string
	for k := range m {
		switch k {
		case slog.TimeKey, slog.LevelKey, slog.MessageKey:
		default:
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// TestReconcileLoggerKeys: a controller that knows its kind (as the builder
// makes it) logs controller-runtime's keys of a builder-made controller,
// exactly, with their value shapes: controller, controllerGroup,
// controllerKind on every line; "<Kind>": {name, namespace}, namespace,
// name, reconcileID on a reconcile's lines. A controller built by hand
// without a kind logs controller and, in a reconcile, "object" in the
// kind's place, as controller-runtime's controller.New. The namespace of
// a cluster-scoped object's reference is left out (klog.ObjectRef's
// omitempty), and a core kind's group is "".
func TestReconcileLoggerKeys(t *testing.T) {
	tests := []struct {
		name        string
		kind        schema.GroupKind
		req         reconcile.Request
		wantCtrl    map[string]any // the controller's own lines (Starting controller)
		wantRequest map[string]any // a reconcile's lines, besides wantCtrl's
	}{{
		name:     "builder kind",
		kind:     schema.GroupKind{Group: "example.com", Kind: "Gizmo"},
		req:      webReq,
		wantCtrl: map[string]any{"controller": "test", "controllerGroup": "example.com", "controllerKind": "Gizmo"},
		wantRequest: map[string]any{
			"Gizmo":     map[string]any{"name": "web", "namespace": "default"},
			"namespace": "default", "name": "web",
		},
	}, {
		name:     "core kind, cluster-scoped object",
		kind:     schema.GroupKind{Kind: "Namespace"},
		req:      reconcile.Request{NamespacedName: types.NamespacedName{Name: "team-a"}},
		wantCtrl: map[string]any{"controller": "test", "controllerGroup": "", "controllerKind": "Namespace"},
		wantRequest: map[string]any{
			"Namespace": map[string]any{"name": "team-a"},
			"namespace": "", "name": "team-a",
		},
	}, {
		name:     "a fleet cluster's Request",
		kind:     schema.GroupKind{Group: "example.com", Kind: "Gizmo"},
		req:      reconcile.Request{Cluster: "east", NamespacedName: types.NamespacedName{Namespace: "default", Name: "web"}},
		wantCtrl: map[string]any{"controller": "test", "controllerGroup": "example.com", "controllerKind": "Gizmo"},
		wantRequest: map[string]any{
			"Gizmo":     map[string]any{"name": "web", "namespace": "default"},
			"namespace": "default", "name": "web", "cluster": "east",
		},
	}, {
		name:     "by hand, no kind",
		req:      webReq,
		wantCtrl: map[string]any{"controller": "test"},
		wantRequest: map[string]any{
			"object":    map[string]any{"name": "web", "namespace": "default"},
			"namespace": "default", "name": "web",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			var mu sync.Mutex
			log := logr.FromSlogHandler(slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil))
			var id types.UID
			r := reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
				id = ReconcileIDFromContext(ctx)
				logr.FromContextOrDiscard(ctx).Info("in reconcile")
				return reconcile.Result{}, nil
			})
			c, err := NewUnmanaged("test", Options{Reconciler: r, Logger: log, ForKind: tt.kind})
			require.NoError(t, err)
			c.GetLogger().Info("controller line")
			_, err = c.Reconcile(t.Context(), tt.req)
			require.NoError(t, err)

			mu.Lock()
			lines := jsonLines(t, &buf)
			mu.Unlock()
			require.Len(t, lines, 2)
			ctrlLine, reqLine := lines[0], lines[1]
			assert.Equal(t, "controller line", ctrlLine[slog.MessageKey])
			want := maps.Clone(tt.wantCtrl)
			assert.Equal(t, slices.Sorted(maps.Keys(want)), keysOf(ctrlLine), "the controller's keys, exactly")
			for k, v := range want {
				assert.Equal(t, v, ctrlLine[k], k)
			}

			maps.Copy(want, tt.wantRequest)
			want["reconcileID"] = string(id)
			assert.Equal(t, "in reconcile", reqLine[slog.MessageKey])
			assert.Equal(t, slices.Sorted(maps.Keys(want)), keysOf(reqLine), "a reconcile's keys, exactly")
			for k, v := range want {
				assert.Equal(t, v, reqLine[k], k)
			}
			assert.NotEmpty(t, id)
		})
	}
}

// TestReconcileLoggerKeyOrder: the keys come in controller-runtime's
// order, and the object reference renders as klog's ObjectRef does in a
// logr text sink.
func TestReconcileLoggerKeyOrder(t *testing.T) {
	var lines []string
	base := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
	log := requestLogger(controllerLogger(base, "gizmo", schema.GroupKind{Group: "example.com", Kind: "Gizmo"}),
		"Gizmo", "ns", "g1", fixedReconcileID("id-3"))
	log.Info("hello")
	require.Len(t, lines, 1)
	assert.Equal(t, `"level"=0 "msg"="hello" "controller"="gizmo" "controllerGroup"="example.com" "controllerKind"="Gizmo" `+
		`"Gizmo"={"name"="g1" "namespace"="ns"} "namespace"="ns" "name"="g1" "reconcileID"="id-3"`, lines[0])
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
