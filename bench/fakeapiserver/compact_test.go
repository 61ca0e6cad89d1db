package fakeapiserver

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompact checks that Compact keeps every frame's bytes and packs each
// kind's frames of one encoding end to end, and that the stats count the
// ConfigMaps.
func TestCompact(t *testing.T) {
	srv, err := New(Config{ConfigMaps: 30, Secrets: 2, Pods: 5})
	require.NoError(t, err)
	before := map[string][2][][]byte{}
	for name, k := range srv.kinds {
		var c [2][][]byte
		for enc := range k.added {
			for _, f := range k.added[enc] {
				c[enc] = append(c[enc], bytes.Clone(f))
			}
		}
		before[name] = c
	}
	srv.Compact()
	for name, k := range srv.kinds {
		for enc := range k.added {
			require.Len(t, k.added[enc], len(before[name][enc]), name)
			for i, f := range k.added[enc] {
				assert.Equal(t, before[name][enc][i], f, "%s frame %d", name, i)
				assert.Equal(t, len(f), cap(f), "%s frame %d", name, i)
				if i > 0 {
					prev := k.added[enc][i-1]
					assert.Equal(t, unsafe.Add(unsafe.Pointer(unsafe.SliceData(prev)), len(prev)), unsafe.Pointer(unsafe.SliceData(f)), "%s frame %d follows frame %d", name, i, i-1)
				}
			}
		}
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	resp, err := hs.Client().Get(hs.URL + "/bench/stats")
	require.NoError(t, err)
	defer resp.Body.Close()
	var st Stats
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	assert.Equal(t, 30, st.ConfigMaps)
}
