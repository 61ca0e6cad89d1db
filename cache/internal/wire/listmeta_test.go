package wire

import (
	"bytes"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// fuzzedConfigMaps returns n fuzzed ConfigMaps, some of them with the
// labels and annotations of another, some with none, empty keys or
// values, or entries too long to be remembered.
func fuzzedConfigMaps(n int) *corev1.ConfigMapList {
	f := fuzzer.FuzzerFor(func(serializer.CodecFactory) []any { return nil }, rand.NewSource(21), serializer.CodecFactory{}).
		NilChance(0.2).NumElements(0, 4)
	list := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}}
	for i := range n {
		var cm corev1.ConfigMap
		f.Fill(&cm)
		cm.TypeMeta = metav1.TypeMeta{}
		switch i % 6 {
		case 1, 2: // equal to an earlier item's
			cm.Labels = list.Items[i/2].Labels
			cm.Annotations = list.Items[i/3].Annotations
		case 3:
			cm.Labels = map[string]string{"": "", "k": ""}
			cm.Annotations = map[string]string{"long": strings.Repeat("x", maxCutRun)}
		case 4:
			cm.Labels, cm.Annotations = nil, nil
		}
		list.Items = append(list.Items, cm)
	}
	return list
}

// TestListDecoderCutMetaEqualsDecode proves the items decoded with their
// label and annotation entries cut out equal the items the protobuf
// serializer decodes (without managedFields when stripping).
func TestListDecoderCutMetaEqualsDecode(t *testing.T) {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMapList")
	newList := func() (runtime.Object, error) { return clientgoscheme.Scheme.New(gvk) }
	data := encodeList(t, fuzzedConfigMaps(600))
	wantObj, _, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
	require.NoError(t, err)
	want := wantObj.(*corev1.ConfigMapList)

	for _, strip := range []bool{false, true} {
		d := NewListDecoder(clientgoscheme.Scheme, gvk, strip, codecs.UniversalDeserializer())
		require.NotNil(t, d)
		require.True(t, d.cutMeta)
		out, err := d.decode(bytes.NewReader(data), newList)
		require.NoError(t, err)
		items, err := meta.ExtractListWithAlloc(out)
		require.NoError(t, err)
		require.Len(t, items, len(want.Items))
		for i, obj := range items {
			w := want.Items[i].DeepCopy()
			if strip {
				w.ManagedFields = nil
			}
			require.True(t, reflect.DeepEqual(w, obj), "strip=%v item %d:\nwant %#v\ngot  %#v", strip, i, w, obj)
		}
	}
}

// encodeList returns obj in protobuf, as an API server sends it.
func encodeList(tb testing.TB, obj runtime.Object) []byte {
	tb.Helper()
	var buf bytes.Buffer
	require.NoError(tb, protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme).Encode(obj, &buf))
	return buf.Bytes()
}

func mapID(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }

// TestListDecoderSharesEqualMeta: items with equal label entries get one
// map, items with other entries another, and entries too long to
// remember a map of their own.
func TestListDecoderSharesEqualMeta(t *testing.T) {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMapList")
	newList := func() (runtime.Object, error) { return clientgoscheme.Scheme.New(gvk) }
	long := strings.Repeat("v", maxCutRun)
	list := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}}
	for i := range 6 {
		list.Items = append(list.Items, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprint("cm-", i), Labels: map[string]string{"app": fmt.Sprint("a", i%2)},
			Annotations: map[string]string{"long": long},
		}})
	}
	d := NewListDecoder(clientgoscheme.Scheme, gvk, true, codecs.UniversalDeserializer())
	out, err := d.decode(bytes.NewReader(encodeList(t, list)), newList)
	require.NoError(t, err)
	items, err := meta.ExtractListWithAlloc(out)
	require.NoError(t, err)
	cm := func(i int) *corev1.ConfigMap { return items[i].(*corev1.ConfigMap) }
	assert.Equal(t, map[string]string{"app": "a1"}, cm(3).Labels)
	assert.Equal(t, mapID(cm(0).Labels), mapID(cm(2).Labels))
	assert.Equal(t, mapID(cm(1).Labels), mapID(cm(5).Labels))
	assert.NotEqual(t, mapID(cm(0).Labels), mapID(cm(1).Labels))
	assert.Equal(t, long, cm(4).Annotations["long"])
	assert.NotEqual(t, mapID(cm(0).Annotations), mapID(cm(2).Annotations))
}

// TestMetaCutterDeclines: an item with two metadata fields, or a
// malformed one, is left to the item's decoder.
func TestMetaCutterDeclines(t *testing.T) {
	var c metaCutter
	meta := []byte{fieldLabels<<3 | 2, 4, 0x0a, 0, 0x12, 0}
	item := append([]byte{0x0a, byte(len(meta))}, meta...)
	out, ok := c.cut(item)
	require.True(t, ok)
	assert.Equal(t, []byte{0x0a, 0}, out)
	assert.Equal(t, meta, c.labels)

	_, ok = c.cut(append(bytes.Clone(item), item...))
	assert.False(t, ok, "two metadata fields")
	_, ok = c.cut(item[:len(item)-1])
	assert.False(t, ok, "malformed")
}

// BenchmarkListDecode decodes a LIST of 1000 ConfigMaps of the shape
// bench/fakeapiserver serves, stripping managedFields, as the cache does.
func BenchmarkListDecode(b *testing.B) {
	for _, cut := range []bool{false, true} {
		b.Run(fmt.Sprint("cut=", cut), func(b *testing.B) {
			const n = 1000
			codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
			gvk := corev1.SchemeGroupVersion.WithKind("ConfigMapList")
			newList := func() (runtime.Object, error) { return clientgoscheme.Scheme.New(gvk) }
			list := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}}
			for i := range n {
				list.Items = append(list.Items, *benchCM(i))
			}
			data := encodeList(b, list)
			d := NewListDecoder(clientgoscheme.Scheme, gvk, true, codecs.UniversalDeserializer())
			d.cutMeta = cut
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.decode(bytes.NewReader(data), newList); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/item")
		})
	}
}

// TestItemsCap: the slice of items of a list of like-sized items is made
// once, and a small first item does not make it larger than one slot per
// minItemBytes.
func TestItemsCap(t *testing.T) {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMapList")
	newList := func() (runtime.Object, error) { return clientgoscheme.Scheme.New(gvk) }
	list := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}}
	for i := range 500 {
		list.Items = append(list.Items, *benchCM(i))
	}
	d := NewListDecoder(clientgoscheme.Scheme, gvk, true, codecs.UniversalDeserializer())
	out, err := d.decode(bytes.NewReader(encodeList(t, list)), newList)
	require.NoError(t, err)
	items := out.(*metav1.List).Items
	require.Len(t, items, 500)
	assert.LessOrEqual(t, cap(items), 505, "made once, about the right size")

	assert.Equal(t, 1000/(minItemBytes+3)+1, itemsCap(1000, 10))
	assert.Equal(t, 1000/503+1, itemsCap(1000, 500))
}
