package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/internal/kinds"
)

// A LIST response of a built-in kind is one protobuf message: an Unknown
// envelope around the list, whose items follow each other. client-go reads
// the whole body into memory (copying it a few times as the buffer grows),
// decodes it into one slice of items, and the reflector then copies every
// item out of the slice. ListDecoder reads the items from the connection one
// at a time instead, skipping managedFields in each, into objects the
// reflector takes as they are: no copy of the body, no slice of items, no
// second copy of each object.

// ListDecoder decodes LIST responses of one list kind.
type ListDecoder struct {
	listGVK  schema.GroupVersionKind
	itemType reflect.Type // the item's struct type, e.g. corev1.ConfigMap
	strip    bool
	cutMeta  bool            // items embed metav1.ObjectMeta: a metaCutter may set their maps
	fallback runtime.Decoder // for anything but the protobuf layout expected
}

// NewListDecoder returns the decoder of listGVK's responses, or nil when
// the list's items cannot be streamed (not a k8s.io/api list type).
func NewListDecoder(scheme *runtime.Scheme, listGVK schema.GroupVersionKind, strip bool, fallback runtime.Decoder) *ListDecoder {
	list, err := scheme.New(listGVK)
	if err != nil || !itemsAreFieldTwo(reflect.TypeOf(list)) {
		return nil
	}
	f, _ := reflect.TypeOf(list).Elem().FieldByName("Items")
	item := reflect.New(f.Type.Elem()).Interface()
	if _, ok := item.(unmarshaler); !ok {
		return nil
	}
	var cutMeta bool
	if a, ok := item.(metav1.ObjectMetaAccessor); ok {
		_, cutMeta = a.GetObjectMeta().(*metav1.ObjectMeta)
	}
	return &ListDecoder{listGVK: listGVK, itemType: f.Type.Elem(), strip: strip, cutMeta: cutMeta, fallback: fallback}
}

// List sends req (a LIST) and decodes its response.
func (d *ListDecoder) List(ctx context.Context, req *rest.Request, newList func() (runtime.Object, error)) (runtime.Object, error) {
	body, err := req.Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return d.decode(body, newList)
}

// decode reads a response body: protobuf item by item, anything else
// whole through the fallback decoder.
func (d *ListDecoder) decode(body io.Reader, newList func() (runtime.Object, error)) (runtime.Object, error) {
	br := bufio.NewReaderSize(body, 64<<10)
	if head, err := br.Peek(len(protobufMagic)); err != nil || !bytes.Equal(head, protobufMagic) {
		data, err := io.ReadAll(br)
		if err != nil {
			return nil, err
		}
		list, err := newList()
		if err != nil {
			return nil, err
		}
		out, _, err := d.fallback.Decode(data, nil, list)
		return out, err
	}
	_, _ = br.Discard(len(protobufMagic))
	r := &protoStream{r: br}
	out := &metav1.List{}
	listed := false
	for {
		num, wire, err := r.tag()
		if errors.Is(err, io.EOF) {
			if r.read == 0 { // as the stock decoder (FuzzListDecoder)
				return nil, fmt.Errorf("cache: list %s: empty body", kinds.String(d.listGVK))
			}
			break
		}
		if err != nil {
			return nil, err
		}
		if wire != 2 {
			if num < 64 && unknownFields&(1<<num) != 0 {
				return nil, fmt.Errorf("cache: list %s: envelope field %d has wire type %d", d.listGVK.Kind, num, wire)
			}
			if err := r.skipWire(wire); err != nil {
				return nil, err
			}
			continue
		}
		n, err := r.uvarint()
		if err != nil {
			return nil, unexpectedEOF(err)
		}
		switch num {
		case 1: // typeMeta
			tm, err := r.bytes(n, nil)
			if err != nil {
				return nil, err
			}
			apiVersion, kind, err := typeMeta(tm)
			if err != nil {
				return nil, err
			}
			// An empty kind or apiVersion is the list's, as the stock
			// decoder defaults them from the object it decodes into.
			if (len(kind) > 0 && string(kind) != d.listGVK.Kind) ||
				(len(apiVersion) > 0 && string(apiVersion) != d.listGVK.GroupVersion().String()) {
				return nil, fmt.Errorf("cache: list %s: the response is a %s %s", kinds.String(d.listGVK), apiVersion, kind)
			}
		case 2: // the list
			if listed { // the stock decoder would keep the last one: a stream cannot
				return nil, fmt.Errorf("cache: list %s: the response holds two lists", kinds.String(d.listGVK))
			}
			listed = true
			if err := d.items(r, n, out); err != nil {
				return nil, err
			}
		default: // contentEncoding (none is ever set; the stock decoder ignores it), contentType, unknown
			if err := r.skip(n); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// items decodes the n bytes of a list message into out.
func (d *ListDecoder) items(r *protoStream, n uint64, out *metav1.List) error {
	start, end := r.read, r.read+n
	var buf, scratch []byte
	cutter := metaCutter{strip: d.strip}
	for r.read < end {
		num, wire, err := r.tag()
		if err != nil {
			return unexpectedEOF(err)
		}
		if wire != 2 {
			if num == 1 || num == 2 { // metadata and items are messages
				return fmt.Errorf("cache: list %s: field %d has wire type %d", kinds.String(d.listGVK), num, wire)
			}
			if err := r.skipWire(wire); err != nil {
				return err
			}
			continue
		}
		l, err := r.uvarint()
		if err != nil {
			return unexpectedEOF(err)
		}
		if r.read > end || l > end-r.read { // the tag and length too may overrun (FuzzListDecoder)
			return fmt.Errorf("cache: list %s: field of %d bytes overruns the list", kinds.String(d.listGVK), l)
		}
		switch num {
		case 1: // metadata
			if buf, err = r.bytes(l, buf); err != nil {
				return err
			}
			if err := out.ListMeta.Unmarshal(buf); err != nil {
				return err
			}
		case 2: // an item
			if buf, err = r.bytes(l, buf); err != nil {
				return err
			}
			item, cut := buf, false
			if d.cutMeta {
				if c, ok := cutter.cut(buf); ok {
					item, cut = c, true
				}
			}
			if !cut && d.strip {
				stripped, err := withoutManagedFields(buf, scratch[:0])
				if err != nil {
					return err
				}
				if stripped != nil {
					item, scratch = stripped, stripped
				}
			}
			obj := reflect.New(d.itemType).Interface()
			if err := obj.(unmarshaler).Unmarshal(item); err != nil {
				return err
			}
			if cut {
				if err := cutter.setMeta(obj.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)); err != nil {
					return err
				}
			}
			if out.Items == nil {
				out.Items = make([]runtime.RawExtension, 0, itemsCap(end-start, l))
			}
			out.Items = append(out.Items, runtime.RawExtension{Object: obj.(runtime.Object)})
		default:
			if err := r.skip(l); err != nil {
				return err
			}
		}
	}
	if r.read != end { // a field not length-delimited ran past the list
		return fmt.Errorf("cache: list %s: a field overruns the list", kinds.String(d.listGVK))
	}
	return nil
}

// minItemBytes bounds itemsCap's guess from below: a smaller first item
// does not make the slice larger than one slot per minItemBytes of list.
const minItemBytes = 256

// itemsCap guesses the number of items of a list message of n bytes whose
// first item has l bytes, so that the slice of items is made once: grown
// by append (by a quarter at a time when large), the slice of a 100k-item
// list was copied about 5 times its size (BenchmarkListDecode).
func itemsCap(n, l uint64) int {
	return int(n/(max(l, minItemBytes)+3)) + 1 // +3: the item's tag and length
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// protoStream reads protobuf wire format from a buffered reader, counting
// the bytes read.
type protoStream struct {
	r    *bufio.Reader
	read uint64
}

func (p *protoStream) uvarint() (uint64, error) {
	v, err := binary.ReadUvarint(p)
	return v, err
}

// ReadByte lets binary.ReadUvarint read through the counter.
func (p *protoStream) ReadByte() (byte, error) {
	b, err := p.r.ReadByte()
	if err == nil {
		p.read++
	}
	return b, err
}

// tag reads a field's tag; io.EOF means a clean end between fields.
func (p *protoStream) tag() (num uint64, wire uint64, err error) {
	t, err := p.uvarint()
	if err != nil {
		return 0, 0, err
	}
	if t>>3 == 0 { // illegal, as the generated decoders say
		return 0, 0, fmt.Errorf("cache: list: illegal tag 0 (wire type %d)", t&7)
	}
	return t >> 3, t & 7, nil
}

// bytes reads n bytes into buf (grown as needed).
func (p *protoStream) bytes(n uint64, buf []byte) ([]byte, error) {
	if n > 1<<31 {
		return nil, fmt.Errorf("cache: list: a field of %d bytes", n)
	}
	if uint64(cap(buf)) >= n || n <= bigField {
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(p.r, buf); err != nil {
			return nil, unexpectedEOF(err)
		}
		p.read += n
		return buf, nil
	}
	// A large field grows with what arrives, so that a length that lies
	// (a cut or malformed response) costs no more memory than was sent.
	buf = buf[:0]
	for uint64(len(buf)) < n {
		chunk := min(n-uint64(len(buf)), bigField)
		buf = slices.Grow(buf, int(chunk))
		at := len(buf)
		buf = buf[:at+int(chunk)]
		if _, err := io.ReadFull(p.r, buf[at:]); err != nil {
			return nil, unexpectedEOF(err)
		}
	}
	p.read += n
	return buf, nil
}

// bigField is the size above which protoStream.bytes reads a field in
// chunks of this size.
const bigField = 1 << 20

func (p *protoStream) skip(n uint64) error {
	d, err := p.r.Discard(int(n))
	p.read += uint64(d)
	return unexpectedEOF(err)
}

// skipWire skips a field that is not length-delimited.
func (p *protoStream) skipWire(wire uint64) error {
	switch wire {
	case 0:
		_, err := p.uvarint()
		return unexpectedEOF(err)
	case 1:
		return p.skip(8)
	case 5:
		return p.skip(4)
	case 3: // a group (deprecated), skipped to its end as the generated decoders do
		for depth := 1; depth > 0; {
			_, w, err := p.tag()
			if err != nil {
				return unexpectedEOF(err)
			}
			switch w {
			case 3:
				depth++
			case 4:
				depth--
			case 2:
				n, err := p.uvarint()
				if err != nil {
					return unexpectedEOF(err)
				}
				if err := p.skip(n); err != nil {
					return err
				}
			default:
				if err := p.skipWire(w); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return fmt.Errorf("cache: list: wire type %d", wire)
}
