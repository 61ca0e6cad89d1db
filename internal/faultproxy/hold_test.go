package faultproxy_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/internal/faultproxy"
)

func TestHoldHangsOneRequestUntilTheClientGivesUp(t *testing.T) {
	p, err := faultproxy.New(upstream(t))
	require.NoError(t, err)
	defer p.Close()
	hc := client(t, p)
	p.AddRule(faultproxy.Rule{Match: faultproxy.PathContains("/held"), Hold: true, Times: 1})

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.Config().Host+"/held", nil)
	require.NoError(t, err)
	_, err = hc.Do(req)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "the held request got no answer: %v", err)

	resp, err := hc.Get(p.Config().Host + "/held")
	require.NoError(t, err, "only one request is held")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "ok", string(body))
}

func TestHoldEndsWhenTheProxyCloses(t *testing.T) {
	p, err := faultproxy.New(upstream(t))
	require.NoError(t, err)
	hc := client(t, p)
	p.AddRule(faultproxy.Rule{Hold: true})
	errc := make(chan error, 1)
	go func() {
		resp, err := hc.Get(p.Config().Host + "/x")
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	require.Eventually(t, func() bool { return len(p.Records()) == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, p.Close())
	select {
	case <-errc:
	case <-time.After(5 * time.Second):
		t.Fatal("the held request outlived the proxy")
	}
}

func TestRewriteChangesTheForwardedRequest(t *testing.T) {
	p, err := faultproxy.New(upstream(t))
	require.NoError(t, err)
	defer p.Close()
	hc := client(t, p)
	// The upstream streams only when watch=true: a rewrite that adds it
	// turns a plain GET into a watch.
	p.AddRule(faultproxy.Rule{Rewrite: func(r *http.Request) {
		q := r.URL.Query()
		q.Set("watch", "true")
		r.URL.RawQuery = q.Encode()
	}, Times: 1})
	resp, err := hc.Get(p.Config().Host + "/x")
	require.NoError(t, err)
	buf := make([]byte, 7)
	_, err = io.ReadFull(resp.Body, buf)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "event 0", string(buf))
	rec := p.Records()
	require.Len(t, rec, 1)
	assert.Zero(t, rec[0].Status, "a rewritten request is forwarded")
	assert.Empty(t, rec[0].Query.Get("watch"), "records keep the request as the client sent it")
}
