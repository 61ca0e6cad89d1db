package wire

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// benchCM returns object i of the shape bench/fakeapiserver serves: a
// Helm-style ConfigMap with labels, annotations, one managedFields entry
// and about 0.5 KB of data.
func benchCM(i int) *corev1.ConfigMap {
	created := metav1.Time{Time: time.Unix(1700000000, 0)}
	ns := "ns-" + strconv.Itoa(i%20)
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "config-" + strconv.Itoa(i), Namespace: ns, UID: "00000009-0000-4000-8000-000000000001",
			ResourceVersion: strconv.Itoa(i + 1), CreationTimestamp: created,
			Labels:      map[string]string{"app.kubernetes.io/name": "app-1", "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/instance": "release-1"},
			Annotations: map[string]string{"meta.helm.sh/release-name": "release-1", "meta.helm.sh/release-namespace": ns},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
				Time: &created, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:application.yaml":{},"f:log-level":{}},"f:metadata":{"f:annotations":{".":{},"f:meta.helm.sh/release-name":{},"f:meta.helm.sh/release-namespace":{}},"f:labels":{".":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{}}}}`)}}},
		},
		Data: map[string]string{"log-level": "info", "revision": strconv.Itoa(i),
			"application.yaml": "server:\n  port: 8080\n  shutdownTimeout: 30s\nfeatures:\n  cache: true\n  tracing: false\n" +
				"database:\n  host: db.x.svc.cluster.local\n  pool: 20\n  timeout: 5s\n" +
				"upstreams:\n  - name: billing\n    url: http://billing:8080\n  - name: search\n    url: http://search:9200\n" +
				"instance: " + strconv.Itoa(i) + "\n" + strings.Repeat("# padding line to reach a typical size\n", 6)},
	}
}

// benchStream returns a protobuf watch stream of n MODIFIED events of
// benchCM objects.
func benchStream(b *testing.B, n int) ([]byte, runtime.SerializerInfo, runtime.NegotiatedSerializer) {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	ns := NewWatchSerializer(codecs.WithoutConversion(), clientgoscheme.Scheme, true, nil)
	info, _ := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	var stream bytes.Buffer
	fw := info.StreamSerializer.Framer.NewFrameWriter(&stream)
	raw := protobuf.NewRawSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
	s := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
	for i := range n {
		var obj, frame bytes.Buffer
		if err := s.Encode(benchCM(i), &obj); err != nil {
			b.Fatal(err)
		}
		ev := &metav1.WatchEvent{Type: string(watch.Modified), Object: runtime.RawExtension{Raw: obj.Bytes()}}
		if err := raw.Encode(ev, &frame); err != nil {
			b.Fatal(err)
		}
		fw.Write(frame.Bytes())
	}
	return stream.Bytes(), info, ns
}

// BenchmarkWatchDecode decodes watch events as a REST client's watch
// does, through the wrapped serializers.
func BenchmarkWatchDecode(b *testing.B) {
	const n = 1000
	data, info, ns := benchStream(b, n)
	objectDecoder := ns.DecoderToVersion(info.Serializer, nil)
	b.ReportAllocs()
	var dec *restclientwatch.Decoder
	for i := 0; b.Loop(); i++ {
		if i%n == 0 {
			dec = restclientwatch.NewDecoder(
				streaming.NewDecoder(info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(data))), info.StreamSerializer.Serializer),
				objectDecoder)
		}
		if _, _, err := dec.Decode(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWatchDecodeShared decodes the same events with their stored
// versions registered: the labels and annotations are shared, not built.
func BenchmarkWatchDecodeShared(b *testing.B) {
	const n = 1000
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	var st Stored
	prevs := map[string]*corev1.ConfigMap{}
	for i := range 20 {
		p := benchCM(i)
		p.ManagedFields = nil
		prevs[p.Namespace] = p
	}
	st.Register(corev1.SchemeGroupVersion.WithKind("ConfigMap"), "", func(ns, name string) (any, bool) { return prevs[ns], true })
	ns := NewWatchSerializer(codecs.WithoutConversion(), clientgoscheme.Scheme, true, &st)
	data, _, _ := benchStream(b, n)
	info, _ := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	objectDecoder := ns.DecoderToVersion(info.Serializer, nil)
	b.ReportAllocs()
	var dec *restclientwatch.Decoder
	for i := 0; b.Loop(); i++ {
		if i%n == 0 {
			dec = restclientwatch.NewDecoder(
				streaming.NewDecoder(info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(data))), info.StreamSerializer.Serializer),
				objectDecoder)
		}
		if _, _, err := dec.Decode(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEventsShared reads the events of BenchmarkWatchDecodeShared
// through Events, as the informers do: the frames read by protoFrames,
// not client-go's watch decoder.
func BenchmarkEventsShared(b *testing.B) {
	const n = 1000
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	var st Stored
	prevs := map[string]*corev1.ConfigMap{}
	for i := range 20 {
		p := benchCM(i)
		p.ManagedFields = nil
		prevs[p.Namespace] = p
	}
	st.Register(corev1.SchemeGroupVersion.WithKind("ConfigMap"), "", func(ns, name string) (any, bool) { return prevs[ns], true })
	ns := NewWatchSerializer(codecs.WithoutConversion(), clientgoscheme.Scheme, true, &st)
	data, _, _ := benchStream(b, n)
	b.ReportAllocs()
	var e *Events
	for i := 0; b.Loop(); i++ {
		if i%n == 0 {
			e = NewEvents(io.NopCloser(bytes.NewReader(data)), ns)
		}
		if _, ok := e.Next(); !ok {
			b.Fatal("the watch ended")
		}
	}
}

// BenchmarkEventsStoredVersion reads BenchmarkEventsShared's events with
// each object's own previous version stored (its revision entry differs,
// as in bench/e2e's steady state): labels, annotations and the unchanged
// data entries are the stored version's.
func BenchmarkEventsStoredVersion(b *testing.B) {
	const n = 1000
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	var st Stored
	prevs := map[string]*corev1.ConfigMap{}
	for i := range n {
		p := benchCM(i)
		p.ManagedFields = nil
		p.Data["revision"] = "previous"
		prevs[p.Name] = p // names are unique across namespaces
	}
	st.Register(corev1.SchemeGroupVersion.WithKind("ConfigMap"), "", func(_, name string) (any, bool) {
		p, ok := prevs[name]
		return p, ok
	})
	ns := NewWatchSerializer(codecs.WithoutConversion(), clientgoscheme.Scheme, true, &st)
	data, _, _ := benchStream(b, n)
	b.ReportAllocs()
	var e *Events
	for i := 0; b.Loop(); i++ {
		if i%n == 0 {
			e = NewEvents(io.NopCloser(bytes.NewReader(data)), ns)
		}
		if _, ok := e.Next(); !ok {
			b.Fatal("the watch ended")
		}
	}
}
