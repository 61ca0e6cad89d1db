package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// The fuzz targets hold the decoders of this package to their promise:
// the objects they return are the ones apimachinery's decoders return for
// the same bytes, minus managedFields where stripped (the cache's
// transform drops them in any case), and they never panic or hang on any
// input.
//
// Equal means reflect.DeepEqual: both decode the same bytes with the same
// generated code, so even quantities and times are identical; a label or
// annotation map shared with the stored version (Stored) is another map
// with equal contents.
//
// Where apimachinery's decoder fails, ours fails too, with the same error
// (the in-place decoders fall back to the stock one on anything they do
// not take), with one exception, allowed and checked: when stripping, the
// bytes of metadata.managedFields are skipped, not decoded, so a
// malformed managedFields entry (inside a well-formed length-delimited
// field) fails the stock decoder only. The fuzz targets then check that
// the same decode without stripping fails.

// fuzzPod is a Pod as a Deployment's ReplicaSet makes it: resources,
// environment, probes, tolerations, affinity, a projected token volume.
func fuzzPod(i int) *corev1.Pod {
	yes := true
	exp := int64(3607)
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
			PeriodSeconds: 10, FailureThreshold: 3}
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "team-a", Name: fmt.Sprint("web-5d8f-", i), GenerateName: "web-5d8f-", UID: "pod-uid", ResourceVersion: fmt.Sprint(100 + i),
			CreationTimestamp: metav1.NewTime(time.Unix(1700000000, 0)),
			Labels:            map[string]string{"app.kubernetes.io/name": "web", "pod-template-hash": "5d8f"},
			Annotations:       map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-02T03:04:05Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5d8f",
				UID: "rs-uid", Controller: &yes, BlockOwnerDeletion: &yes}},
			ManagedFields: managed("kube-controller-manager"),
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.example.com/web:v1", Args: []string{"--port=8080"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"},
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				LivenessProbe: probe("/healthz"), ReadinessProbe: probe("/ready"),
				SecurityContext: &corev1.SecurityContext{RunAsNonRoot: &yes, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
				VolumeMounts:    []corev1.VolumeMount{{Name: "kube-api-access-x1", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
			}},
			Volumes: []corev1.Volume{{Name: "kube-api-access-x1", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: &exp, Path: "token"}}},
			}}}},
			NodeName:     "node-1",
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &exp},
			},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "web"}}},
			}}}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: fmt.Sprint("10.0.0.", i),
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(time.Unix(1700000100, 0))}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, ContainerID: "containerd://abc",
				AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}},
		},
	}
}

// fuzzObjects are the seeds' objects: testObjects, the Pod, and a
// ConfigMap and a Secret with labels and annotations.
func fuzzObjects() []runtime.Object {
	objs := append(testObjects(), fuzzPod(1))
	cm := testObjects()[0].(*corev1.ConfigMap)
	cm.Labels = map[string]string{"app": "web", "release": "r1", "": ""}
	objs = append(objs, cm)
	objs = append(objs, &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: "ns", Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "b"}, ManagedFields: managed("cert-manager")},
		Type:       corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("crt"), "tls.key": nil},
	})
	return objs
}

func encodeProtoTB(tb testing.TB, obj runtime.Object) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme).Encode(obj, &buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// withoutMeta returns obj with managedFields cleared when strip.
func withoutMeta(obj runtime.Object, strip bool) runtime.Object {
	if strip {
		if m, ok := obj.(metav1.Object); ok {
			m.SetManagedFields(nil)
		}
	}
	return obj
}

// withoutFields returns a copy of list with its items' managedFields
// cleared (fuzzedConfigMaps' are not JSON).
func withoutFields(list runtime.Object) runtime.Object {
	list = list.DeepCopyObject()
	items, _ := meta.ExtractList(list)
	for _, item := range items {
		item.(metav1.Object).SetManagedFields(nil)
	}
	_ = meta.SetList(list, items)
	return list
}

// fuzzKinds are the kinds the fuzzed Stored holds.
var fuzzKinds = []schema.GroupVersionKind{
	corev1.SchemeGroupVersion.WithKind("ConfigMap"),
	corev1.SchemeGroupVersion.WithKind("Pod"),
	corev1.SchemeGroupVersion.WithKind("Secret"),
}

// FuzzObjectSerializer decodes an object (a watch event's) with the
// in-place decoder, stripping or not, with a Stored holding prev (the
// stock decode of the second input) or none, and compares it with the
// stock protobuf decoder's object. Then it overwrites the input and the
// scratch buffers and expects the object unchanged: nothing of it shares
// their bytes.
func FuzzObjectSerializer(f *testing.F) {
	for i, obj := range fuzzObjects() {
		data := encodeProtoTB(f, obj)
		f.Add(data, data)
		f.Add(data, []byte(nil))
		// An update of the stored version with other labels, and a cut one.
		changed := obj.DeepCopyObject()
		if m, ok := changed.(metav1.Object); ok {
			m.SetLabels(map[string]string{"changed": fmt.Sprint(i)})
			f.Add(encodeProtoTB(f, changed), data)
		}
		f.Add(data[:len(data)/2], data)
	}
	stock := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
	f.Fuzz(func(t *testing.T, data, prev []byte) {
		var stored metav1.Object
		if o, _, err := stock.Decode(prev, nil, nil); err == nil {
			stored, _ = o.(metav1.Object)
		}
		var st Stored
		for _, gvk := range fuzzKinds {
			st.Register(gvk, "", func(namespace, name string) (any, bool) {
				if stored == nil || stored.GetNamespace() != namespace || stored.GetName() != name {
					return nil, false
				}
				return stored, true
			})
		}
		for _, strip := range []bool{false, true} {
			for _, share := range []*Stored{nil, &st} {
				fast := &objectSerializer{Serializer: stock, creater: clientgoscheme.Scheme, strip: strip, stored: share}
				checkObjectDecode(t, stock, fast, data)
			}
		}
	})
}

// checkObjectDecode compares fast's decode of data with stock's.
func checkObjectDecode(t *testing.T, stock runtime.Decoder, fast *objectSerializer, data []byte) {
	t.Helper()
	in := bytes.Clone(data)
	want, wantGVK, wantErr := stock.Decode(bytes.Clone(data), nil, nil)
	got, gotGVK, gotErr := fast.Decode(in, nil, nil)
	switch {
	case wantErr != nil && gotErr != nil:
		if wantErr.Error() != gotErr.Error() {
			t.Fatalf("strip=%v shared=%v: errors differ:\nstock %v\nours  %v", fast.strip, fast.stored != nil, wantErr, gotErr)
		}
		return
	case wantErr != nil:
		// Allowed only when the failure lies in the managedFields skipped.
		keep := &objectSerializer{Serializer: fast.Serializer, creater: fast.creater, stored: fast.stored}
		if _, _, err := keep.Decode(bytes.Clone(data), nil, nil); !fast.strip || err == nil {
			t.Fatalf("strip=%v shared=%v: stock fails (%v), ours decodes %#v", fast.strip, fast.stored != nil, wantErr, got)
		}
		return
	case gotErr != nil:
		t.Fatalf("strip=%v shared=%v: stock decodes, ours fails: %v", fast.strip, fast.stored != nil, gotErr)
	}
	want = withoutMeta(want, fast.strip)
	if !reflect.DeepEqual(want, got) || !reflect.DeepEqual(wantGVK, gotGVK) {
		t.Fatalf("strip=%v shared=%v: objects differ:\nstock %#v %v\nours  %#v %v", fast.strip, fast.stored != nil, want, wantGVK, got, gotGVK)
	}
	for i := range in {
		in[i] = 0xff
	}
	buf := scratchPool.Get().(*[]byte)
	for i := range *buf {
		(*buf)[i] = 0xff
	}
	scratchPool.Put(buf)
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("strip=%v shared=%v: the object changed with the input's bytes:\nstock %#v\nours  %#v", fast.strip, fast.stored != nil, want, got)
	}
}

// fuzzLists are the list kinds FuzzListDecoder decodes as, by the first
// input.
var fuzzLists = []schema.GroupVersionKind{
	corev1.SchemeGroupVersion.WithKind("PodList"),
	corev1.SchemeGroupVersion.WithKind("ConfigMapList"),
	corev1.SchemeGroupVersion.WithKind("SecretList"),
}

// FuzzListDecoder decodes a LIST response body as one of fuzzLists with
// ListDecoder, stripping or not, and compares the list with the one
// client-go's decoder (the codec factory's universal deserializer, as a
// REST client's Into does) makes: protobuf item by item, anything else
// (JSON) whole through the fallback. A protobuf body whose envelope names
// another list kind fails in ListDecoder (the stock decoder returns the
// other kind's list, which a caller that asked for this kind cannot use);
// a JSON one is the fallback's, whatever it returns.
func FuzzListDecoder(f *testing.F) {
	pods := podList(3)
	pods.Items = append(pods.Items, *fuzzPod(2), *fuzzPod(3))
	pods.Items[3].TypeMeta, pods.Items[4].TypeMeta = metav1.TypeMeta{}, metav1.TypeMeta{}
	cms := fuzzedConfigMaps(8)
	secrets := &corev1.SecretList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "SecretList"}, ListMeta: metav1.ListMeta{ResourceVersion: "9"}}
	secrets.Items = append(secrets.Items, *fuzzObjects()[6].(*corev1.Secret), *testObjects()[2].(*corev1.Secret))
	for i, list := range []runtime.Object{pods, cms, secrets} {
		data := encodeProtoTB(f, list)
		f.Add(uint8(i), data)
		f.Add(uint8(i), data[:len(data)-3])
		js, err := json.Marshal(withoutFields(list))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), js)
	}
	f.Add(uint8(0), encodeProtoTB(f, &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}))
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		if rawFields(data) > 1 {
			t.Skip("two raw fields: the stock decoder keeps the last, ours refuses; no API server sends it")
		}
		gvk := fuzzLists[int(kind)%len(fuzzLists)]
		newList := func() (runtime.Object, error) { return clientgoscheme.Scheme.New(gvk) }
		into, _ := newList()
		want, _, wantErr := codecs.UniversalDeserializer().Decode(bytes.Clone(data), nil, into)
		if wantErr == nil && reflect.TypeOf(want) != reflect.TypeOf(into) && bytes.HasPrefix(data, protobufMagic) {
			wantErr = fmt.Errorf("the stock decoder made a %T", want)
		}
		for _, strip := range []bool{false, true} {
			d := NewListDecoder(clientgoscheme.Scheme, gvk, strip, codecs.UniversalDeserializer())
			got, gotErr := d.decode(bytes.NewReader(data), newList)
			switch {
			case wantErr != nil && gotErr != nil:
				continue
			case wantErr != nil:
				keep := NewListDecoder(clientgoscheme.Scheme, gvk, false, codecs.UniversalDeserializer())
				if _, err := keep.decode(bytes.NewReader(data), newList); !strip || err == nil {
					t.Fatalf("%s strip=%v: stock fails (%v), ours decodes %#v", gvk.Kind, strip, wantErr, got)
				}
				continue
			case gotErr != nil:
				t.Fatalf("%s strip=%v: stock decodes, ours fails: %v", gvk.Kind, strip, gotErr)
			}
			compareLists(t, gvk, strip, want, got)
		}
	})
}

// compareLists compares a ListDecoder's list with the stock one.
func compareLists(t *testing.T, gvk schema.GroupVersionKind, strip bool, want, got runtime.Object) {
	t.Helper()
	wantItems, err := meta.ExtractList(want)
	if err != nil {
		t.Fatal(err)
	}
	gotItems, err := meta.ExtractList(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(wantItems) != len(gotItems) {
		t.Fatalf("%s strip=%v: %d items, stock %d", gvk.Kind, strip, len(gotItems), len(wantItems))
	}
	wm, _ := meta.ListAccessor(want)
	gm, _ := meta.ListAccessor(got)
	if wm.GetResourceVersion() != gm.GetResourceVersion() || wm.GetContinue() != gm.GetContinue() ||
		!reflect.DeepEqual(wm.GetRemainingItemCount(), gm.GetRemainingItemCount()) || wm.GetSelfLink() != gm.GetSelfLink() {
		t.Fatalf("%s strip=%v: list metadata differs:\nstock %#v\nours  %#v", gvk.Kind, strip, wm, gm)
	}
	// The protobuf path leaves managedFields to the cache's transform
	// when the body was JSON (the fallback decodes whole): strip both.
	for i := range wantItems {
		w := withoutMeta(wantItems[i].DeepCopyObject(), strip)
		g := withoutMeta(gotItems[i].DeepCopyObject(), strip)
		if !reflect.DeepEqual(w, g) {
			t.Fatalf("%s strip=%v item %d differs:\nstock %#v\nours  %#v", gvk.Kind, strip, i, w, g)
		}
	}
}

// FuzzWatchStream reads a watch response body with the wrapped
// serializers (NewWatchSerializer, stripping or not, with a Stored of the
// stream's own earlier objects) and with client-go's stock ones, both
// through client-go's watch decoder, and compares event by event: types,
// objects (minus managedFields where stripped) and errors. The body is
// protobuf frames, or a JSON stream (which the wrapped serializer leaves
// to the stock JSON decoder). It then reads the body through Events,
// which picks the decoder by the first byte, and expects the same events.
func FuzzWatchStream(f *testing.F) {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	protoInfo, _ := runtime.SerializerInfoForMediaType(codecs.WithoutConversion().SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	jsonInfo, _ := runtime.SerializerInfoForMediaType(codecs.WithoutConversion().SupportedMediaTypes(), runtime.ContentTypeJSON)
	types := []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error}
	var protoStream, jsonStream bytes.Buffer
	pw := protoInfo.StreamSerializer.Framer.NewFrameWriter(&protoStream)
	jw := jsonInfo.StreamSerializer.Framer.NewFrameWriter(&jsonStream)
	raw := protobuf.NewRawSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
	objs := fuzzObjects()
	objs = append(objs, objs[4].DeepCopyObject()) // the Pod again: its stored version's maps
	for i, obj := range objs {
		var frame bytes.Buffer
		ev := &metav1.WatchEvent{Type: string(types[i%len(types)]), Object: runtime.RawExtension{Raw: encodeProtoTB(f, obj)}}
		if obj.GetObjectKind().GroupVersionKind().Kind == "Status" {
			ev.Type = string(watch.Error)
		}
		if err := raw.Encode(ev, &frame); err != nil {
			f.Fatal(err)
		}
		_, _ = pw.Write(frame.Bytes())
		js, err := json.Marshal(map[string]any{"type": ev.Type, "object": obj})
		if err != nil {
			f.Fatal(err)
		}
		_, _ = jw.Write(js)
	}
	f.Add(protoStream.Bytes(), true)
	f.Add(protoStream.Bytes(), false)
	f.Add(jsonStream.Bytes(), true)
	f.Add(protoStream.Bytes()[:protoStream.Len()-7], true)
	f.Fuzz(func(t *testing.T, stream []byte, strip bool) {
		if hugeFrame(stream) {
			t.Skip("a frame that declares more than 1 MiB: both framers allocate it whole, which stalls the fuzzer")
		}
		stored := map[string]metav1.Object{}
		var st Stored
		for _, gvk := range fuzzKinds {
			st.Register(gvk, "", func(namespace, name string) (any, bool) {
				o, ok := stored[namespace+"/"+name]
				return o, ok
			})
		}
		// The JSON stream is the stock decoder's: its managedFields are
		// the cache's transform's to strip.
		norm := func(obj runtime.Object) runtime.Object {
			if obj == nil {
				return nil
			}
			return withoutMeta(obj.DeepCopyObject(), strip)
		}
		ours := NewWatchSerializer(codecs.WithoutConversion(), clientgoscheme.Scheme, strip, &st)
		mediaType := runtime.ContentTypeProtobuf
		if len(stream) > 0 && bytes.IndexByte([]byte("{ \t\r\n"), stream[0]) >= 0 {
			mediaType = runtime.ContentTypeJSON
		}
		decoder := func(ns runtime.NegotiatedSerializer) *restclientwatch.Decoder {
			info, _ := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), mediaType)
			return restclientwatch.NewDecoder(
				streaming.NewDecoder(info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(stream))), info.StreamSerializer.Serializer),
				ns.DecoderToVersion(info.Serializer, nil))
		}
		stockDec, oursDec := decoder(codecs.WithoutConversion()), decoder(ours)
		// keptFails reports whether ours, keeping managedFields, fails at
		// event i of the stream.
		keptFails := func(i int) bool {
			dec := decoder(NewWatchSerializer(codecs.WithoutConversion(), clientgoscheme.Scheme, false, nil))
			defer dec.Close()
			for range i {
				if _, _, err := dec.Decode(); err != nil {
					return false
				}
			}
			_, _, err := dec.Decode()
			return err != nil
		}
		defer stockDec.Close()
		defer oursDec.Close()
		var want []watch.Event
		var wantErr error
		for range 64 {
			typ, obj, err := stockDec.Decode()
			gotTyp, got, gotErr := oursDec.Decode()
			if err != nil && gotErr == nil && strip && keptFails(len(want)) {
				// The stock decoder refused what stripping skips without
				// decoding (a malformed managedFields): so does ours when it
				// keeps them.
				return
			}
			if err != nil || gotErr != nil {
				if err == nil || gotErr == nil || err.Error() != gotErr.Error() {
					t.Fatalf("event %d: errors differ:\nstock %v\nours  %v (%#v)", len(want), err, gotErr, got)
				}
				wantErr = err
				break
			}
			if m, ok := got.(metav1.Object); ok && strip && mediaType == runtime.ContentTypeProtobuf && m.GetManagedFields() != nil {
				t.Fatalf("event %d: managedFields not stripped: %#v", len(want), got)
			}
			obj = norm(obj)
			if typ != gotTyp || !reflect.DeepEqual(obj, norm(got)) {
				t.Fatalf("event %d differs:\nstock %s %#v\nours  %s %#v", len(want), typ, obj, gotTyp, got)
			}
			if m, ok := got.(metav1.Object); ok {
				stored[m.GetNamespace()+"/"+m.GetName()] = m // as the cache stores it
			}
			want = append(want, watch.Event{Type: typ, Object: obj})
		}

		// Events, on fresh stores so that it shares as the decoder did.
		clear(stored)
		ours = NewWatchSerializer(codecs.WithoutConversion(), clientgoscheme.Scheme, strip, &st)
		e := NewEvents(io.NopCloser(bytes.NewReader(stream)), ours)
		defer e.Stop()
		for i := range want {
			ev, ok := e.Next()
			if !ok || ev.Type != want[i].Type || !reflect.DeepEqual(norm(ev.Object), want[i].Object) {
				t.Fatalf("Events: event %d differs:\nstock %s %#v\nours  %v %s %#v", i, want[i].Type, want[i].Object, ok, ev.Type, ev.Object)
			}
			if m, ok := ev.Object.(metav1.Object); ok {
				stored[m.GetNamespace()+"/"+m.GetName()] = m
			}
		}
		if len(want) == 64 {
			return
		}
		ev, ok := e.Next()
		_, failure := decodeFailure(wantErr)
		switch {
		case wantErr == nil || errors.Is(wantErr, io.EOF):
		case ok != failure:
			t.Fatalf("Events after %d events: %v %s %#v; the decoder's error: %v", len(want), ok, ev.Type, ev.Object, wantErr)
		case ok && ev.Type != watch.Error:
			t.Fatalf("Events after %d events: a %s event, want an Error for %v", len(want), ev.Type, wantErr)
		}
		if _, ok := e.Next(); ok {
			t.Fatal("Events goes on after the end")
		}
	})
}

// hugeFrame reports whether a protobuf watch stream (4-byte big-endian
// lengths before each frame) declares a frame larger than 1 MiB.
func hugeFrame(stream []byte) bool {
	for len(stream) >= 4 {
		n := binary.BigEndian.Uint32(stream)
		if n > 1<<20 {
			return true
		}
		stream = stream[min(len(stream), 4+int(n)):]
	}
	return false
}

// rawFields counts the raw fields (2) of a protobuf Unknown envelope, as
// far as it parses.
func rawFields(data []byte) int {
	if !bytes.HasPrefix(data, protobufMagic) {
		return 0
	}
	n := 0
	_ = eachRaw(data[len(protobufMagic):], func(num uint64, _ []byte) error {
		if num == 2 {
			n++
		}
		return nil
	})
	return n
}
