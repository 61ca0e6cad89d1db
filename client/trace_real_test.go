package client_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/trace"
	"github.com/kubeloop/kubeloop/trace/tracetest"
)

// headerTracer is a Recorder whose calls add a header, as an
// OpenTelemetry propagator adds traceparent.
type headerTracer struct{ *tracetest.Recorder }

func (h headerTracer) StartCall(ctx context.Context, c trace.Call) (context.Context, trace.Span) {
	c.Header.Set("X-Test-Trace", c.Verb)
	return h.Recorder.StartCall(ctx, c)
}

// TestLiveRequestsUnderATracerAreChildSpans: against the real API
// server, every request a client sends under a context holding a Tracer
// is a span under the context's span, with its verb, object and status,
// and the Tracer's header reaches the server; without a Tracer nothing is
// recorded.
func TestLiveRequestsUnderATracerAreChildSpans(t *testing.T) {
	var mu sync.Mutex
	var seen []string // X-Test-Trace of the requests that reached the server
	cfg := rest.CopyConfig(restConfig)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if v := req.Header.Get("X-Test-Trace"); v != "" {
				mu.Lock()
				seen = append(seen, v)
				mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	})
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	ns := newNamespace(t, t.Context(), c)

	rec := &tracetest.Recorder{}
	ctx, parent := rec.StartReconcile(trace.NewContext(t.Context(), headerTracer{rec}), trace.Reconcile{Controller: "test"})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "traced"}}
	require.NoError(t, c.Create(ctx, cm))
	cm.Data = map[string]string{"a": "b"}
	require.NoError(t, c.Update(ctx, cm))
	require.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "missing"}, &corev1.ConfigMap{})))
	require.NoError(t, c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns)))
	require.NoError(t, c.Delete(ctx, cm))
	parent.End(trace.Outcome{})

	calls := rec.Calls()
	require.Len(t, calls, 5)
	type row struct {
		Verb, Resource, Namespace, Name string
		Status                          int
	}
	var got []row
	for _, s := range calls {
		assert.Same(t, rec.Reconciles()[0], s.Parent, "a child of the context's span")
		o, ended := s.Ended()
		assert.True(t, ended, "%s ended", s.Call.Verb)
		got = append(got, row{s.Call.Verb, s.Call.Resource, s.Call.Namespace, s.Call.Name, o.StatusCode})
		if o.StatusCode >= 400 {
			assert.ErrorContains(t, o.Err, "HTTP 404")
		} else {
			assert.NoError(t, o.Err)
		}
	}
	assert.Equal(t, []row{
		{"create", "configmaps", ns, "", 201},
		{"update", "configmaps", ns, "traced", 200},
		{"get", "configmaps", ns, "missing", 404},
		{"list", "configmaps", ns, "", 200},
		{"delete", "configmaps", ns, "traced", 200},
	}, got)
	mu.Lock()
	assert.Equal(t, []string{"create", "update", "get", "list", "delete"}, seen, "the Tracer's header was sent")
	mu.Unlock()

	before := rec.Len()
	require.NoError(t, c.List(t.Context(), &corev1.ConfigMapList{}, client.InNamespace(ns)))
	assert.Equal(t, before, rec.Len(), "no Tracer in the context: nothing traced")
}
