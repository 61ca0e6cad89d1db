// Package tracehttp gives the client's requests spans: Wrap returns an
// http.Client whose transport starts a span for every request sent under a
// context that holds a trace.Tracer (trace.NewContext).
//
// Guarantees:
//   - Without a Tracer in the request's context a request costs one
//     context lookup and is sent as it is.
//   - Watches get no span (they last as long as the watch).
//   - A span ends when the answer's body is closed, or at once on a
//     transport error; a status of 400 or more is the span's error.
//   - The wrapped client shares the original's transport and connections.
package tracehttp

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/kubeloop/kubeloop/trace"
)

// Wrap returns a copy of hc whose transport gives every request
// sent under a context that holds a trace.Tracer (trace.NewContext; a
// traced controller's reconcile does) a span of its own. The copy shares
// hc's transport, so its connections too.
func Wrap(hc *http.Client) *http.Client {
	out := *hc
	rt := out.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	out.Transport = &tracedTransport{next: rt}
	return &out
}

// tracedTransport is the client's tracing hook. Without a Tracer in the
// request's context it costs one context lookup per request.
type tracedTransport struct{ next http.RoundTripper }

// RoundTrip sends req, inside a span when its context holds a Tracer and
// it is not a watch. The span ends when the answer's body is closed (or
// at once on a transport error), so it covers reading the answer.
func (t *tracedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tr := trace.FromContext(req.Context())
	if tr == nil {
		return t.next.RoundTrip(req)
	}
	call := callOf(req)
	if call.Verb == "watch" {
		return t.next.RoundTrip(req)
	}
	req = req.Clone(req.Context()) // a RoundTripper must not change req: the header is ours now
	call.Header = req.Header
	ctx, span := tr.StartCall(req.Context(), call)
	req = req.WithContext(ctx)
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		span.End(trace.Outcome{Err: err})
		return resp, err
	}
	o := trace.Outcome{StatusCode: resp.StatusCode}
	if resp.StatusCode >= 400 {
		o.Err = fmt.Errorf("%s %s %s: HTTP %d", call.Verb, call.Resource, objectPath(call), resp.StatusCode)
	}
	if resp.Body == nil {
		span.End(o)
		return resp, nil
	}
	resp.Body = &spanBody{ReadCloser: resp.Body, span: span, outcome: o}
	return resp, nil
}

// CloseIdleConnections passes the call on, as http.Client expects of a
// transport that has idle connections.
func (t *tracedTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// spanBody ends its span when the body is closed.
type spanBody struct {
	io.ReadCloser
	span    trace.Span
	outcome trace.Outcome
	once    sync.Once
}

func (b *spanBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { b.span.End(b.outcome) })
	return err
}

// objectPath returns "namespace/name", "name" or "" for c.
func objectPath(c trace.Call) string {
	switch {
	case c.Namespace != "" && c.Name != "":
		return c.Namespace + "/" + c.Name
	case c.Name != "":
		return c.Name
	}
	return c.Namespace
}

// callOf describes req from its method and its path, which follows the
// API server's layout: /api/v1/... for the core group, /apis/<group>/<version>/...
// otherwise, then [namespaces/<ns>/]<resource>[/<name>[/<subresource>]].
func callOf(req *http.Request) trace.Call {
	c := trace.Call{Method: req.Method, Path: req.URL.Path}
	segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		c.Version, segs = segs[1], segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		c.Group, c.Version, segs = segs[1], segs[2], segs[3:]
	default:
		segs = nil
	}
	if len(segs) >= 3 && segs[0] == "namespaces" && !(len(segs) == 3 && (segs[2] == "status" || segs[2] == "finalize")) {
		c.Namespace, segs = segs[1], segs[2:]
	}
	if len(segs) > 0 {
		c.Resource = segs[0]
	}
	if len(segs) > 1 {
		c.Name = segs[1]
	}
	if len(segs) > 2 {
		c.Subresource = strings.Join(segs[2:], "/")
	}
	c.Verb = verbOf(req, c.Name != "")
	return c
}

// verbOf returns the Kubernetes verb of a request with method m, named
// says whether it is of one object.
func verbOf(req *http.Request, named bool) string {
	switch req.Method {
	case http.MethodGet:
		if req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1" {
			return "watch"
		}
		if named {
			return "get"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if named {
			return "delete"
		}
		return "deletecollection"
	}
	return strings.ToLower(req.Method)
}
