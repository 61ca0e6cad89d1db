package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

func podList(n int) *corev1.PodList {
	list := &corev1.PodList{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "777", Continue: "more"},
	}
	for i := range n {
		p := testObjects()[1].DeepCopyObject().(*corev1.Pod)
		p.TypeMeta = metav1.TypeMeta{}
		p.Name = fmt.Sprint("p-", i)
		if i%3 == 0 {
			p.ManagedFields = nil
		}
		list.Items = append(list.Items, *p)
	}
	return list
}

func TestListDecoderStreamsItems(t *testing.T) {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	gvk := corev1.SchemeGroupVersion.WithKind("PodList")
	newList := func() (runtime.Object, error) { return clientgoscheme.Scheme.New(gvk) }
	src := podList(7)
	data := encodeProto(t, src)

	for _, strip := range []bool{false, true} {
		for name, wrap := range map[string]func(io.Reader) io.Reader{
			"whole":       func(r io.Reader) io.Reader { return r },
			"byte a time": iotest.OneByteReader,
		} {
			d := NewListDecoder(clientgoscheme.Scheme, gvk, strip, codecs.UniversalDeserializer())
			require.NotNil(t, d)
			out, err := d.decode(wrap(bytes.NewReader(data)), newList)
			require.NoError(t, err, name)
			lm, err := meta.ListAccessor(out)
			require.NoError(t, err)
			assert.Equal(t, "777", lm.GetResourceVersion())
			assert.Equal(t, "more", lm.GetContinue())
			items, err := meta.ExtractListWithAlloc(out)
			require.NoError(t, err)
			require.Len(t, items, 7)
			for i, obj := range items {
				want := src.Items[i].DeepCopy()
				if strip {
					want.ManagedFields = nil
				}
				assert.Equal(t, want, obj, "%s strip=%v item %d", name, strip, i)
			}
		}
	}
}

func TestListDecoderFallsBackAndFails(t *testing.T) {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	gvk := corev1.SchemeGroupVersion.WithKind("PodList")
	newList := func() (runtime.Object, error) { return clientgoscheme.Scheme.New(gvk) }
	d := NewListDecoder(clientgoscheme.Scheme, gvk, true, codecs.UniversalDeserializer())

	js, err := json.Marshal(podList(2))
	require.NoError(t, err)
	out, err := d.decode(bytes.NewReader(js), newList)
	require.NoError(t, err, "JSON goes to the stock decoder")
	require.Len(t, out.(*corev1.PodList).Items, 2)
	assert.NotEmpty(t, out.(*corev1.PodList).Items[1].ManagedFields, "the stock decoder keeps them")

	data := encodeProto(t, podList(3))
	for _, cut := range []int{5, 20, len(data) / 2, len(data) - 1} {
		_, err := d.decode(bytes.NewReader(data[:cut]), newList)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "cut at %d", cut)
	}
	other := encodeProto(t, &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}})
	_, err = d.decode(bytes.NewReader(other), newList)
	assert.ErrorContains(t, err, "the response is a v1 ConfigMapList")

	assert.Nil(t, NewListDecoder(clientgoscheme.Scheme, corev1.SchemeGroupVersion.WithKind("Pod"), true, nil), "not a list")
}
