package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

func testWatchSerializer() runtime.NegotiatedSerializer {
	return NewWatchSerializer(serializer.NewCodecFactory(clientgoscheme.Scheme).WithoutConversion(), clientgoscheme.Scheme, true, nil)
}

// protoStream returns a framed protobuf watch stream of evs, as the API
// server writes it.
func protoWatchStream(t *testing.T, evs ...watch.Event) []byte {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(testWatchSerializer().SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	require.True(t, ok)
	var stream bytes.Buffer
	fw := info.StreamSerializer.Framer.NewFrameWriter(&stream)
	raw := protobuf.NewRawSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
	for _, ev := range evs {
		var frame bytes.Buffer
		we := &metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: encodeProto(t, ev.Object)}}
		require.NoError(t, raw.Encode(we, &frame))
		_, err := fw.Write(frame.Bytes())
		require.NoError(t, err)
	}
	return stream.Bytes()
}

// jsonWatchStream returns a JSON watch stream of evs.
func jsonWatchStream(t *testing.T, evs ...watch.Event) []byte {
	t.Helper()
	var stream bytes.Buffer
	for _, ev := range evs {
		obj, err := json.Marshal(ev.Object)
		require.NoError(t, err)
		line, err := json.Marshal(metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: obj}})
		require.NoError(t, err)
		stream.Write(append(line, '\n'))
	}
	return stream.Bytes()
}

func watchEvents() []watch.Event {
	objs := testObjects()
	return []watch.Event{
		{Type: watch.Added, Object: objs[0]},
		{Type: watch.Modified, Object: objs[1]},
		{Type: watch.Deleted, Object: objs[2]},
		{Type: watch.Bookmark, Object: &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{ResourceVersion: "99"}}},
		{Type: watch.Error, Object: objs[3]},
	}
}

// wantEvent is ev as the client receives it: typed objects without
// apiVersion and kind, managedFields stripped.
func wantEvent(ev watch.Event) watch.Event {
	obj := ev.Object.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return watch.Event{Type: ev.Type, Object: obj}
}

// TestEventsDecodesBothStreams reads protobuf and JSON watch streams with
// Next, each event as client-go's watch decodes it, then reports the end.
func TestEventsDecodesBothStreams(t *testing.T) {
	evs := watchEvents()
	for name, stream := range map[string][]byte{
		"protobuf": protoWatchStream(t, evs...),
		"json":     jsonWatchStream(t, evs...),
	} {
		t.Run(name, func(t *testing.T) {
			e := NewEvents(io.NopCloser(bytes.NewReader(stream)), testWatchSerializer())
			assert.True(t, e.Drained(), "nothing read yet")
			for i, ev := range evs {
				got, ok := e.Next()
				require.True(t, ok, "event %d", i)
				if name == "protobuf" { // JSON's decoder reads ahead on its own
					assert.Equal(t, i == len(evs)-1, e.Drained(), "event %d: drained only after the last", i)
				}
				want := wantEvent(ev)
				if name == "json" { // the stock JSON decoder: managedFields kept
					want.Object = ev.Object.DeepCopyObject()
					want.Object.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
				}
				assert.Equal(t, want, got, "event %d", i)
			}
			_, ok := e.Next()
			assert.False(t, ok, "the stream ended")
			_, ok = e.Next()
			assert.False(t, ok, "and stays ended")
		})
	}
}

// TestEventsReportsUndecodableEvents sends, as client-go's watch does, an
// Error event (500) for a frame it cannot decode, and then ends.
func TestEventsReportsUndecodableEvents(t *testing.T) {
	good := protoWatchStream(t, watchEvents()[0])
	info, _ := runtime.SerializerInfoForMediaType(testWatchSerializer().SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	var stream, frame bytes.Buffer
	stream.Write(good)
	// A well-formed event whose object is not a Kubernetes object.
	we := &metav1.WatchEvent{Type: string(watch.Added), Object: runtime.RawExtension{Raw: []byte("not an object")}}
	require.NoError(t, protobuf.NewRawSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme).Encode(we, &frame))
	_, err := info.StreamSerializer.Framer.NewFrameWriter(&stream).Write(frame.Bytes())
	require.NoError(t, err)
	e := NewEvents(io.NopCloser(&stream), testWatchSerializer())
	_, ok := e.Next()
	require.True(t, ok)
	ev, ok := e.Next()
	require.True(t, ok)
	require.Equal(t, watch.Error, ev.Type)
	err = apierrors.FromObject(ev.Object)
	assert.True(t, apierrors.IsInternalError(err), "%v", err)
	assert.Contains(t, err.Error(), "unable to decode an event from the watch stream")
	_, ok = e.Next()
	assert.False(t, ok)

	truncated := good[:len(good)-3]
	e = NewEvents(io.NopCloser(bytes.NewReader(truncated)), testWatchSerializer())
	_, ok = e.Next()
	assert.False(t, ok, "a stream cut short ends quietly, as client-go's does")
}

// TestEventsStopUnblocksNext: Stop from another goroutine ends a Next
// blocked on the connection, with no Error event.
func TestEventsStopUnblocksNext(t *testing.T) {
	pr, pw := io.Pipe()
	e := NewEvents(pr, testWatchSerializer())
	go func() {
		_, _ = pw.Write(protoWatchStream(t, watchEvents()[0]))
	}()
	_, ok := e.Next()
	require.True(t, ok)
	done := make(chan bool)
	go func() {
		_, ok := e.Next()
		done <- ok
	}()
	time.Sleep(10 * time.Millisecond)
	e.Stop()
	select {
	case ok := <-done:
		assert.False(t, ok)
	case <-time.After(time.Minute):
		t.Fatal("Next still blocked after Stop")
	}
	e.Stop() // twice is fine
}

// TestEventsResultChan hands the events over a channel to a reader that
// asks for one (client-go's Reflector), closing it at the end.
func TestEventsResultChan(t *testing.T) {
	evs := watchEvents()[:3]
	e := NewEvents(io.NopCloser(bytes.NewReader(protoWatchStream(t, evs...))), testWatchSerializer())
	var got []watch.Event
	for ev := range e.ResultChan() {
		got = append(got, ev)
	}
	require.Len(t, got, len(evs))
	for i, ev := range evs {
		assert.Equal(t, wantEvent(ev), got[i])
	}

	pr, pw := io.Pipe()
	defer pw.Close()
	e = NewEvents(pr, testWatchSerializer())
	ch := e.ResultChan()
	e.Stop()
	select {
	case _, ok := <-ch:
		assert.False(t, ok, "closed once stopped")
	case <-time.After(time.Minute):
		t.Fatal("ResultChan not closed after Stop")
	}
}

// TestWatchOverHTTP sends a watch request through a REST client: the
// events of a 200 answer, the API error of any other (410 here), and an
// ended watch when the server answers nothing.
func TestWatchOverHTTP(t *testing.T) {
	evs := watchEvents()[:2]
	var noAnswer atomic.Int32
	var refuse atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/namespaces/ns/configmaps", func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "true", r.URL.Query().Get("watch"))
		switch r.URL.Query().Get("resourceVersion") {
		case "1":
			w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")
			_, _ = w.Write(protoWatchStream(t, evs...))
		case "2":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusGone)
			st := apierrors.NewResourceExpired("too old resource version: 2").ErrStatus
			st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
			_ = json.NewEncoder(w).Encode(&st)
		case "3":
			if n := noAnswer.Add(1); n == 1 || refuse.Load() {
				hj, ok := w.(http.Hijacker)
				require.True(t, ok)
				conn, _, err := hj.Hijack()
				require.NoError(t, err)
				_ = conn.Close() // no answer at all
				return
			}
			w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")
			_, _ = w.Write(protoWatchStream(t, evs...))
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ns := testWatchSerializer()
	rc, err := rest.RESTClientFor(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{
		GroupVersion: &corev1.SchemeGroupVersion, NegotiatedSerializer: ns,
		AcceptContentTypes: runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON, ContentType: runtime.ContentTypeProtobuf,
	}, APIPath: "/api"})
	require.NoError(t, err)
	req := func(rv string) *rest.Request {
		opts := &metav1.ListOptions{Watch: true, ResourceVersion: rv}
		return rc.Get().Namespace("ns").Resource("configmaps").VersionedParams(opts, metav1.ParameterCodec)
	}

	e, err := Watch(context.Background(), req("1"), ns)
	require.NoError(t, err)
	for i, ev := range evs {
		got, ok := e.Next()
		require.True(t, ok, "event %d", i)
		assert.Equal(t, wantEvent(ev), got)
	}
	_, ok := e.Next()
	assert.False(t, ok)

	_, err = Watch(context.Background(), req("2"), ns)
	assert.True(t, apierrors.IsResourceExpired(err), "%v", err)

	e, err = Watch(context.Background(), req("3"), ns)
	require.NoError(t, err, "no answer: sent again, as client-go's watch does")
	assert.GreaterOrEqual(t, noAnswer.Load(), int32(2))
	got, ok := e.Next()
	require.True(t, ok)
	assert.Equal(t, wantEvent(evs[0]), got)
	e.Stop()

	ctx, cancel := context.WithCancel(context.Background())
	refuse.Store(true) // no answer for longer than the test waits
	go func() {
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	_, err = Watch(ctx, req("3"), ns)
	assert.ErrorIs(t, err, context.Canceled, "the retries end with the context")
}
