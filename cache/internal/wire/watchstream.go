package wire

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	restwatch "k8s.io/client-go/rest/watch"
)

// client-go's watch (rest.Request.Watch) hands every event from the
// goroutine that decodes it to the reflector's goroutine over a channel:
// one goroutine hop per event, and on an idle process a wake-up of a
// second thread. Events reads the same response with the same decoders
// but lets its reader pull each event on its own goroutine (Next), so the
// informer decodes, applies and dispatches an event without a hop. For
// a reader that wants a channel (client-go's Reflector, for streaming
// lists), ResultChan starts the usual decoding goroutine.

// Events is an open watch whose events its reader pulls with Next. It is
// also a watch.Interface: ResultChan hands the same events over a channel
// instead. A watch is read one way or the other, not both.
type Events struct {
	body io.ReadCloser // nil: ended before it began
	br   *bufio.Reader
	ns   runtime.NegotiatedSerializer
	dec  *restwatch.Decoder // a JSON stream's, chosen on the first Next by the body's first byte
	pb   *protoFrames       // a protobuf stream's, chosen the same way

	ended    bool // Next has returned false; only Next's goroutine touches it
	done     chan struct{}
	stopOnce sync.Once
	pumpOnce sync.Once
	result   chan watch.Event
}

var _ watch.Interface = (*Events)(nil)

// Watch sends req, a watch request, and returns its events, decoded with
// ns (the client's negotiated serializer, whose protobuf or JSON entry is
// chosen by what the server sent). Like rest.Request.Watch, it is not
// rate limited, and a request that ends without an answer (a probable EOF
// or a timeout) is sent again after a second, up to watchRetries times,
// then returns a watch that has already ended.
func Watch(ctx context.Context, req *rest.Request, ns runtime.NegotiatedSerializer) (*Events, error) {
	req = req.Throttle(nil)
	for attempt := 1; ; attempt++ {
		body, err := req.Stream(ctx)
		if err == nil {
			return NewEvents(body, ns), nil
		}
		if !utilnet.IsProbableEOF(err) && !utilnet.IsTimeout(err) {
			return nil, err
		}
		if attempt > watchRetries {
			return NewEvents(nil, ns), nil
		}
		t := time.NewTimer(watchRetryWait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (after %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// rest.Request.Watch's retries of a request that got no answer: a
// connection cut or refused at the proxy in front of the API server
// heals within a retry, without the relist an ended watch leads to.
const (
	watchRetries   = 10
	watchRetryWait = time.Second
)

// NewEvents returns the events of a watch response body (nil: none).
func NewEvents(body io.ReadCloser, ns runtime.NegotiatedSerializer) *Events {
	e := &Events{body: body, ns: ns, done: make(chan struct{})}
	if body == nil {
		e.ended = true
	}
	return e
}

// Next returns the next event, or false once the watch has ended: the
// server closed it, Stop was called, or the connection broke. As with
// client-go's watch, an event that cannot be decoded arrives as an Error
// event (a 500 Status), after which the watch ends.
func (e *Events) Next() (watch.Event, bool) {
	if e.ended {
		return watch.Event{}, false
	}
	ev, err := e.next()
	if err == nil {
		return ev, true
	}
	e.ended = true
	stopped := e.stopped() // on purpose: nothing to report
	e.Stop()
	if ev, ok := decodeFailure(err); ok && !stopped {
		return ev, true
	}
	return watch.Event{}, false
}

func (e *Events) next() (watch.Event, error) {
	if e.dec == nil && e.pb == nil {
		if err := e.choose(); err != nil {
			return watch.Event{}, err
		}
	}
	if e.pb != nil {
		return e.pb.next()
	}
	typ, obj, err := e.dec.Decode()
	if err != nil {
		return watch.Event{}, err
	}
	return watch.Event{Type: typ, Object: obj}, nil
}

// Drained reports whether every byte read from the connection so far has
// been decoded, so that the next Next will wait for the server. For a JSON
// stream, whose decoder reads ahead, it may report true early.
func (e *Events) Drained() bool { return e.br == nil || e.br.Buffered() == 0 }

// choose picks the decoder by the body's first byte: a JSON watch stream
// starts with an object, a protobuf one with a frame's length, whose
// first byte is 0 for every frame under 16 MiB.
func (e *Events) choose() error {
	e.br = bufio.NewReaderSize(e.body, 32<<10)
	head, err := e.br.Peek(1)
	if err != nil {
		return err
	}
	mediaType := runtime.ContentTypeProtobuf
	switch head[0] {
	case '{', ' ', '\t', '\r', '\n':
		mediaType = runtime.ContentTypeJSON
	}
	info, ok := runtime.SerializerInfoForMediaType(e.ns.SupportedMediaTypes(), mediaType)
	if !ok || info.StreamSerializer == nil {
		return fmt.Errorf("cache: the watch stream is %s, which the client cannot decode", mediaType)
	}
	if mediaType == runtime.ContentTypeProtobuf {
		e.pb = &protoFrames{br: e.br, frameDec: info.StreamSerializer.Serializer, objDec: e.ns.DecoderToVersion(info.Serializer, nil)}
		return nil
	}
	frames := info.StreamSerializer.Framer.NewFrameReader(readCloser{e.br, e.body})
	e.dec = restwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer),
		e.ns.DecoderToVersion(info.Serializer, nil))
	return nil
}

// readCloser reads through a buffer and closes the body under it.
type readCloser struct {
	*bufio.Reader
	io.Closer
}

// decodeFailure returns the Error event client-go's watch sends for err,
// or false when err only says that the stream ended (as client-go's
// watch ends quietly on those).
func decodeFailure(err error) (watch.Event, bool) {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || utilnet.IsProbableEOF(err) || utilnet.IsTimeout(err) {
		return watch.Event{}, false
	}
	reporter := apierrors.NewClientErrorReporter(http.StatusInternalServerError, http.MethodGet, "ClientWatchDecoding")
	return watch.Event{Type: watch.Error, Object: reporter.AsObject(fmt.Errorf("unable to decode an event from the watch stream: %v", err))}, true
}

// Stop ends the watch: a Next blocked on the connection returns false. It
// may be called from any goroutine, more than once.
func (e *Events) Stop() {
	e.stopOnce.Do(func() {
		close(e.done)
		if e.body != nil {
			_ = e.body.Close()
		}
	})
}

func (e *Events) stopped() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// ResultChan returns the events over a channel, closed when the watch
// ends, decoding them on a goroutine of their own (client-go's way).
func (e *Events) ResultChan() <-chan watch.Event {
	e.pumpOnce.Do(func() {
		e.result = make(chan watch.Event)
		go e.pump()
	})
	return e.result
}

func (e *Events) pump() {
	defer close(e.result)
	for {
		ev, ok := e.Next()
		if !ok {
			return
		}
		select {
		case e.result <- ev:
		case <-e.done:
			return
		}
	}
}
