package stacks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/bench/fakeapiserver"
)

// TestFloor checks that the reference consumer decodes every object of the
// initial events, skips the bookmark, sees a fired MODIFIED event with its
// new data, and returns nil once its context ends.
func TestFloor(t *testing.T) {
	testReference(t, Floor, true)
}

// TestWire checks the same of the wire floor, which reads only the
// namespace, name and resourceVersion.
func TestWire(t *testing.T) {
	testReference(t, Wire, false)
}

// TestWireWorker checks the same of the wire floor with a worker.
func TestWireWorker(t *testing.T) {
	testReference(t, WireWorker, false)
}

func testReference(t *testing.T, stack Stack, decodes bool) {
	const n = 50
	srv, err := fakeapiserver.New(fakeapiserver.Config{ConfigMaps: n})
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	defer hs.Close()

	var mu sync.Mutex
	seen := map[string]*corev1.ConfigMap{}
	observed := make(chan struct{}, 2*n)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- stack(ctx, &rest.Config{Host: hs.URL}, 2, func(cm *corev1.ConfigMap) {
			mu.Lock()
			seen[cm.Namespace+"/"+cm.Name] = cm
			mu.Unlock()
			observed <- struct{}{}
		})
	}()
	for range n {
		select {
		case <-observed:
		case <-time.After(10 * time.Second):
			t.Fatal("the initial events did not all arrive")
		}
	}
	mu.Lock()
	require.Len(t, seen, n)
	want := fakeapiserver.ConfigMap(7)
	got := seen[want.Namespace+"/"+want.Name]
	mu.Unlock()
	require.NotNil(t, got)
	assert.Equal(t, want.ResourceVersion, got.ResourceVersion)
	if decodes {
		assert.Equal(t, want.Data, got.Data)
		assert.Equal(t, want.Labels, got.Labels)
	}

	post := func(path string) {
		resp, err := http.Post(hs.URL+path, "", nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		resp.Body.Close()
	}
	post("/bench/prepare?count=1&objects=1")
	post("/bench/fire?count=1")
	select {
	case <-observed:
	case <-time.After(10 * time.Second):
		t.Fatal("the fired event did not arrive")
	}
	mu.Lock()
	got = seen[fakeapiserver.Namespace(0)+"/config-0"]
	mu.Unlock()
	if decodes {
		assert.Equal(t, "0", got.Data["revision"])
	}
	assert.NotEqual(t, fakeapiserver.ConfigMap(0).ResourceVersion, got.ResourceVersion)

	cancel()
	select {
	case err := <-errc:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the stack did not return after its context ended")
	}
}
