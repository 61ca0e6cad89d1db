package client

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client/internal/patch"
)

// Apply is the server-side apply patch type for Patch: the object (best an
// *unstructured.Unstructured holding only the fields you own) is sent as
// is. Prefer the Client.Apply method with an apply configuration.
var Apply Patch = applyPatch{}

// Merge is a JSON merge patch (RFC 7386) that sends the whole object.
var Merge Patch = mergePatch{}

type applyPatch struct{}

func (applyPatch) Type() types.PatchType { return types.ApplyPatchType }
func (applyPatch) Data(obj Object) ([]byte, error) {
	if isNil(obj) {
		return nil, fmt.Errorf("apply patch: %w", ErrNilObject)
	}
	return json.Marshal(obj)
}

type mergePatch struct{}

func (mergePatch) Type() types.PatchType { return types.MergePatchType }
func (mergePatch) Data(obj Object) ([]byte, error) {
	if isNil(obj) {
		return nil, fmt.Errorf("merge patch: %w", ErrNilObject)
	}
	return json.Marshal(obj)
}

// RawPatch returns a patch of type pt with data sent as is (for example a
// JSON patch with types.JSONPatchType).
func RawPatch(pt types.PatchType, data []byte) Patch { return rawPatch{pt: pt, data: data} }

type rawPatch struct {
	pt   types.PatchType
	data []byte
}

func (p rawPatch) Type() types.PatchType       { return p.pt }
func (p rawPatch) Data(Object) ([]byte, error) { return p.data, nil }

// MergeFromOption changes how MergeFrom and StrategicMergeFrom compute
// their patch.
type MergeFromOption interface {
	ApplyToMergeFrom(*MergeFromOptions)
}

// MergeFromOptions are the options of MergeFrom and StrategicMergeFrom.
type MergeFromOptions struct {
	// OptimisticLock puts the original's resourceVersion in the patch, so
	// the server refuses it with a 409 conflict when the object changed
	// since the original was read. False means last write wins.
	OptimisticLock bool
}

// MergeFromWithOptimisticLock makes the patch fail with a 409 conflict when
// the object changed on the server since the original was read.
type MergeFromWithOptimisticLock struct{}

// ApplyToMergeFrom sets OptimisticLock.
func (MergeFromWithOptimisticLock) ApplyToMergeFrom(o *MergeFromOptions) { o.OptimisticLock = true }

// MergeFrom returns a JSON merge patch from obj (the original, usually a
// DeepCopy taken before the changes) to the object later passed to Patch.
func MergeFrom(obj Object) Patch { return MergeFromWithOptions(obj) }

// MergeFromWithOptions is MergeFrom with options.
func MergeFromWithOptions(obj Object, opts ...MergeFromOption) Patch {
	return &mergeFromPatch{from: obj, pt: types.MergePatchType, opts: mergeOptions(opts)}
}

// StrategicMergeFrom returns a strategic merge patch from obj to the object
// later passed to Patch. Only typed built-in kinds support it; the API
// server refuses it for custom resources.
func StrategicMergeFrom(obj Object, opts ...MergeFromOption) Patch {
	return &mergeFromPatch{from: obj, pt: types.StrategicMergePatchType, opts: mergeOptions(opts)}
}

func mergeOptions(opts []MergeFromOption) MergeFromOptions {
	var o MergeFromOptions
	for _, opt := range opts {
		opt.ApplyToMergeFrom(&o)
	}
	return o
}

type mergeFromPatch struct {
	from Object
	pt   types.PatchType
	opts MergeFromOptions
}

func (p *mergeFromPatch) Type() types.PatchType { return p.pt }

func (p *mergeFromPatch) Data(obj Object) ([]byte, error) {
	return patch.Merge(p.pt, p.from, obj, p.opts.OptimisticLock, ErrNilObject)
}
