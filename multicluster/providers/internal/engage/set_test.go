package engage_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/engage"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/providertest"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}) }

// target is a Target of host whose Key is the host.
func target(name, host string) engage.Target {
	return engage.Target{Name: name, Source: "test " + name, Key: host, Config: func() (*rest.Config, error) {
		return &rest.Config{Host: host}, nil
	}}
}

func broken(name, key string, err error) engage.Target {
	return engage.Target{Name: name, Source: "test " + name, Key: key, Config: func() (*rest.Config, error) { return nil, err }}
}

// logs returns a logger that appends each line to buf.
func logs(buf *bytes.Buffer) logr.Logger {
	return funcr.New(func(prefix, args string) { buf.WriteString(args + "\n") }, funcr.Options{})
}

func TestSyncEngagesReengagesAndDisengages(t *testing.T) {
	rec := providertest.NewRecorder()
	var buf bytes.Buffer
	set := engage.NewSet(rec, logs(&buf))
	ctx := t.Context()

	set.Sync(ctx, []engage.Target{target("a", "https://a1"), target("b", "https://b1")})
	assert.Equal(t, []string{"a", "b"}, rec.Names())
	assert.Equal(t, []string{"a", "b"}, set.Engaged())

	// Unchanged Keys engage nothing new.
	set.Sync(ctx, []engage.Target{target("a", "https://a1"), target("b", "https://b1")})
	assert.Len(t, rec.Events(), 2)

	// a changes, b leaves.
	set.Sync(ctx, []engage.Target{target("a", "https://a2")})
	require.NoError(t, rec.WaitNames(ctx, "a"))
	assert.Equal(t, "https://a2", rec.Current()["a"].Host)
	assert.Equal(t, []providertest.Event{
		{Op: "engage", Name: "a", Host: "https://a1"},
		{Op: "engage", Name: "b", Host: "https://b1"},
		{Op: "end", Name: "a", Host: "https://a1"},
		{Op: "engage", Name: "a", Host: "https://a2"},
		{Op: "end", Name: "b", Host: "https://b1"},
	}, rec.Events())
	assert.Empty(t, rec.Violations())
	assert.Contains(t, buf.String(), `"msg"="re-engaged cluster: its connection details changed" "cluster"="a"`)
	assert.Contains(t, buf.String(), `"msg"="disengaged cluster" "cluster"="b"`)

	set.Close()
	require.NoError(t, rec.WaitNames(ctx))
}

func TestSyncBrokenTargetIsLoggedOnceAndRetriedOnChange(t *testing.T) {
	rec := providertest.NewRecorder()
	var buf bytes.Buffer
	set := engage.NewSet(rec, logs(&buf))
	defer set.Close()
	ctx := t.Context()

	set.Sync(ctx, []engage.Target{target("a", "https://a1")})
	bad := errors.New("Secret fleet/a: the kubeconfig does not parse")
	for range 3 {
		set.Sync(ctx, []engage.Target{broken("a", "bad-1", bad), target("b", "https://b1")})
	}
	require.NoError(t, rec.WaitNames(ctx, "b"), "a broken kubeconfig ends the old engagement and engages nothing")
	assert.Equal(t, 1, bytes.Count(buf.Bytes(), []byte("the kubeconfig does not parse")), buf.String())
	assert.Contains(t, buf.String(), `"source"="test a"`)

	set.Sync(ctx, []engage.Target{target("a", "https://a3"), target("b", "https://b1")})
	assert.Equal(t, []string{"a", "b"}, rec.Names())
	assert.Equal(t, "https://a3", rec.Current()["a"].Host)
}

func TestSyncRejectsInvalidNamesAndSinkErrors(t *testing.T) {
	var buf bytes.Buffer
	calls := 0
	sink := multicluster.SinkFunc(func(ctx context.Context, name string, cfg *rest.Config) error {
		calls++
		return errors.New("fleet stopped")
	})
	set := engage.NewSet(sink, logs(&buf))
	defer set.Close()
	for range 2 {
		set.Sync(t.Context(), []engage.Target{target("has space", "k"), target("ok", "k")})
	}
	assert.Empty(t, set.Engaged())
	assert.Equal(t, 1, calls, "the Sink's refusal is not retried until the Key changes")
	assert.Contains(t, buf.String(), "holds whitespace")
	assert.Contains(t, buf.String(), "test ok: engage: fleet stopped")
}

func TestSyncDuplicateNamesFirstSourceWins(t *testing.T) {
	rec := providertest.NewRecorder()
	var buf bytes.Buffer
	set := engage.NewSet(rec, logs(&buf))
	defer set.Close()
	one, two := target("a", "https://one"), target("a", "https://two")
	one.Source, two.Source = "Secret x/1", "Secret x/2"
	for range 2 {
		set.Sync(t.Context(), []engage.Target{two, one})
	}
	assert.Equal(t, "https://one", rec.Current()["a"].Host)
	assert.Equal(t, 1, bytes.Count(buf.Bytes(), []byte("ignoring duplicate cluster names")), buf.String())
}

func TestHashSeparatesParts(t *testing.T) {
	assert.NotEqual(t, engage.Hash([]byte("ab"), []byte("c")), engage.Hash([]byte("a"), []byte("bc")))
	assert.Equal(t, engage.Hash([]byte("x")), engage.Hash([]byte("x")))
}
