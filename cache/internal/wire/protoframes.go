package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeloop/kubeloop/internal/probe"
)

// A protobuf watch stream is a run of frames, each a 4-byte big-endian
// length and that many bytes of WatchEvent. client-go reads it through
// three layers (rest/watch.Decoder over streaming.Decoder over
// framer.lengthDelimitedFrameReader): each frame is copied from the
// connection's buffer into the streaming decoder's, and the frame header
// and the WatchEvent escape to the heap, two allocations per event.
// protoFrames reads the same frames with the same decoders and the same
// outcomes (FuzzWatchStream compares them): a frame that fits in the
// connection's read buffer is decoded where it lies there, a larger one in
// a buffer of its own that is kept for the next; the WatchEvent is reused.
// The decoders copy what the object keeps, so nothing refers to a frame
// once it has been decoded.

// maxFrame is the largest frame read, as streaming.NewDecoder's limit;
// a larger one is streaming.ErrObjectTooLarge.
const maxFrame = 16 << 20

// protoFrames decodes a protobuf watch stream frame by frame.
type protoFrames struct {
	br       *bufio.Reader
	frameDec runtime.Decoder // the stream serializer: frames to WatchEvents
	objDec   runtime.Decoder // the event's object, as rest/watch.Decoder decodes it
	got      metav1.WatchEvent
	buf      []byte // a frame larger than br's buffer
}

// next reads and decodes the next event; its errors are rest/watch.Decoder's.
func (p *protoFrames) next() (watch.Event, error) {
	frame, err := p.frame()
	if err != nil {
		return watch.Event{}, err
	}
	probe.Mark(probe.Read)
	p.got = metav1.WatchEvent{}
	res, _, err := p.frameDec.Decode(frame, nil, &p.got)
	if err != nil {
		return watch.Event{}, err
	}
	if res != &p.got {
		return watch.Event{}, errors.New("unable to decode to metav1.WatchEvent")
	}
	typ, raw := p.got.Type, p.got.Object.Raw
	p.got = metav1.WatchEvent{} // keep nothing of the frame
	switch typ {
	case string(watch.Added), string(watch.Modified), string(watch.Deleted), string(watch.Error), string(watch.Bookmark):
	default:
		return watch.Event{}, fmt.Errorf("got invalid watch event type: %v", typ)
	}
	obj, err := runtime.Decode(p.objDec, raw)
	if err != nil {
		return watch.Event{}, fmt.Errorf("unable to decode watch event: %v", err)
	}
	probe.Mark(probe.Decoded)
	return watch.Event{Type: watch.EventType(typ), Object: obj}, nil
}

// frame returns the next frame's bytes, valid until the next read of br.
// A stream that ends inside a frame is io.ErrUnexpectedEOF, one that ends
// between frames io.EOF, as the stock framer reports them.
func (p *protoFrames) frame() ([]byte, error) {
	head, err := p.br.Peek(4)
	if err != nil {
		return nil, unexpected(err, len(head))
	}
	n := int(binary.BigEndian.Uint32(head))
	if n > maxFrame {
		return nil, streaming.ErrObjectTooLarge
	}
	if 4+n <= p.br.Size() {
		b, err := p.br.Peek(4 + n)
		if err != nil {
			return nil, unexpected(err, 1)
		}
		_, _ = p.br.Discard(4 + n) // the bytes stay in br's buffer until its next read
		return b[4:], nil
	}
	_, _ = p.br.Discard(4)
	if cap(p.buf) < n {
		p.buf = make([]byte, n)
	}
	p.buf = p.buf[:n]
	if _, err := io.ReadFull(p.br, p.buf); err != nil {
		return nil, err
	}
	return p.buf, nil
}

// unexpected turns the io.EOF of a read that got some bytes into
// io.ErrUnexpectedEOF.
func unexpected(err error, got int) error {
	if errors.Is(err, io.EOF) && got > 0 {
		return io.ErrUnexpectedEOF
	}
	return err
}
