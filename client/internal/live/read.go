package live

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/internal/kinds"
)

var opError = kinds.OpError

// withParams adds opts (a *metav1.XxxOptions) as query parameters, with
// client-go's own parameter codec; a request it cannot encode fails in Do.
func withParams(r *rest.Request, opts runtime.Object) *rest.Request {
	return r.VersionedParams(opts, metav1.ParameterCodec)
}

// deleteBody sets opts as the JSON body of a delete request.
func deleteBody(r *rest.Request, opts *metav1.DeleteOptions) (*rest.Request, error) {
	data, err := json.Marshal(opts)
	if err != nil {
		return nil, fmt.Errorf("encode delete options: %w", err)
	}
	return r.SetHeader("Content-Type", "application/json").Body(data), nil
}

// into decodes a successful result into obj, which is cleared first so no
// stale field survives; on failure obj is left untouched.
func into(res rest.Result, obj runtime.Object) error {
	if err := res.Error(); err != nil {
		return err
	}
	reset(obj)
	return res.Into(obj)
}

// reset clears obj in place.
func reset(obj runtime.Object) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		o.Object = nil
	case *unstructured.UnstructuredList:
		o.Object, o.Items = nil, nil
	default:
		v := reflect.ValueOf(obj)
		if v.Kind() == reflect.Pointer && !v.IsNil() {
			v.Elem().Set(reflect.Zero(v.Elem().Type()))
		}
	}
}

// Get fills obj with the object named key; raw nil means no options.
func (c *Client) Get(ctx context.Context, key types.NamespacedName, obj Object, raw *metav1.GetOptions) error {
	if kinds.IsNil(obj) {
		return NilError("get", obj)
	}
	t, err := c.targetFor("get", obj, key.Namespace, key.Name)
	if err != nil {
		return err
	}
	if err := t.check("get", key.Namespace, key.Name); err != nil {
		return err
	}
	if raw == nil {
		raw = &metav1.GetOptions{}
	}
	if t.metadata {
		return opError("get", t.gvk, key.Namespace, key.Name, c.metadataGet(ctx, t, key, obj, raw))
	}
	res := withParams(t.request(t.rc.Get(), key.Namespace, key.Name), raw).Do(ctx)
	return opError("get", t.gvk, key.Namespace, key.Name, into(res, obj))
}

// List fills list with the objects in ns ("" for all) that lo selects;
// sel is the label selector lo was made from, checked with SelectorError.
func (c *Client) List(ctx context.Context, list ObjectList, ns string, sel labels.Selector, lo *metav1.ListOptions) error {
	if kinds.IsNil(list) {
		return NilError("list", list)
	}
	t, err := c.targetFor("list", list, ns, "")
	if err != nil {
		return err
	}
	if err := SelectorError(sel); err != nil {
		return opError("list", t.gvk, ns, "", fmt.Errorf("invalid label selector: %w", err))
	}
	if t.metadata {
		return opError("list", t.gvk, ns, "", c.metadataList(ctx, t, list, ns, lo))
	}
	res := withParams(t.request(t.rc.Get(), ns, ""), lo).Do(ctx)
	return opError("list", t.gvk, ns, "", into(res, list))
}

// Watch watches the objects of list's item kind in ns that lo selects.
func (c *Client) Watch(ctx context.Context, list ObjectList, ns string, sel labels.Selector, lo *metav1.ListOptions) (watch.Interface, error) {
	if kinds.IsNil(list) {
		return nil, NilError("watch", list)
	}
	t, err := c.targetFor("watch", list, ns, "")
	if err != nil {
		return nil, err
	}
	if err := SelectorError(sel); err != nil {
		return nil, opError("watch", t.gvk, ns, "", fmt.Errorf("invalid label selector: %w", err))
	}
	lo.Watch = true
	var w watch.Interface
	if t.metadata {
		w, err = c.metadataResource(t, ns).Watch(ctx, *lo)
	} else {
		w, err = withParams(t.request(t.rc.Get(), ns, ""), lo).Watch(ctx)
	}
	if err != nil {
		return nil, opError("watch", t.gvk, ns, "", err)
	}
	return w, nil
}
