// Package wire decodes the API server's protobuf responses for the cache:
// watch events decoded in place (NewWatchSerializer) and LIST responses
// decoded item by item off the connection (ListDecoder), both skipping
// metadata.managedFields in the bytes when the cache strips them. Anything
// it does not recognise goes to the stock decoders, so the objects are
// exactly those the stock path returns, minus managedFields where stripped.
// A watch is read by Events, whose reader pulls each event on its own
// goroutine; a protobuf stream's frames it reads itself, each decoded
// where it lies in the connection's read buffer (protoframes.go), with the
// same events and errors as client-go's watch decoder (FuzzWatchStream).
package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// The watch stream of a built-in kind is protobuf: each frame a WatchEvent
// whose object is an Unknown envelope around the object's bytes. The stock
// decoders copy the object's bytes twice on the way (into the
// RawExtension, then into the Unknown) and decode managedFields only for
// the cache to drop them. watchSerializer decodes the envelopes in place
// and, for kinds whose managedFields the cache strips, skips those bytes
// before the object is decoded. Anything it does not recognise goes to the
// stock decoder unchanged, so the objects it returns are exactly those the
// stock path returns, minus managedFields where the cache strips them.

// protobufMagic prefixes every protobuf-encoded Kubernetes object.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// errMalformed makes a decoder fall back to the stock one, which reports
// the problem in its own words.
var errMalformed = errors.New("cache: malformed protobuf")

// watchSerializer wraps a client's negotiated serializer (protobuf entry
// only) with the in-place decoders.
type watchSerializer struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

// NewWatchSerializer wraps base. creater makes the decoded objects; strip
// says whether managedFields are skipped; stored, if not nil, holds the
// stores whose label and annotation maps decoded objects share when equal.
func NewWatchSerializer(base runtime.NegotiatedSerializer, creater runtime.ObjectCreater, strip bool, stored *Stored) runtime.NegotiatedSerializer {
	infos := slices.Clone(base.SupportedMediaTypes())
	for i := range infos {
		info := &infos[i]
		if info.MediaType != runtime.ContentTypeProtobuf || info.StreamSerializer == nil {
			continue
		}
		ss := *info.StreamSerializer
		ss.Serializer = &watchEventSerializer{Serializer: ss.Serializer}
		info.StreamSerializer = &ss
		info.Serializer = &objectSerializer{Serializer: info.Serializer, creater: creater, strip: strip, stored: stored}
	}
	return &watchSerializer{NegotiatedSerializer: base, infos: infos}
}

// SupportedMediaTypes returns base's, with the protobuf decoders wrapped.
func (s *watchSerializer) SupportedMediaTypes() []runtime.SerializerInfo { return s.infos }

// watchEventSerializer decodes a WatchEvent frame with its object's bytes
// left in the frame (the watch decoder decodes them before it reads the
// next frame, so they are never read after the buffer is reused).
type watchEventSerializer struct {
	runtime.Serializer
}

func (s *watchEventSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	ev, ok := into.(*metav1.WatchEvent)
	if !ok || len(data) == 0 { // an empty frame: the stock error (FuzzWatchStream)
		return s.Serializer.Decode(data, defaults, into)
	}
	var typ, raw []byte
	// A known field of another wire type is the stock decoder's to
	// refuse (FuzzWatchStream).
	err := eachFieldOf(data, 1<<1|1<<2, func(num uint64, payload []byte) error {
		switch num {
		case 1:
			typ = payload
		case 2:
			return eachFieldOf(payload, 1<<1, func(num uint64, payload []byte) error {
				if num == 1 {
					raw = payload
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return s.Serializer.Decode(data, defaults, into)
	}
	ev.Type = eventType(typ)
	ev.Object = runtime.RawExtension{Raw: raw}
	return ev, nil, nil
}

// eventType returns the event type without allocating for the known ones.
func eventType(b []byte) string {
	switch string(b) {
	case string(watch.Added):
		return string(watch.Added)
	case string(watch.Modified):
		return string(watch.Modified)
	case string(watch.Deleted):
		return string(watch.Deleted)
	case string(watch.Bookmark):
		return string(watch.Bookmark)
	case string(watch.Error):
		return string(watch.Error)
	}
	return string(b)
}

// unmarshaler is what the generated protobuf types implement.
type unmarshaler interface {
	Unmarshal([]byte) error
}

// objectSerializer decodes an Unknown envelope in place when asked for a
// new object (watch events), and strips managedFields when told to.
type objectSerializer struct {
	runtime.Serializer
	creater runtime.ObjectCreater
	strip   bool
	stored  *Stored                                          // nil: no maps shared
	types   atomic.Pointer[map[string]map[string]*protoType] // apiVersion -> kind -> type, copy on write
	mu      sync.Mutex
}

// protoType is what the decoder knows of one kind.
type protoType struct {
	gvk       schema.GroupVersionKind
	metaFirst bool // field 1 is metav1.ObjectMeta, so managedFields can be skipped
	metaAcc   bool // GetObjectMeta returns the *metav1.ObjectMeta, so maps can be shared
	ok        bool // the kind is registered and decodes with Unmarshal
	// elem is the object's struct type when the creater is a
	// *runtime.Scheme, whose New is reflect.New of the type registered
	// for the kind (a registration never changes: the scheme panics on a
	// second type for a kind); new then skips the scheme's map lookups.
	elem reflect.Type
}

// new returns a new, empty object of the type.
func (t *protoType) new(creater runtime.ObjectCreater) (runtime.Object, error) {
	if t.elem != nil {
		return reflect.New(t.elem).Interface().(runtime.Object), nil
	}
	return creater.New(t.gvk)
}

var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

// Decode decodes a new object in place; a decode into a given object
// (which the cache's clients do not ask for: LIST responses go through
// ListDecoder) is the stock decoder's.
func (s *objectSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if into != nil {
		return s.Serializer.Decode(data, defaults, into)
	}
	obj, gvk, err := s.decode(data)
	if err != nil {
		// The stock decoder's answer, stripped as promised (FuzzWatchStream).
		obj, gvk, err = s.Serializer.Decode(data, defaults, into)
		if err == nil && s.strip {
			if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
				if om := a.GetObjectMeta(); om != nil {
					om.SetManagedFields(nil)
				}
			}
		}
	}
	return obj, gvk, err
}

func (s *objectSerializer) decode(data []byte) (runtime.Object, *schema.GroupVersionKind, error) {
	if !bytes.HasPrefix(data, protobufMagic) {
		return nil, nil, errMalformed
	}
	var apiVersion, kind, raw []byte
	// The Unknown envelope: typeMeta, raw, contentEncoding, contentType.
	err := eachFieldOf(data[len(protobufMagic):], unknownFields, func(num uint64, payload []byte) error {
		switch num {
		case 1:
			var err error
			apiVersion, kind, err = typeMeta(payload)
			return err
		case 2:
			raw = payload
		case 3: // contentEncoding: none is ever set, and the stock decoder ignores it
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	t := s.typeOf(apiVersion, kind)
	if !t.ok {
		return nil, nil, errMalformed
	}
	obj, err := t.new(s.creater)
	if err != nil {
		return nil, nil, err
	}
	u, ok := obj.(unmarshaler)
	if !ok {
		return nil, nil, errMalformed
	}
	var labels, annotations map[string]string
	var layout metaLayout
	if s.stored != nil && t.metaFirst && t.metaAcc {
		var ok bool
		if layout, ok = layoutOf(raw); ok {
			labels, annotations = s.stored.sharedMaps(t.gvk, &layout)
		}
	}
	if labels != nil || annotations != nil {
		drop := [3]span{{-1, -1}, {-1, -1}, {-1, -1}} // in field order
		if labels != nil {
			drop[0] = layout.labels
		}
		if annotations != nil {
			drop[1] = layout.annotations
		}
		if s.strip {
			drop[2] = layout.managed
		}
		buf := scratchPool.Get().(*[]byte)
		defer scratchPool.Put(buf)
		raw = layout.without(raw, (*buf)[:0], drop[:]...)
		*buf = raw
	} else if s.strip && t.metaFirst {
		buf := scratchPool.Get().(*[]byte)
		defer scratchPool.Put(buf)
		stripped, err := withoutManagedFields(raw, (*buf)[:0])
		if err != nil {
			return nil, nil, err
		}
		if stripped != nil {
			raw, *buf = stripped, stripped
		}
	}
	// The generated Unmarshal copies every string and byte slice, so the
	// object shares no memory with data or the scratch buffer.
	if err := u.Unmarshal(raw); err != nil {
		return nil, nil, err
	}
	if labels != nil || annotations != nil {
		om := obj.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
		if labels != nil {
			om.Labels = labels
		}
		if annotations != nil {
			om.Annotations = annotations
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(t.gvk)
	gvk := t.gvk
	return obj, &gvk, nil
}

// typeOf looks a kind up by its envelope's apiVersion and kind, learning
// it on first sight.
func (s *objectSerializer) typeOf(apiVersion, kind []byte) *protoType {
	if m := s.types.Load(); m != nil {
		if t := (*m)[string(apiVersion)][string(kind)]; t != nil {
			return t
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.types.Load()
	if old != nil {
		if t := (*old)[string(apiVersion)][string(kind)]; t != nil {
			return t
		}
	}
	t := &protoType{}
	if gv, err := schema.ParseGroupVersion(string(apiVersion)); err == nil {
		t.gvk = gv.WithKind(string(kind))
		if obj, err := s.creater.New(t.gvk); err == nil {
			_, t.ok = obj.(unmarshaler)
			t.metaFirst = metadataIsFieldOne(reflect.TypeOf(obj))
			if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
				_, t.metaAcc = a.GetObjectMeta().(*metav1.ObjectMeta)
			}
			if _, scheme := s.creater.(*runtime.Scheme); scheme {
				if rt := reflect.TypeOf(obj); rt.Kind() == reflect.Pointer && rt.Elem().Kind() == reflect.Struct {
					t.elem = rt.Elem()
				}
			}
		}
	}
	next := make(map[string]map[string]*protoType)
	if old != nil {
		for av, kinds := range *old {
			next[av] = kinds
		}
	}
	kinds := make(map[string]*protoType, len(next[string(apiVersion)])+1)
	for k, v := range next[string(apiVersion)] {
		kinds[k] = v
	}
	kinds[string(kind)] = t
	next[string(apiVersion)] = kinds
	s.types.Store(&next)
	return t
}

var objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()

// metadataIsFieldOne reports whether type t's ObjectMeta is protobuf field
// 1, as it is for every top-level kind in k8s.io/api; only then are
// managedFields (ObjectMeta's field 17) skipped.
func metadataIsFieldOne(t reflect.Type) bool {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return false
	}
	f, ok := t.Elem().FieldByName("ObjectMeta")
	return ok && f.Type == objectMetaType && f.Tag.Get("protobuf") == "bytes,1,opt,name=metadata"
}

// itemsAreFieldTwo reports whether type t is a list whose items are
// protobuf field 2 and have their metadata as field 1, as every list in
// k8s.io/api does.
func itemsAreFieldTwo(t reflect.Type) bool {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return false
	}
	f, ok := t.Elem().FieldByName("Items")
	return ok && f.Type.Kind() == reflect.Slice && f.Tag.Get("protobuf") == "bytes,2,rep,name=items" &&
		metadataIsFieldOne(reflect.PointerTo(f.Type.Elem()))
}

// withoutManagedFields returns obj's bytes with metadata.managedFields
// (field 17 of field 1) left out, appended to buf, or nil when obj has
// none.
func withoutManagedFields(obj, buf []byte) ([]byte, error) {
	for i := 0; i < len(obj); {
		num, meta, next, err := field(obj, i)
		if err != nil {
			return nil, err
		}
		if num != 1 || meta == nil {
			i = next
			continue
		}
		// One walk over the metadata: the kept length, and where the
		// managedFields run starts and ends (the encoder writes fields in
		// number order, so the entries are adjacent).
		kept, from, to, contiguous := 0, -1, -1, true
		for j := 0; j < len(meta); {
			n, _, nextj, err := field(meta, j)
			if err != nil {
				return nil, err
			}
			switch {
			case n != 17:
				kept += nextj - j
			case from < 0:
				from, to = j, nextj
			case j == to:
				to = nextj
			default:
				contiguous = false
			}
			j = nextj
		}
		if from < 0 {
			return nil, nil
		}
		buf = append(buf, obj[:i]...)
		buf = binary.AppendUvarint(buf, 1<<3|2)
		buf = binary.AppendUvarint(buf, uint64(kept))
		if contiguous {
			buf = append(buf, meta[:from]...)
			buf = append(buf, meta[to:]...)
		} else {
			_ = eachRaw(meta, func(num uint64, raw []byte) error {
				if num != 17 {
					buf = append(buf, raw...)
				}
				return nil
			})
		}
		return append(buf, obj[next:]...), nil
	}
	return nil, nil
}

// typeMeta returns the apiVersion and kind of an Unknown envelope's
// typeMeta message.
func typeMeta(msg []byte) (apiVersion, kind []byte, err error) {
	err = eachFieldOf(msg, 1<<1|1<<2, func(num uint64, p []byte) error {
		switch num {
		case 1:
			apiVersion = p
		case 2:
			kind = p
		}
		return nil
	})
	return apiVersion, kind, err
}

// unknownFields are the fields of runtime.Unknown, all length-delimited.
const unknownFields = 1<<1 | 1<<2 | 1<<3 | 1<<4

// eachFieldOf is eachField for a message whose fields in known (a bit per
// field number below 64) are all length-delimited: one of them with
// another wire type is malformed, as the generated decoders say ("wrong
// wireType").
func eachFieldOf(msg []byte, known uint64, fn func(num uint64, payload []byte) error) error {
	for i := 0; i < len(msg); {
		num, payload, next, err := field(msg, i)
		if err != nil {
			return err
		}
		if payload != nil {
			if err := fn(num, payload); err != nil {
				return err
			}
		} else if num < 64 && known&(1<<num) != 0 {
			return errMalformed
		}
		i = next
	}
	return nil
}

// eachField calls fn with every length-delimited field of msg; other wire
// types are skipped.
func eachField(msg []byte, fn func(num uint64, payload []byte) error) error {
	for i := 0; i < len(msg); {
		num, payload, next, err := field(msg, i)
		if err != nil {
			return err
		}
		if payload != nil {
			if err := fn(num, payload); err != nil {
				return err
			}
		}
		i = next
	}
	return nil
}

// eachRaw calls fn with every field of msg, tag included.
func eachRaw(msg []byte, fn func(num uint64, raw []byte) error) error {
	for i := 0; i < len(msg); {
		num, _, next, err := field(msg, i)
		if err != nil {
			return err
		}
		if err := fn(num, msg[i:next]); err != nil {
			return err
		}
		i = next
	}
	return nil
}
