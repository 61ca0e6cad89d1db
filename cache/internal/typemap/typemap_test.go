package typemap

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestMap(t *testing.T) {
	var tbl Map[*int]
	types := []reflect.Type{
		reflect.TypeFor[*corev1.ConfigMap](), reflect.TypeFor[*corev1.Secret](), reflect.TypeFor[*corev1.Pod](),
		reflect.TypeFor[*corev1.Service](), reflect.TypeFor[*corev1.Node](), reflect.TypeFor[*corev1.Namespace](),
		reflect.TypeFor[*corev1.ResourceQuota](), reflect.TypeFor[*corev1.Event](), reflect.TypeFor[*corev1.LimitRange](),
		reflect.TypeFor[*corev1.ServiceAccount](),
	}
	require.Greater(t, len(types), scanMax, "the map path is covered")
	entries := make([]*int, len(types))
	for i, typ := range types {
		entries[i] = new(int)
		tbl.Store(typ, entries[i])
		for j, seen := range types[:i+1] {
			got, ok := tbl.Load(seen)
			require.True(t, ok, "%v after %d stores", seen, i+1)
			require.Same(t, entries[j], got, "%v after %d stores", seen, i+1)
		}
		_, ok := tbl.Load(reflect.TypeFor[*corev1.PersistentVolume]())
		require.False(t, ok)
	}
	replaced := new(int)
	tbl.Store(types[0], replaced)
	got, _ := tbl.Load(types[0])
	assert.Same(t, replaced, got, "a second Store replaces")
	tbl.Clear()
	_, ok := tbl.Load(types[0])
	assert.False(t, ok, "cleared")
}
