// Package patch computes the patches of client.MergeFrom and
// client.StrategicMergeFrom: the difference between an original object and
// the object later passed to Patch.
//
// Guarantees:
//   - The original and the object must be of one Go type; otherwise, or
//     when either is nil, Merge returns an error, never a wrong patch.
//   - A strategic merge patch is refused for unstructured objects, which
//     have no Go type to read merge keys from.
//   - With optimistic locking the patch carries the original's
//     resourceVersion, so the server refuses it with a conflict when the
//     object changed since.
package patch

import (
	"encoding/json"
	"fmt"
	"reflect"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/kubeloop/kubeloop/internal/kinds"
)

// Merge returns the patch of type pt (a JSON merge or a strategic merge
// patch) from from to obj; errNil is wrapped when either is nil.
func Merge(pt types.PatchType, from, obj metav1.Object, optimisticLock bool, errNil error) ([]byte, error) {
	name := "merge patch"
	if pt == types.StrategicMergePatchType {
		name = "strategic merge patch"
	}
	if kinds.IsNil(from) || kinds.IsNil(obj) {
		return nil, fmt.Errorf("%s: %w", name, errNil)
	}
	if reflect.TypeOf(from) != reflect.TypeOf(obj) {
		return nil, fmt.Errorf("%s: original is %T but the object is %T", name, from, obj)
	}
	original, err := json.Marshal(from)
	if err != nil {
		return nil, fmt.Errorf("%s: encode original: %w", name, err)
	}
	modified, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: encode object: %w", name, err)
	}
	var data []byte
	if pt == types.StrategicMergePatchType {
		if _, ok := obj.(runtime.Unstructured); ok {
			return nil, fmt.Errorf("%s: %T has no Go type to read merge keys from; use MergeFrom", name, obj)
		}
		data, err = strategicpatch.CreateTwoWayMergePatch(original, modified, obj)
	} else {
		data, err = jsonpatch.CreateMergePatch(original, modified)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !optimisticLock {
		return data, nil
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	md["resourceVersion"] = from.GetResourceVersion()
	m["metadata"] = md
	return json.Marshal(m)
}
