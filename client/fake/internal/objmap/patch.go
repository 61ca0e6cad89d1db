package objmap

import (
	"encoding/json"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// DecodeJSON decodes an object as the API server stores it (integers as
// int64).
func DecodeJSON(data []byte) (map[string]any, error) {
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return u.Object, nil
}

// Patch returns old (a stored map, with apiVersion and kind) with the
// patch data of type pt applied; old is not changed. builtIn is a
// value of the kind's Go type when it is a built-in kind, nil otherwise:
// only built-in kinds accept strategic merge patches. Apply patches are
// not handled here.
func Patch(old map[string]any, pt types.PatchType, data []byte, builtIn runtime.Object) (map[string]any, error) {
	oldJSON, err := json.Marshal(old)
	if err != nil {
		return nil, err
	}
	var out []byte
	if pt == types.StrategicMergePatchType {
		if builtIn == nil {
			return nil, unsupportedPatch(pt)
		}
		if out, err = strategicpatch.StrategicMergePatch(oldJSON, data, builtIn); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	} else if out, err = PatchJSON(pt, oldJSON, data); err != nil {
		return nil, err
	}
	next, err := DecodeJSON(out)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return next, nil
}

// PatchJSON applies a JSON patch or a merge patch to doc.
func PatchJSON(pt types.PatchType, doc, data []byte) ([]byte, error) {
	switch pt {
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(data)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		out, err := p.Apply(doc)
		if err != nil {
			return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 422,
				Reason: metav1.StatusReasonInvalid, Message: err.Error()}}
		}
		return out, nil
	case types.MergePatchType:
		out, err := jsonpatch.MergePatch(doc, data)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return out, nil
	}
	return nil, unsupportedPatch(pt)
}

func unsupportedPatch(pt types.PatchType) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 415, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format - patch type %s is not supported for this kind", pt),
	}}
}
