package fake

import (
	"reflect"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
)

// Helpers on objects and their versions that the writes, patches and
// watches share; they call nothing else of the fake.

func parseRV(rv string) (uint64, bool) {
	n, err := strconv.ParseUint(rv, 10, 64)
	return n, err == nil
}

func deepCopy(m map[string]any) map[string]any { return runtime.DeepCopyJSON(m) }

func deepCopyValue(v any) any {
	if v == nil {
		return nil
	}
	return runtime.DeepCopyJSONValue(v)
}

// builtInType returns a new value of gvk's Go type when it is a built-in
// Kubernetes type (the only kinds that accept strategic merge patches).
func (c *Client) builtInType(gvk schema.GroupVersionKind) (runtime.Object, bool) {
	obj, err := c.scheme.New(gvk)
	if err != nil {
		return nil, false
	}
	return obj, isBuiltInPkg(reflect.TypeOf(obj).Elem().PkgPath())
}

func nsOf(obj client.Object) string {
	if isNil(obj) {
		return ""
	}
	return obj.GetNamespace()
}

func orDefault(manager string) string {
	if manager == "" {
		return defaultManager
	}
	return manager
}

func nameOf(obj client.Object) string {
	if isNil(obj) {
		return ""
	}
	return obj.GetName()
}
