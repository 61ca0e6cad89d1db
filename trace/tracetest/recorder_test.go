package tracetest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/trace"
	"github.com/kubeloop/kubeloop/trace/tracetest"
)

// TestRecorder: events get their index as link; a call started under a
// reconcile's context is its child; spans record one outcome; what the
// caller passed is copied (links, headers), so later changes do not show.
func TestRecorder(t *testing.T) {
	var r tracetest.Recorder
	assert.Zero(t, r.Len())
	l0 := r.Event(trace.Event{Type: trace.EventCreate, Name: "a"})
	l1 := r.Event(trace.Event{Type: trace.EventUpdate, Name: "a"})
	assert.Equal(t, tracetest.EventLink(0), l0)
	assert.Equal(t, tracetest.EventLink(1), l1)

	links := []trace.Event{{Link: l0}, {Link: l1}}
	ctx, rs := r.StartReconcile(t.Context(), trace.Reconcile{Controller: "c", Name: "a", Links: links})
	links[0].Name = "changed"
	h := http.Header{"X": {"1"}}
	_, cs := r.StartCall(ctx, trace.Call{Verb: "update", Header: h})
	h.Set("X", "2")
	_, orphan := r.StartCall(context.Background(), trace.Call{Verb: "get"})

	rec := r.Reconciles()
	require.Len(t, rec, 1)
	assert.Empty(t, rec[0].Reconcile.Links[0].Name, "links copied")
	calls := r.Calls()
	require.Len(t, calls, 2)
	assert.Same(t, rec[0], calls[0].Parent)
	assert.Nil(t, calls[1].Parent)
	assert.Equal(t, "1", calls[0].Call.Header.Get("X"), "header copied")
	assert.Equal(t, []*tracetest.Span{calls[0]}, r.Children(rec[0]))
	assert.Equal(t, 5, r.Len())

	_, ended := rec[0].Ended()
	assert.False(t, ended)
	boom := errors.New("boom")
	cs.End(trace.Outcome{StatusCode: 409, Err: boom})
	rs.End(trace.Outcome{Err: boom})
	orphan.End(trace.Outcome{})
	o, ended := calls[0].Ended()
	assert.True(t, ended)
	assert.Equal(t, 409, o.StatusCode)
	assert.ErrorIs(t, o.Err, boom)
	assert.Panics(t, func() { rs.End(trace.Outcome{}) }, "a second End breaks the hook's contract")
}

// TestRecorderConcurrent: the Recorder is safe from many goroutines, as
// the controller and client call a Tracer (run under -race).
func TestRecorderConcurrent(t *testing.T) {
	var r tracetest.Recorder
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			r.Event(trace.Event{Name: fmt.Sprint(i)})
			ctx, s := r.StartReconcile(t.Context(), trace.Reconcile{Name: fmt.Sprint(i)})
			_, c := r.StartCall(ctx, trace.Call{Verb: "get"})
			c.End(trace.Outcome{})
			s.End(trace.Outcome{})
			_ = r.Reconciles()
		})
	}
	wg.Wait()
	assert.Len(t, r.Events(), 16)
	assert.Len(t, r.Reconciles(), 16)
	for _, s := range r.Reconciles() {
		assert.Len(t, r.Children(s), 1)
	}
}

// A test of a reconciler's tracing sets a Recorder as the Tracer and reads
// back what it recorded.
func ExampleRecorder() {
	var r tracetest.Recorder
	ctx, s := r.StartReconcile(context.Background(), trace.Reconcile{Controller: "widget", Name: "w1"})
	_, c := r.StartCall(ctx, trace.Call{Verb: "patch", Resource: "widgets"})
	c.End(trace.Outcome{StatusCode: 200})
	s.End(trace.Outcome{})
	rec := r.Reconciles()[0]
	fmt.Println(rec.Reconcile.Name, len(r.Children(rec)), r.Children(rec)[0].Call.Verb)
	// Output: w1 1 patch
}
