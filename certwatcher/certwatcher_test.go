package certwatcher_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/certwatcher"
)

var quiet = logr.Discard()

func paths(dir string) (string, string) {
	return filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
}

func TestNewReadsThePair(t *testing.T) {
	dir := t.TempDir()
	newPair(t, 7).write(t, dir)
	cw, err := certwatcher.New(paths(dir))
	require.NoError(t, err)
	c, err := cw.GetCertificate(nil)
	require.NoError(t, err)
	assert.EqualValues(t, 7, serialOf(t, c))
	assert.False(t, cw.NeedLeaderElection())
}

func TestNewFails(t *testing.T) {
	a, b := newPair(t, 1), newPair(t, 2)
	tests := []struct {
		name  string
		write func(dir string)
		want  string
	}{
		{"no certificate", func(dir string) { writeFile(t, dir, "tls.key", a.key) }, "read certificate"},
		{"no key", func(dir string) { writeFile(t, dir, "tls.crt", a.cert) }, "read key"},
		{"mismatched pair", func(dir string) {
			writeFile(t, dir, "tls.crt", a.cert)
			writeFile(t, dir, "tls.key", b.key)
		}, "key pair"},
		{"not PEM", func(dir string) {
			writeFile(t, dir, "tls.crt", []byte("garbage"))
			writeFile(t, dir, "tls.key", a.key)
		}, "key pair"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.write(dir)
			cw, err := certwatcher.New(paths(dir))
			assert.Nil(t, cw)
			require.ErrorContains(t, err, tt.want)
			assert.ErrorContains(t, err, "certwatcher: ")
		})
	}
	_, err := certwatcher.New(paths(t.TempDir()))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// start runs cw.Start until the test ends and checks that it returns nil.
func start(t *testing.T, cw *certwatcher.CertWatcher) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cw.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Error("Start did not return after its context ended")
		}
	})
}

// serving returns the serial GetCertificate gives now.
func serving(t *testing.T, cw *certwatcher.CertWatcher) int64 {
	c, err := cw.GetCertificate(nil)
	require.NoError(t, err)
	return serialOf(t, c)
}

// TestRotation rotates the files under a started watcher and checks that
// a TLS client is served the new certificate, that the callback sees each
// new pair once, and that a half-written rotation is ignored.
func TestRotation(t *testing.T) {
	dir := t.TempDir()
	first := newPair(t, 1)
	first.write(t, dir)
	cw, err := certwatcher.New(paths(dir))
	require.NoError(t, err)
	cw.WithWatchInterval(20 * time.Millisecond).WithLogger(quiet)

	var mu sync.Mutex
	var seen []int64
	cw.RegisterCallback(func(c tls.Certificate) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, serialOf(t, &c))
	})
	seenNow := func() []int64 {
		mu.Lock()
		defer mu.Unlock()
		return append([]int64(nil), seen...)
	}
	assert.Equal(t, []int64{1}, seenNow(), "RegisterCallback calls back with the current pair")

	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{GetCertificate: cw.GetCertificate, MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_ = conn.(*tls.Conn).Handshake()
			}()
		}
	}()
	peerSerial := func() int64 {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(),
			&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec // the test checks which certificate is served
		require.NoError(t, err)
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	start(t, cw)
	assert.EqualValues(t, 1, peerSerial())

	second := newPair(t, 2)
	second.write(t, dir)
	require.Eventually(t, func() bool { return serving(t, cw) == 2 }, 5*time.Second, 10*time.Millisecond)
	assert.EqualValues(t, 2, peerSerial())

	// Half-written: the new certificate beside the old key.
	third := newPair(t, 3)
	writeFile(t, dir, "tls.crt", third.cert)
	time.Sleep(200 * time.Millisecond) // ten polls
	assert.EqualValues(t, 2, serving(t, cw), "an invalid pair is ignored")
	writeFile(t, dir, "tls.key", third.key)
	require.Eventually(t, func() bool { return serving(t, cw) == 3 }, 5*time.Second, 10*time.Millisecond)
	assert.EqualValues(t, 3, peerSerial())

	time.Sleep(100 * time.Millisecond) // polls that find nothing new
	assert.Equal(t, []int64{1, 2, 3}, seenNow(), "one call per new pair")
}

// TestRotationFoundByStat uses a watch interval too long to matter, so
// only the look at the files' metadata can find the change.
func TestRotationFoundByStat(t *testing.T) {
	dir := t.TempDir()
	newPair(t, 1).write(t, dir)
	cw, err := certwatcher.New(paths(dir))
	require.NoError(t, err)
	cw.WithWatchInterval(time.Hour).WithLogger(quiet)
	start(t, cw)
	time.Sleep(50 * time.Millisecond) // let Start take its first look
	newPair(t, 2).write(t, dir)
	require.Eventually(t, func() bool { return serving(t, cw) == 2 }, 5*time.Second, 20*time.Millisecond)
}

// TestRotationInPlace rewrites the files in place (no rename), which the
// periodic read finds even if the metadata looked the same.
func TestRotationInPlace(t *testing.T) {
	dir := t.TempDir()
	newPair(t, 1).write(t, dir)
	cw, err := certwatcher.New(paths(dir))
	require.NoError(t, err)
	cw.WithWatchInterval(30 * time.Millisecond).WithLogger(quiet)
	start(t, cw)
	p := newPair(t, 2)
	certPath, keyPath := paths(dir)
	require.NoError(t, os.WriteFile(certPath, p.cert, 0o600))
	require.NoError(t, os.WriteFile(keyPath, p.key, 0o600))
	require.Eventually(t, func() bool { return serving(t, cw) == 2 }, 5*time.Second, 10*time.Millisecond)
}

func TestReadCertificateAndHook(t *testing.T) {
	dir := t.TempDir()
	newPair(t, 1).write(t, dir)
	cw, err := certwatcher.New(paths(dir))
	require.NoError(t, err)
	var results []error
	cw.WithReadHook(func(err error) { results = append(results, err) }).WithLogger(quiet)

	require.NoError(t, cw.ReadCertificate(), "unchanged files")
	certPath, _ := paths(dir)
	require.NoError(t, os.Remove(certPath))
	err = cw.ReadCertificate()
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.EqualValues(t, 1, serving(t, cw), "a failed read keeps the pair")
	newPair(t, 5).write(t, dir)
	require.NoError(t, cw.ReadCertificate())
	assert.EqualValues(t, 5, serving(t, cw))

	require.Len(t, results, 3)
	assert.NoError(t, results[0])
	assert.True(t, errors.Is(results[1], fs.ErrNotExist))
	assert.NoError(t, results[2])
}

func TestStartReturnsWhenContextEnds(t *testing.T) {
	dir := t.TempDir()
	newPair(t, 1).write(t, dir)
	cw, err := certwatcher.New(paths(dir))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, cw.Start(ctx))
}

// The watcher's certificate verifies against itself (it is self-signed in
// these tests): a check that what is served is the file's certificate.
func TestServedCertificateIsTheFiles(t *testing.T) {
	dir := t.TempDir()
	p := newPair(t, 9)
	p.write(t, dir)
	cw, err := certwatcher.New(paths(dir))
	require.NoError(t, err)
	c, err := cw.GetCertificate(&tls.ClientHelloInfo{})
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(p.cert))
	_, err = leaf.Verify(x509.VerifyOptions{Roots: pool})
	assert.NoError(t, err)
}
