package cache

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
)

// TestCopyConfigMapEqualsDeepCopy proves the fast copy equal to the
// generated DeepCopy on fuzzed ConfigMaps (nil, empty and full maps and
// slices), whatever the destination held, and that the copy shares no
// memory with the source: scribbling over every map, slice and pointer
// of the copy leaves the source as it was.
func TestCopyConfigMapEqualsDeepCopy(t *testing.T) {
	f := fuzzer.FuzzerFor(func(runtimeserializer.CodecFactory) []any { return nil }, rand.NewSource(21), runtimeserializer.CodecFactory{}).
		NilChance(0.25).NumElements(0, 4)
	for i := range 3000 {
		var src, out corev1.ConfigMap
		f.Fill(&src)
		f.Fill(&out)
		if i%7 == 0 { // empty, not nil
			src.Labels, src.Data = map[string]string{}, map[string]string{}
		}
		want := src.DeepCopy()

		require.True(t, deepCopyInto(&out, &src))
		require.True(t, reflect.DeepEqual(want, &out), "copy %d differs:\nwant %#v\ngot  %#v", i, want, &out)

		scribble(reflect.ValueOf(&out).Elem())
		require.True(t, reflect.DeepEqual(want, &src), "copy %d shares memory with its source", i)
	}
}

func TestDeepCopyIntoUnknownType(t *testing.T) {
	var out corev1.Secret
	require.False(t, deepCopyInto(&out, &corev1.Secret{}))
}

// scribble overwrites every value reachable from v through maps, slices
// and pointers in exported fields, and adds a key to every map.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				scribble(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			scribble(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			scribble(e)
			v.SetMapIndex(k, e)
		}
		k := reflect.New(v.Type().Key()).Elem()
		scribble(k)
		v.SetMapIndex(k, reflect.New(v.Type().Elem()).Elem())
	case reflect.String:
		if v.CanSet() {
			v.SetString(v.String() + "~")
		}
	case reflect.Uint8:
		if v.CanSet() {
			v.SetUint(v.Uint() ^ 0xff)
		}
	case reflect.Bool:
		if v.CanSet() {
			v.SetBool(!v.Bool())
		}
	case reflect.Int64, reflect.Int32, reflect.Int:
		if v.CanSet() {
			v.SetInt(v.Int() + 1)
		}
	}
}
