package faultproxy

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// Record is one request seen by the proxy.
type Record struct {
	Time   time.Time
	Method string
	Path   string
	Query  url.Values
	Watch  bool
	// Status is the code the proxy answered itself, 0 when forwarded.
	Status int
}

// Rule answers the requests it matches with a metav1.Status instead of
// forwarding them.
type Rule struct {
	// Match selects requests; nil matches every request.
	Match func(*http.Request) bool
	// Status is the HTTP code answered, for example 410, 429, 500 or 403.
	Status int
	// RetryAfter, when positive, is sent as the Retry-After header in
	// seconds.
	RetryAfter int
	// Times bounds how many requests the rule answers; 0 means until it is
	// removed.
	Times int
	// Hold, when set, answers nothing: the request hangs until the client
	// gives up on it (its context or timeout) or the proxy closes. Status
	// is then unused.
	Hold bool
	// Rewrite, when set, answers nothing either: it changes the matching
	// request (its query, say), which is then forwarded. Status is then
	// unused.
	Rewrite func(*http.Request)
}

// Watches matches watch requests.
func Watches(r *http.Request) bool { return isWatch(r) }

// Lists matches list and get requests that are not watches.
func Lists(r *http.Request) bool { return r.Method == http.MethodGet && !isWatch(r) }

// PathContains returns a matcher of requests whose path contains s.
func PathContains(s string) func(*http.Request) bool {
	return func(r *http.Request) bool { return strings.Contains(r.URL.Path, s) }
}

// And returns a matcher of requests every matcher matches.
func And(ms ...func(*http.Request) bool) func(*http.Request) bool {
	return func(r *http.Request) bool {
		for _, m := range ms {
			if !m(r) {
				return false
			}
		}
		return true
	}
}

type rule struct {
	Rule
	used int
}

// Proxy is a fault-injecting reverse proxy in front of one API server.
type Proxy struct {
	upstream *url.URL
	rp       *httputil.ReverseProxy
	srv      *http.Server
	ln       *listener
	caPEM    []byte
	done     chan struct{}
	closing  chan struct{} // closed by Close: held requests end

	closeOnce     sync.Once
	mu            sync.Mutex
	rules         []*rule
	records       []Record
	watches       map[*watchBody]struct{}
	eventDelay    time.Duration
	watchLifetime time.Duration
}

// New starts a proxy on a free loopback port that forwards to the API
// server of upstream with upstream's credentials.
func New(upstream *rest.Config) (*Proxy, error) {
	u, err := url.Parse(upstream.Host)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: upstream host %q: %w", upstream.Host, err)
	}
	if u.Scheme == "" {
		u.Scheme = "https"
	}
	rt, err := upstreamTransport(upstream)
	if err != nil {
		return nil, err
	}
	caPEM, cert, err := selfSigned()
	if err != nil {
		return nil, err
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &Proxy{
		upstream: u,
		caPEM:    caPEM,
		done:     make(chan struct{}),
		closing:  make(chan struct{}),
		watches:  map[*watchBody]struct{}{},
		ln:       newListener(raw),
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = u.Host
			pr.Out.Header.Del("Authorization")
		},
		Transport:      rt,
		FlushInterval:  -1,
		ModifyResponse: p.modifyResponse,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			writeStatus(w, http.StatusBadGateway, 0, "faultproxy: upstream: "+err.Error())
		},
	}
	p.srv = &http.Server{
		Handler:           http.HandlerFunc(p.serve),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() {
		defer close(p.done)
		_ = p.srv.ServeTLS(p.ln, "", "")
	}()
	return p, nil
}

// upstreamTransport is a plain HTTP/2 transport with upstream's TLS
// credentials (and bearer token, if any: client-go's bearer round tripper,
// which logs nothing). It is not rest.TransportFor's:
// client-go wraps that in its debugging round tripper whenever klog's
// verbosity is 6 or more, and at 9 and up that round tripper's HTTP trace
// callbacks race with its own reads once a request has returned
// (client-go v0.37.2 transport/round_trippers.go:593 against :627), which
// a test that turns klog up (TestCredentialsNeverLogged) then reports as
// the proxy's race.
func upstreamTransport(upstream *rest.Config) (http.RoundTripper, error) {
	tlsCfg, err := rest.TLSConfigFor(upstream)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: upstream TLS: %w", err)
	}
	t := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     tlsCfg,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 100,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	if upstream.BearerToken == "" {
		return t, nil
	}
	return transport.NewBearerAuthRoundTripper(upstream.BearerToken, t), nil
}

// Config returns a config that reaches the upstream API server through the
// proxy. It carries no credentials: the proxy adds upstream's.
func (p *Proxy) Config() *rest.Config {
	return &rest.Config{
		Host:            "https://" + p.ln.Addr().String(),
		TLSClientConfig: rest.TLSClientConfig{CAData: append([]byte(nil), p.caPEM...)},
	}
}

// Close stops the proxy, releases every frozen connection and closes
// every connection.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() { close(p.closing) })
	p.ln.blackhole(false)
	p.ln.thaw()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	p.CutWatches()
	err := p.srv.Shutdown(ctx)
	if err != nil {
		err = p.srv.Close()
	}
	p.ln.closeAll()
	<-p.done
	p.ln.finishing.Wait()
	return err
}

// AddRule installs r ahead of the rules already installed and returns a
// function that removes it.
func (p *Proxy) AddRule(r Rule) (remove func()) {
	nr := &rule{Rule: r}
	p.mu.Lock()
	p.rules = append([]*rule{nr}, p.rules...)
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for i, x := range p.rules {
			if x == nr {
				p.rules = append(p.rules[:i], p.rules[i+1:]...)
				return
			}
		}
	}
}

// OpenWatches returns how many watch streams are open now.
func (p *Proxy) OpenWatches() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.watches)
}

// CutWatches ends every watch stream open now and returns how many.
func (p *Proxy) CutWatches() int {
	p.mu.Lock()
	ws := make([]*watchBody, 0, len(p.watches))
	for w := range p.watches {
		ws = append(ws, w)
	}
	p.mu.Unlock()
	for _, w := range ws {
		w.cut()
	}
	return len(ws)
}

// SetEventDelay holds each chunk of every watch stream for d before
// passing it on; 0 turns the delay off.
func (p *Proxy) SetEventDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.eventDelay = d
}

// SetWatchLifetime ends each watch opened from now on after d; 0 lets
// watches live.
func (p *Proxy) SetWatchLifetime(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watchLifetime = d
}

// Freeze makes every connection open now stop forwarding bytes in both
// directions without closing it, and returns how many. New connections
// are not affected. Close or Thaw releases them.
func (p *Proxy) Freeze() int { return p.ln.freeze() }

// Thaw releases the connections Freeze stopped.
func (p *Proxy) Thaw() { p.ln.thaw() }

// Blackhole, while on, stops every connection, open or new, from
// forwarding bytes; turning it off releases them all.
func (p *Proxy) Blackhole(on bool) { p.ln.blackhole(on) }

// Records returns a copy of every request seen so far.
func (p *Proxy) Records() []Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Record(nil), p.records...)
}

// Count returns how many requests since since match m (nil: all).
func (p *Proxy) Count(since time.Time, m func(Record) bool) int {
	n := 0
	for _, r := range p.Records() {
		if !r.Time.Before(since) && (m == nil || m(r)) {
			n++
		}
	}
	return n
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	rec := Record{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Watch: isWatch(r)}
	p.mu.Lock()
	var hit *rule
	for _, x := range p.rules {
		if (x.Times == 0 || x.used < x.Times) && (x.Match == nil || x.Match(r)) {
			x.used++
			hit = x
			break
		}
	}
	if hit != nil && !hit.Hold && hit.Rewrite == nil {
		rec.Status = hit.Status
	}
	p.records = append(p.records, rec)
	p.mu.Unlock()
	switch {
	case hit != nil && hit.Hold:
		select {
		case <-r.Context().Done():
		case <-p.closing:
		}
		return
	case hit != nil && hit.Rewrite != nil:
		hit.Rewrite(r)
	case hit != nil:
		writeStatus(w, hit.Status, hit.RetryAfter, fmt.Sprintf("faultproxy: injected %d for %s %s", hit.Status, r.Method, r.URL.Path))
		return
	}
	p.rp.ServeHTTP(w, r)
}

func (p *Proxy) modifyResponse(resp *http.Response) error {
	if !isWatch(resp.Request) || resp.StatusCode != http.StatusOK {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	wb := &watchBody{body: resp.Body, delay: p.eventDelay, cutc: make(chan struct{}), owner: p}
	p.watches[wb] = struct{}{}
	if p.watchLifetime > 0 {
		wb.timer = time.AfterFunc(p.watchLifetime, wb.cut)
	}
	resp.Body = wb
	return nil
}

func (p *Proxy) forget(wb *watchBody) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.watches, wb)
}

// watchBody passes a watch stream on, delayed and cuttable. A cut ends it
// with EOF, so the client sees a clean end of the stream.
type watchBody struct {
	body  io.ReadCloser
	delay time.Duration
	owner *Proxy
	timer *time.Timer
	once  sync.Once
	cutc  chan struct{}
}

func (w *watchBody) cut() {
	w.once.Do(func() {
		close(w.cutc)
		_ = w.body.Close()
	})
}

func (w *watchBody) Read(b []byte) (int, error) {
	select {
	case <-w.cutc:
		return 0, io.EOF
	default:
	}
	n, err := w.body.Read(b)
	if n > 0 && w.delay > 0 {
		select {
		case <-time.After(w.delay):
		case <-w.cutc:
			return 0, io.EOF
		}
	}
	select {
	case <-w.cutc:
		return 0, io.EOF
	default:
	}
	return n, err
}

func (w *watchBody) Close() error {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.cut()
	w.owner.forget(w)
	return nil
}

func isWatch(r *http.Request) bool {
	v := r.URL.Query().Get("watch")
	return v == "true" || v == "1"
}

// writeStatus answers with a JSON metav1.Status the client decodes into an
// API error of the same code.
func writeStatus(w http.ResponseWriter, code, retryAfter int, msg string) {
	reasons := map[int]string{400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 409: "Conflict",
		410: "Expired", 429: "TooManyRequests", 500: "InternalError", 502: "InternalError", 503: "ServiceUnavailable", 504: "Timeout"}
	body, _ := json.Marshal(map[string]any{
		"kind": "Status", "apiVersion": "v1", "status": "Failure",
		"message": msg, "reason": reasons[code], "code": code,
	})
	w.Header().Set("Content-Type", "application/json")
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// selfSigned returns a CA certificate (PEM) that is also the serving
// certificate for 127.0.0.1 and localhost.
func selfSigned() ([]byte, tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("faultproxy: key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("faultproxy: serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "faultproxy"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("faultproxy: certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("faultproxy: key: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		return nil, tls.Certificate{}, errors.Join(errors.New("faultproxy: key pair"), err)
	}
	return certPEM, cert, nil
}
