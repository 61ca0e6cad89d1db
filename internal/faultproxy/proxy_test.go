package faultproxy_test

import (
	"bufio"
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}) }

// upstream is a fake API server: GET answers "ok", a watch streams one
// line every 10ms until the client leaves.
func upstream(t *testing.T) *rest.Config {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "true" {
			fmt.Fprint(w, "ok")
			return
		}
		w.WriteHeader(http.StatusOK)
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(w, "event %d\n", i); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

func client(t *testing.T, p *faultproxy.Proxy) *http.Client {
	t.Helper()
	hc, err := rest.HTTPClientFor(p.Config())
	require.NoError(t, err)
	t.Cleanup(hc.CloseIdleConnections)
	return hc
}

func TestRulesAnswerWithStatus(t *testing.T) {
	p, err := faultproxy.New(upstream(t))
	require.NoError(t, err)
	defer p.Close()
	hc := client(t, p)
	cfg := p.Config()

	get := func(path string) (*http.Response, string) {
		resp, err := hc.Get(cfg.Host + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b := make([]byte, 512)
		n, _ := resp.Body.Read(b)
		return resp, string(b[:n])
	}
	resp, body := get("/api/v1/pods")
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "ok", body)

	remove := p.AddRule(faultproxy.Rule{Match: faultproxy.PathContains("/pods"), Status: 429, RetryAfter: 2, Times: 2})
	for i := 0; i < 2; i++ {
		resp, _ = get("/api/v1/pods")
		assert.Equal(t, 429, resp.StatusCode)
		assert.Equal(t, "2", resp.Header.Get("Retry-After"))
	}
	resp, _ = get("/api/v1/pods")
	assert.Equal(t, 200, resp.StatusCode, "Times bounds the rule")
	remove()

	p.AddRule(faultproxy.Rule{Status: 403})
	rc, err := rest.RESTClientFor(withCodec(p.Config()))
	require.NoError(t, err)
	err = rc.Get().AbsPath("/api/v1/secrets").Do(context.Background()).Error()
	assert.True(t, apierrors.IsForbidden(err), "the Status decodes into an API error: %v", err)

	recs := p.Records()
	require.Len(t, recs, 5)
	assert.Equal(t, 429, recs[1].Status)
	assert.Equal(t, 0, recs[3].Status)
	assert.Equal(t, 2, p.Count(time.Time{}, func(r faultproxy.Record) bool { return r.Status == 429 }))
}

func TestCutAndFreezeWatches(t *testing.T) {
	p, err := faultproxy.New(upstream(t))
	require.NoError(t, err)
	defer p.Close()
	hc := client(t, p)
	cfg := p.Config()

	resp, err := hc.Get(cfg.Host + "/api/v1/pods?watch=true")
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	require.True(t, sc.Scan())
	assert.Equal(t, "event 0", sc.Text())
	assert.Equal(t, 1, p.OpenWatches())
	assert.Equal(t, 1, p.CutWatches())
	for sc.Scan() {
	}
	assert.NoError(t, sc.Err(), "a cut watch ends cleanly")
	assert.Eventually(t, func() bool { return p.OpenWatches() == 0 }, time.Minute, time.Millisecond, "a cut watch is forgotten")

	// Frozen: the stream stays open and delivers nothing.
	resp2, err := hc.Get(cfg.Host + "/api/v1/pods?watch=true")
	require.NoError(t, err)
	defer resp2.Body.Close()
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(resp2.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	<-lines
	require.Positive(t, p.Freeze())
	time.Sleep(100 * time.Millisecond)
	for len(lines) > 0 { // what was in flight before the freeze
		<-lines
	}
	time.Sleep(300 * time.Millisecond) // 30 upstream events' worth
	assert.LessOrEqual(t, len(lines), 1, "a frozen connection forwards nothing")
	p.Thaw()
	select {
	case _, ok := <-lines:
		assert.True(t, ok, "thawed stream flows again")
	case <-time.After(5 * time.Second): // safety bound: a hang
		t.Fatal("no event after thaw")
	}
	hc.CloseIdleConnections()
}

func withCodec(cfg *rest.Config) *rest.Config {
	cfg.APIPath = "/api"
	cfg.GroupVersion = &schema.GroupVersion{Version: "v1"}
	cfg.NegotiatedSerializer = codecs()
	return cfg
}

func TestWatchLifetimeAndEventDelay(t *testing.T) {
	p, err := faultproxy.New(upstream(t))
	require.NoError(t, err)
	defer p.Close()
	hc := client(t, p)
	cfg := p.Config()

	p.SetWatchLifetime(300 * time.Millisecond)
	p.SetEventDelay(100 * time.Millisecond)
	began := time.Now()
	resp, err := hc.Get(cfg.Host + "/api/v1/pods?watch=true")
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	require.True(t, sc.Scan())
	first := time.Since(began)
	n := 1
	for sc.Scan() {
		n++
	}
	require.NoError(t, sc.Err())
	lived := time.Since(began)
	t.Logf("first event after %s; watch lived %s and passed %d events", first, lived, n)
	// Lower bounds only: the upstream sends its first event at once.
	assert.GreaterOrEqual(t, first, 100*time.Millisecond, "the event was held back")
	assert.GreaterOrEqual(t, lived, 300*time.Millisecond, "the watch was cut by its lifetime, not earlier")
	hc.CloseIdleConnections()
}
