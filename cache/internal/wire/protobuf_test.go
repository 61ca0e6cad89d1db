package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	restclientwatch "k8s.io/client-go/rest/watch"
)

func managed(manager string) []metav1.ManagedFieldsEntry {
	return []metav1.ManagedFieldsEntry{{
		Manager: manager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
		Time: &metav1.Time{Time: time.Unix(1700000000, 0)}, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:k":{}}}`),
	}}
}

func testObjects() []runtime.Object {
	return []runtime.Object{
		&corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns", ResourceVersion: "42", UID: "u1",
				Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "b"}, ManagedFields: managed("helm")},
			Data:       map[string]string{"k": "v"},
			BinaryData: map[string][]byte{"b": {0, 1, 2}},
		},
		&corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Generation: 3, ManagedFields: append(managed("kubelet"), managed("kcm")...),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u2"}}},
			Spec:   corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "img:1"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		},
		&corev1.Secret{ // no managedFields: nothing to skip
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"},
			Data:       map[string][]byte{"k": []byte("v")},
		},
		&metav1.Status{ // what an ERROR event carries
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
			Status:   metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old",
		},
	}
}

func encodeProto(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	var buf bytes.Buffer
	s := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
	require.NoError(t, s.Encode(obj, &buf))
	return buf.Bytes()
}

func TestObjectSerializerMatchesStockDecoder(t *testing.T) {
	stock := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
	for _, strip := range []bool{false, true} {
		fast := &objectSerializer{Serializer: stock, creater: clientgoscheme.Scheme, strip: strip}
		for _, obj := range testObjects() {
			data := encodeProto(t, obj)
			want, wantGVK, err := stock.Decode(data, nil, nil)
			require.NoError(t, err)
			if strip {
				if m, ok := want.(metav1.Object); ok {
					m.SetManagedFields(nil)
				}
			}
			got, gotGVK, err := fast.Decode(data, nil, nil)
			require.NoError(t, err)
			assert.Equal(t, want, got, "strip=%v %T", strip, obj)
			assert.Equal(t, wantGVK, gotGVK)

			// The object shares no memory with the input or the scratch buffer.
			for i := range data {
				data[i] = 0xff
			}
			buf := scratchPool.Get().(*[]byte)
			for i := range *buf {
				(*buf)[i] = 0xff
			}
			scratchPool.Put(buf)
			assert.Equal(t, want, got, "after the buffers were overwritten")
		}
	}
}

func TestObjectSerializerKeepsManagedFieldsUnlessStripping(t *testing.T) {
	stock := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
	data := encodeProto(t, testObjects()[1])
	keep := &objectSerializer{Serializer: stock, creater: clientgoscheme.Scheme}
	got, _, err := keep.Decode(data, nil, nil)
	require.NoError(t, err)
	assert.Len(t, got.(*corev1.Pod).ManagedFields, 2)
	strip := &objectSerializer{Serializer: stock, creater: clientgoscheme.Scheme, strip: true}
	got, _, err = strip.Decode(data, nil, nil)
	require.NoError(t, err)
	assert.Empty(t, got.(*corev1.Pod).ManagedFields)
	assert.Equal(t, "n1", got.(*corev1.Pod).Spec.NodeName, "fields after metadata survive")
}

func TestObjectSerializerFallsBack(t *testing.T) {
	stock := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
	fast := &objectSerializer{Serializer: stock, creater: clientgoscheme.Scheme, strip: true}
	cases := map[string][]byte{
		"not protobuf":    []byte(`{"kind":"ConfigMap"}`),
		"truncated":       encodeProto(t, testObjects()[0])[:20],
		"unknown kind":    append(append([]byte{}, protobufMagic...), 0x0a, 0x0a, 0x0a, 0x02, 'v', '1', 0x12, 0x04, 'N', 'o', 'p', 'e'),
		"empty envelope":  protobufMagic,
		"bad tag varint":  append(append([]byte{}, protobufMagic...), 0xff, 0xff, 0xff),
		"length too long": append(append([]byte{}, protobufMagic...), 0x12, 0x7f, 0x00),
	}
	for name, data := range cases {
		_, _, wantErr := stock.Decode(data, nil, nil)
		_, _, gotErr := fast.Decode(data, nil, nil)
		require.Error(t, wantErr, name)
		assert.Equal(t, wantErr.Error(), gotErr.Error(), name)
	}
	// A decode into an object of another type is the stock decoder's.
	var secret corev1.Secret
	_, _, wantErr := stock.Decode(encodeProto(t, testObjects()[0]), nil, &secret)
	_, _, gotErr := fast.Decode(encodeProto(t, testObjects()[0]), nil, &secret)
	assert.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr))
}

// TestObjectSerializerDecodesIntoAsStock leaves a decode into a given
// object (the cache's clients never ask for one) to the stock decoder.
func TestObjectSerializerDecodesIntoAsStock(t *testing.T) {
	stock := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
	fast := &objectSerializer{Serializer: stock, creater: clientgoscheme.Scheme, strip: true}
	data := encodeProto(t, testObjects()[0])
	var want, got corev1.ConfigMap
	_, _, err := stock.Decode(data, nil, &want)
	require.NoError(t, err)
	out, _, err := fast.Decode(data, nil, &got)
	require.NoError(t, err)
	assert.Same(t, &got, out)
	assert.Equal(t, want, got)
	assert.NotEmpty(t, got.ManagedFields)
}

// TestWatchStreamThroughClientGoDecoders feeds a framed protobuf watch
// stream through client-go's own watch decoder with the wrapped
// serializers, as a REST client's Watch does.
func TestWatchStreamThroughClientGoDecoders(t *testing.T) {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	ns := NewWatchSerializer(codecs.WithoutConversion(), clientgoscheme.Scheme, true, nil)
	info, ok := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	require.True(t, ok)
	require.IsType(t, &watchEventSerializer{}, info.StreamSerializer.Serializer)
	jsonInfo, ok := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), runtime.ContentTypeJSON)
	require.True(t, ok)
	assert.NotEqual(t, "*wire.objectSerializer", fmt.Sprintf("%T", jsonInfo.Serializer), "JSON is untouched")

	types := []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Error}
	objs := testObjects()
	var stream bytes.Buffer
	fw := info.StreamSerializer.Framer.NewFrameWriter(&stream)
	raw := protobuf.NewRawSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
	for i, typ := range types {
		var frame bytes.Buffer
		ev := &metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: encodeProto(t, objs[i])}}
		require.NoError(t, raw.Encode(ev, &frame))
		_, err := fw.Write(frame.Bytes())
		require.NoError(t, err)
	}

	objectDecoder := ns.DecoderToVersion(info.Serializer, nil)
	dec := restclientwatch.NewDecoder(
		streaming.NewDecoder(info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(&stream)), info.StreamSerializer.Serializer),
		objectDecoder)
	for i, typ := range types {
		gotType, obj, err := dec.Decode()
		require.NoError(t, err, "event %d", i)
		assert.Equal(t, typ, gotType)
		want := objs[i].DeepCopyObject()
		want.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{}) // typed objects come back without apiVersion and kind
		if m, ok := want.(metav1.Object); ok {
			m.SetManagedFields(nil)
		}
		assert.Equal(t, want, obj, "event %d", i)
	}
	_, _, err := dec.Decode()
	assert.ErrorIs(t, err, io.EOF)
}

// TestWithoutManagedFieldsInAnyOrder strips entries that are not adjacent,
// as a hand-written or future encoder may place them.
func TestWithoutManagedFieldsInAnyOrder(t *testing.T) {
	msg := func(num uint64, payload []byte) []byte {
		b := binary.AppendUvarint(nil, num<<3|2)
		b = binary.AppendUvarint(b, uint64(len(payload)))
		return append(b, payload...)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	entry := func(manager string) []byte { return msg(17, msg(1, []byte(manager))) }
	meta := cat(msg(1, []byte("a")), entry("x"), msg(3, []byte("ns")), entry("y"))
	obj := cat(msg(1, meta), msg(2, cat(msg(1, []byte("k")), msg(2, []byte("v")))))

	var withFields corev1.ConfigMap
	require.NoError(t, withFields.Unmarshal(obj))
	require.Len(t, withFields.ManagedFields, 2, "the crafted bytes carry two entries")

	stripped, err := withoutManagedFields(obj, nil)
	require.NoError(t, err)
	var got corev1.ConfigMap
	require.NoError(t, got.Unmarshal(stripped))
	withFields.ManagedFields = nil
	assert.Equal(t, withFields, got)

	none, err := withoutManagedFields(cat(msg(1, msg(1, []byte("a")))), nil)
	require.NoError(t, err)
	assert.Nil(t, none, "nothing to strip")
	_, err = withoutManagedFields(cat(msg(1, []byte{0x8a, 0x01, 0x7f})), nil)
	assert.Error(t, err, "a truncated entry")
}
