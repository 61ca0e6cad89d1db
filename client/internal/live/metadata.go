package live

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
)

// The metadata backend serves *metav1.PartialObjectMetadata and its list
// through the API server's metadata-only protocol: the server sends only
// apiVersion, kind and metadata, whatever the kind.

func (c *Client) metadataResource(t *target, ns string) metadata.ResourceInterface {
	r := c.metadata.Resource(t.gvr())
	if t.namespaced && ns != "" {
		return r.Namespace(ns)
	}
	return r
}

// fillMetadata copies got into obj and restores obj's kind, which the
// server reports as PartialObjectMetadata.
func (t *target) fillMetadata(got *metav1.PartialObjectMetadata, obj Object) error {
	out, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return fmt.Errorf("%T is not a *metav1.PartialObjectMetadata", obj)
	}
	*out = *got
	out.SetGroupVersionKind(t.gvk)
	return nil
}

func (c *Client) metadataGet(ctx context.Context, t *target, key types.NamespacedName, obj Object, o *metav1.GetOptions) error {
	got, err := c.metadataResource(t, key.Namespace).Get(ctx, key.Name, *o)
	if err != nil {
		return err
	}
	return t.fillMetadata(got, obj)
}

func (c *Client) metadataList(ctx context.Context, t *target, list ObjectList, ns string, lo *metav1.ListOptions) error {
	out, ok := list.(*metav1.PartialObjectMetadataList)
	if !ok {
		return fmt.Errorf("%T is not a *metav1.PartialObjectMetadataList", list)
	}
	got, err := c.metadataResource(t, ns).List(ctx, *lo)
	if err != nil {
		return err
	}
	listGVK := out.GroupVersionKind()
	*out = *got
	out.SetGroupVersionKind(listGVK)
	for i := range out.Items {
		out.Items[i].SetGroupVersionKind(t.gvk)
	}
	return nil
}

func (c *Client) metadataPatch(ctx context.Context, t *target, obj Object, pt types.PatchType, data []byte, po *metav1.PatchOptions) error {
	got, err := c.metadataResource(t, obj.GetNamespace()).Patch(ctx, obj.GetName(), pt, data, *po)
	if err != nil {
		return err
	}
	return t.fillMetadata(got, obj)
}
