package controllerutil

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
)

// OperationResult says what CreateOrUpdate or CreateOrPatch did.
type OperationResult string

const (
	// OperationResultNone means nothing changed: no write was sent.
	OperationResultNone OperationResult = "unchanged"
	// OperationResultCreated means the object was created.
	OperationResultCreated OperationResult = "created"
	// OperationResultUpdated means the object (not its status) was written.
	OperationResultUpdated OperationResult = "updated"
	// OperationResultUpdatedStatus means the object and its status were
	// written.
	OperationResultUpdatedStatus OperationResult = "updatedStatus"
	// OperationResultUpdatedStatusOnly means only the status was written.
	OperationResultUpdatedStatusOnly OperationResult = "updatedStatusOnly"
)

// MutateFn sets the desired state on the object it closes over. It must
// not change the object's name or namespace.
type MutateFn func() error

func mutate(f MutateFn, key client.ObjectKey, obj client.Object) error {
	if err := f(); err != nil {
		return err
	}
	if client.ObjectKeyFromObject(obj) != key {
		return fmt.Errorf("controllerutil: MutateFn changed the name or namespace of %s", key)
	}
	return nil
}

// createIfMissing reads obj by key into obj; when it does not exist it
// applies f and creates it, and reports created.
func createIfMissing(ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object, f MutateFn) (created bool, err error) {
	err = c.Get(ctx, key, obj)
	if err == nil || !apierrors.IsNotFound(err) {
		return false, err
	}
	if err := mutate(f, key, obj); err != nil {
		return false, err
	}
	if err := c.Create(ctx, obj); err != nil {
		return false, err
	}
	return true, nil
}

func resultOf(created bool) OperationResult {
	if created {
		return OperationResultCreated
	}
	return OperationResultNone
}

// CreateOrUpdate reads obj by its key, applies f, and creates obj when it
// does not exist or updates it when f changed it. obj holds the server's
// answer afterwards.
func CreateOrUpdate(ctx context.Context, c client.Client, obj client.Object, f MutateFn) (OperationResult, error) {
	key := client.ObjectKeyFromObject(obj)
	if created, err := createIfMissing(ctx, c, key, obj, f); err != nil || created {
		return resultOf(created), err
	}
	existing := obj.DeepCopyObject()
	if err := mutate(f, key, obj); err != nil {
		return OperationResultNone, err
	}
	if equality.Semantic.DeepEqual(existing, obj) {
		return OperationResultNone, nil
	}
	if err := c.Update(ctx, obj); err != nil {
		return OperationResultNone, err
	}
	return OperationResultUpdated, nil
}

// CreateOrPatch reads obj by its key, applies f, and creates obj when it
// does not exist. Otherwise it sends a merge patch of what f changed
// outside the status, then one of what it changed in the status through
// the status subresource. obj holds the server's answer afterwards.
func CreateOrPatch(ctx context.Context, c client.Client, obj client.Object, f MutateFn) (OperationResult, error) {
	key := client.ObjectKeyFromObject(obj)
	if created, err := createIfMissing(ctx, c, key, obj, f); err != nil || created {
		return resultOf(created), err
	}
	before, err := toMap(obj)
	if err != nil {
		return OperationResultNone, err
	}
	if err := mutate(f, key, obj); err != nil {
		return OperationResultNone, err
	}
	after, err := toMap(obj)
	if err != nil {
		return OperationResultNone, err
	}
	beforeStatus, afterStatus := before["status"], after["status"]
	delete(before, "status")
	delete(after, "status")

	result := OperationResultNone
	if !reflect.DeepEqual(before, after) {
		data, err := mergePatch(before, after)
		if err != nil {
			return result, err
		}
		if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)); err != nil {
			return result, err
		}
		result = OperationResultUpdated
	}
	if afterStatus != nil && !reflect.DeepEqual(beforeStatus, afterStatus) {
		// The patch above refilled obj from the server; put the wanted
		// status back before sending it.
		if err := setStatus(obj, afterStatus); err != nil {
			return result, err
		}
		data, err := mergePatch(map[string]any{"status": beforeStatus}, map[string]any{"status": afterStatus})
		if err != nil {
			return result, err
		}
		if err := c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)); err != nil {
			return result, err
		}
		if result == OperationResultUpdated {
			result = OperationResultUpdatedStatus
		} else {
			result = OperationResultUpdatedStatusOnly
		}
	}
	return result, nil
}

func toMap(obj client.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return runtime.DeepCopyJSON(u.Object), nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("controllerutil: convert %T: %w", obj, err)
	}
	return m, nil
}

func setStatus(obj client.Object, status any) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u.Object["status"] = runtime.DeepCopyJSONValue(status)
		return nil
	}
	m, err := toMap(obj)
	if err != nil {
		return err
	}
	m["status"] = status
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, obj); err != nil {
		return fmt.Errorf("controllerutil: convert %T: %w", obj, err)
	}
	return nil
}

func mergePatch(before, after map[string]any) ([]byte, error) {
	a, err := json.Marshal(before)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(after)
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(a, b)
}
