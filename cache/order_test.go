package cache

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestInMemoryOrder checks that a large List's objects are sorted by
// address, none lost or repeated, and that a small one is left as it is.
func TestInMemoryOrder(t *testing.T) {
	objs := func(n int) []runtime.Object {
		out := make([]runtime.Object, n)
		for i := range out {
			out[i] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", i)}}
		}
		rand.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out
	}
	addr := func(o runtime.Object) uintptr { return uintptr(unsafe.Pointer(o.(*corev1.ConfigMap))) }

	large := objs(2 * sortAbove)
	want := map[runtime.Object]bool{}
	for _, o := range large {
		want[o] = true
	}
	inMemoryOrder(large)
	require.Len(t, large, 2*sortAbove)
	for i, o := range large {
		require.True(t, want[o], "object %d is one of the listed", i)
		delete(want, o)
		if i > 0 {
			require.Greater(t, addr(o), addr(large[i-1]), "in address order at %d", i)
		}
	}
	assert.Empty(t, want, "none lost")

	small := objs(10)
	before := append([]runtime.Object(nil), small...)
	inMemoryOrder(small)
	assert.Equal(t, before, small, "below sortAbove the order stays")
}
