package wire

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestEventsReadsFramesOfEverySize reads frames smaller than, close to
// and larger than the connection's 32 KiB read buffer, delivered one byte
// per read and whole, each decoded as the stock decoder does, and a large
// frame's buffer reused by the small frames after it.
func TestEventsReadsFramesOfEverySize(t *testing.T) {
	var evs []watch.Event
	for _, size := range []int{0, 100, 32<<10 - 200, 32 << 10, 100 << 10, 10} {
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns", ResourceVersion: "7"},
			Data:       map[string]string{"k": strings.Repeat("x", size)}}
		evs = append(evs, watch.Event{Type: watch.Modified, Object: cm})
	}
	stream := protoWatchStream(t, evs...)
	for name, r := range map[string]func() io.Reader{
		"whole":         func() io.Reader { return bytes.NewReader(stream) },
		"byte by byte":  func() io.Reader { return iotest.OneByteReader(bytes.NewReader(stream)) },
		"half and half": func() io.Reader { return iotest.HalfReader(bytes.NewReader(stream)) },
	} {
		t.Run(name, func(t *testing.T) {
			e := NewEvents(io.NopCloser(r()), testWatchSerializer())
			for i, ev := range evs {
				got, ok := e.Next()
				require.True(t, ok, "event %d", i)
				assert.Equal(t, wantEvent(ev), got, "event %d", i)
			}
			_, ok := e.Next()
			assert.False(t, ok, "the stream ended")
		})
	}
}

// TestEventsEndsOnTruncatedFrames ends quietly, as client-go's watch does,
// when the stream stops inside a frame's length or its bytes, small or
// larger than the read buffer.
func TestEventsEndsOnTruncatedFrames(t *testing.T) {
	small := protoWatchStream(t, watchEvents()[0])
	big := protoWatchStream(t, watch.Event{Type: watch.Added, Object: &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "ns"},
		Data:       map[string]string{"k": strings.Repeat("x", 64<<10)}}})
	for name, stream := range map[string][]byte{
		"in the length":      append(bytes.Clone(small), 0, 0),
		"in a small frame":   append(bytes.Clone(small), small[:len(small)/2]...),
		"in a large frame":   append(bytes.Clone(small), big[:len(big)-100]...),
		"after the length":   append(bytes.Clone(small), small[:4]...),
		"nothing after good": small,
	} {
		t.Run(name, func(t *testing.T) {
			e := NewEvents(io.NopCloser(bytes.NewReader(stream)), testWatchSerializer())
			_, ok := e.Next()
			require.True(t, ok, "the whole first event")
			ev, ok := e.Next()
			assert.False(t, ok, "then the end, no %s event", ev.Type)
		})
	}
}

// TestEventsRefusesFramesOverTheLimit reports a frame longer than the
// stock decoder's 16 MiB limit as an Error event, with the stock
// decoder's message, without reading it, and ends.
func TestEventsRefusesFramesOverTheLimit(t *testing.T) {
	var stream bytes.Buffer
	stream.Write(protoWatchStream(t, watchEvents()[0]))
	stream.Write(binary.BigEndian.AppendUint32(nil, maxFrame+1))
	stream.WriteString("not read")
	e := NewEvents(io.NopCloser(&stream), testWatchSerializer())
	_, ok := e.Next()
	require.True(t, ok)
	ev, ok := e.Next()
	require.True(t, ok)
	require.Equal(t, watch.Error, ev.Type)
	err := apierrors.FromObject(ev.Object)
	assert.True(t, apierrors.IsInternalError(err), "%v", err)
	assert.Contains(t, err.Error(), "object to decode was longer than maximum allowed size")
	_, ok = e.Next()
	assert.False(t, ok)
}

// TestEventsRefusesUnknownEventTypes reports a frame whose type is none
// of the five as an Error event with client-go's message.
func TestEventsRefusesUnknownEventTypes(t *testing.T) {
	stream := protoWatchStream(t, watch.Event{Type: "SURPRISE", Object: testObjects()[0]})
	e := NewEvents(io.NopCloser(bytes.NewReader(stream)), testWatchSerializer())
	ev, ok := e.Next()
	require.True(t, ok)
	require.Equal(t, watch.Error, ev.Type)
	assert.Contains(t, apierrors.FromObject(ev.Object).Error(), "got invalid watch event type: SURPRISE")
	_, ok = e.Next()
	assert.False(t, ok)
}
