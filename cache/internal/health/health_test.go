package health

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestListWatchHealth(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	eof := &url.Error{Op: "Get", URL: "https://lb/api", Err: io.EOF}
	reset := &url.Error{Op: "Get", URL: "https://lb/api", Err: errors.New("read: connection reset by peer")}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("RBAC says no"))
	gone := apierrors.NewResourceExpired("too old resource version")
	type step func(h *Health)
	noAnswer := func(err error) step { return func(h *Health) { h.noAnswer(ctx, err) } }
	answered := func(h *Health) { h.answered() }
	listed := func(err error) step { return func(h *Health) { h.listed(ctx, err) } }
	watched := func(err error) step { return func(h *Health) { h.watched(ctx, err) } }
	tests := []struct {
		name  string
		steps []step
		want  string // "" means healthy
	}{
		{name: "nothing yet", want: ""},
		{name: "two unanswered requests are a blip", steps: []step{noAnswer(eof), noAnswer(eof)}, want: ""},
		{
			name:  "three unanswered requests in a row",
			steps: []step{noAnswer(eof), noAnswer(reset), noAnswer(eof)},
			want:  `3 requests in a row in 0s got no answer from the API server (connection closed or reset): Get "https://lb/api": EOF`,
		},
		{name: "an answer ends the streak", steps: []step{noAnswer(eof), noAnswer(eof), answered, noAnswer(eof), noAnswer(eof)}, want: ""},
		{name: "an answer clears the failure", steps: []step{noAnswer(eof), noAnswer(eof), noAnswer(eof), answered}, want: ""},
		{
			name:  "an open watch does not clear unanswered requests",
			steps: []step{noAnswer(eof), noAnswer(eof), noAnswer(eof), watched(nil)},
			want:  `3 requests in a row in 0s got no answer from the API server (connection closed or reset): Get "https://lb/api": EOF`,
		},
		{name: "a list that ends in EOF fails", steps: []step{listed(eof)}, want: `Get "https://lb/api": EOF`},
		{name: "a successful list clears everything", steps: []step{listed(forbidden), noAnswer(eof), noAnswer(eof), noAnswer(eof), listed(nil)}, want: ""},
		{name: "a forbidden list", steps: []step{listed(forbidden)}, want: `configmaps is forbidden: RBAC says no`},
		{name: "an open watch clears a failed call", steps: []step{listed(forbidden), watched(nil)}, want: ""},
		{name: "a failed watch call", steps: []step{watched(reset)}, want: `Get "https://lb/api": read: connection reset by peer`},
		{name: "an expired resourceVersion is routine", steps: []step{listed(gone), watched(gone)}, want: ""},
		{
			name:  "a watch that ended is routine for the reflector's handler",
			steps: []step{func(h *Health) { h.ReflectorFailed(ctx, io.EOF) }, func(h *Health) { h.ReflectorFailed(ctx, io.ErrUnexpectedEOF) }},
			want:  "",
		},
		{
			name:  "the reflector's other errors count",
			steps: []step{func(h *Health) { h.ReflectorFailed(ctx, forbidden) }},
			want:  `configmaps is forbidden: RBAC says no`,
		},
		{
			name: "nothing counts while shutting down",
			steps: []step{
				func(h *Health) { h.noAnswer(cancelled, eof) },
				func(h *Health) { h.noAnswer(cancelled, eof) },
				func(h *Health) { h.noAnswer(cancelled, eof) },
				func(h *Health) { h.listed(cancelled, eof) },
			},
			want: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &Health{log: logr.Discard()}
			for _, s := range tt.steps {
				s(h)
			}
			if tt.want == "" {
				assert.NoError(t, h.Err())
				return
			}
			require.Error(t, h.Err())
			assert.Equal(t, tt.want, h.Err().Error())
		})
	}
}

func TestUnansweredErrorWrapsCause(t *testing.T) {
	h := &Health{log: logr.Discard()}
	for range unansweredLimit {
		h.noAnswer(context.Background(), &url.Error{Op: "Get", URL: "https://lb/api", Err: io.EOF})
	}
	assert.ErrorIs(t, h.Err(), io.EOF)
}

// TestAnswerTracker sends requests through answerTracker to a server that
// answers, and to one that accepts connections and closes them at once.
func TestAnswerTracker(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden) // any answer is an answer
	}))
	defer ok.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	hc := TrackAnswers(&http.Client{Transport: tr})
	assert.Same(t, hc, TrackAnswers(hc), "wrapping twice is wrapping once")

	h := &Health{log: logr.Discard()}
	get := func(u string) {
		req, err := http.NewRequestWithContext(withHealth(context.Background(), h), http.MethodGet, u, nil)
		require.NoError(t, err)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
		}
	}
	for range unansweredLimit {
		get(fmt.Sprintf("http://%s/api", ln.Addr()))
	}
	require.Error(t, h.Err())
	assert.Contains(t, h.Err().Error(), "3 requests in a row")
	t.Log(h.Err())

	get(ok.URL + "/api")
	assert.NoError(t, h.Err(), "a 403 is an answer")

	// A request without a health in its context is only forwarded.
	resp, err := hc.Get(ok.URL)
	require.NoError(t, err)
	resp.Body.Close()
}

// hangingTransport accepts every request and answers none until its
// request's context ends: a proxy or server that holds connections open.
type hangingTransport struct{}

func (hangingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	<-req.Context().Done()
	return nil, req.Context().Err()
}

// TestHangingRequestIsUnhealthy: a request that waits hangAfter for its
// answer makes the informer unhealthy, naming the request; before that it
// is healthy, and once the request gives up it is healthy again.
func TestHangingRequestIsUnhealthy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &Health{log: logr.Discard()}
		hc := TrackAnswers(&http.Client{Transport: hangingTransport{}})
		ctx, cancel := context.WithCancel(withHealth(t.Context(), h))
		done := make(chan struct{})
		go func() {
			defer close(done)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://east.example:6443/api/v1/configmaps?limit=500", nil)
			assert.NoError(t, err)
			_, err = hc.Do(req)
			assert.Error(t, err)
		}()
		time.Sleep(hangAfter - time.Second)
		assert.NoError(t, h.Err(), "a slow answer is not yet a hang")
		time.Sleep(2 * time.Second)
		err := h.Err()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "GET https://east.example:6443/api/v1/configmaps?limit=500 has waited 31s")
		cancel()
		<-done
		assert.NoError(t, h.Err(), "given up: no longer waiting")
	})
}
