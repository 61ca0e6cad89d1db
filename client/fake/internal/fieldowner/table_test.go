package fieldowner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeloop/kubeloop/client/fake/internal/fieldowner"
)

func obj(spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "a", "uid": "u"}, "spec": spec}
}

// apply applies cfg to cur for r and, as the fake does after a
// successful write, records the write and commits the owners.
func apply(t *testing.T, tab *fieldowner.Table[string], cur map[string]any, cfg map[string]any, r fieldowner.Request) (map[string]any, error) {
	t.Helper()
	merged, commit, err := tab.Apply("a", cur, cfg, r)
	if err != nil {
		return nil, err
	}
	tab.Wrote("a", cur, merged, r.Manager)
	commit()
	return merged, nil
}

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		give    map[string]any // the spec manager "b" applies after "a" applied {x: 1, y: 2}
		force   bool
		want    map[string]any
		wantErr string
	}{
		{name: "another field", give: map[string]any{"z": int64(3)}, want: map[string]any{"x": int64(1), "y": int64(2), "z": int64(3)}},
		{name: "same value is shared", give: map[string]any{"x": int64(1)}, want: map[string]any{"x": int64(1), "y": int64(2)}},
		{name: "conflict", give: map[string]any{"x": int64(9), "y": int64(8)},
			wantErr: `Apply failed with 2 conflicts: conflict with "a": .spec.x; conflict with "a": .spec.y`},
		{name: "forced", give: map[string]any{"x": int64(9)}, force: true, want: map[string]any{"x": int64(9), "y": int64(2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tab fieldowner.Table[string]
			cur, err := apply(t, &tab, nil, obj(map[string]any{"x": int64(1), "y": int64(2)}), fieldowner.Request{Manager: "a"})
			require.NoError(t, err)
			got, err := apply(t, &tab, cur, obj(tt.give), fieldowner.Request{Manager: "b", Force: tt.force})
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.True(t, apierrors.IsConflict(err), "a 409: %v", err)
				assert.Equal(t, tt.wantErr, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got["spec"])
		})
	}
}

func TestFieldsLeftOutAreRemoved(t *testing.T) {
	var tab fieldowner.Table[string]
	cur, err := apply(t, &tab, nil, obj(map[string]any{"x": int64(1), "y": int64(2)}), fieldowner.Request{Manager: "a"})
	require.NoError(t, err)
	cur, err = apply(t, &tab, cur, obj(map[string]any{"z": int64(3)}), fieldowner.Request{Manager: "b"})
	require.NoError(t, err)
	cur, err = apply(t, &tab, cur, obj(map[string]any{"x": int64(1)}), fieldowner.Request{Manager: "a"})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"x": int64(1), "z": int64(3)}, cur["spec"], "a's y goes, b's z stays")
	assert.Equal(t, "u", cur["metadata"].(map[string]any)["uid"], "server-owned metadata is kept")
}

func TestStatusOwnersKeptApart(t *testing.T) {
	var tab fieldowner.Table[string]
	withStatus := func(spec, status map[string]any) map[string]any {
		m := obj(spec)
		m["status"] = status
		return m
	}
	main := fieldowner.Request{Manager: "a", StatusSubresource: true}
	cur, err := apply(t, &tab, nil, withStatus(map[string]any{"x": int64(1)}, map[string]any{"ignored": true}), main)
	require.NoError(t, err)
	assert.NotContains(t, cur, "status", "an apply of the object leaves the status alone")

	status := fieldowner.Request{Manager: "a", Status: true, StatusSubresource: true}
	cur, err = apply(t, &tab, cur, withStatus(map[string]any{"x": int64(2)}, map[string]any{"ready": true}), status)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"x": int64(1)}, cur["spec"], "a status apply ignores the spec")
	assert.Equal(t, map[string]any{"ready": true}, cur["status"])

	cur, err = apply(t, &tab, cur, obj(map[string]any{"x": int64(1)}), main)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"ready": true}, cur["status"], "the object's apply does not drop what a applied to the status")
}

func TestWriteTakesOwnership(t *testing.T) {
	var tab fieldowner.Table[string]
	cur, err := apply(t, &tab, nil, obj(map[string]any{"x": int64(1)}), fieldowner.Request{Manager: "a"})
	require.NoError(t, err)
	updated := obj(map[string]any{"x": int64(2)})
	tab.Wrote("a", cur, updated, "editor") // an Update by another manager
	_, err = apply(t, &tab, updated, obj(map[string]any{"x": int64(3)}), fieldowner.Request{Manager: "a"})
	assert.EqualError(t, err, `Apply failed with 1 conflict: conflict with "editor": .spec.x`)

	tab.Forget("a")
	_, err = apply(t, &tab, updated, obj(map[string]any{"x": int64(3)}), fieldowner.Request{Manager: "a"})
	assert.NoError(t, err, "a forgotten object has no owners")
}

func TestEmptyMapNamesTheMapNotItsContents(t *testing.T) {
	var tab fieldowner.Table[string]
	cur, err := apply(t, &tab, nil, obj(map[string]any{}), fieldowner.Request{Manager: "a"})
	require.NoError(t, err)
	cur, err = apply(t, &tab, cur, obj(map[string]any{"x": int64(1)}), fieldowner.Request{Manager: "a"})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"x": int64(1)}, cur["spec"], "the spec a applied as {} before is not dropped under the new field")

	cur, err = apply(t, &tab, cur, obj(map[string]any{}), fieldowner.Request{Manager: "b"})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"x": int64(1)}, cur["spec"], "b's empty spec leaves a's fields alone")
}
