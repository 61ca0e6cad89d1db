package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Apply sends a server-side apply request to the subresource of the
// object obj names, with obj (or the SubResourceBody option) as the body,
// and decodes the answer into the body.
func (s *subResourceClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...SubResourceApplyOption) error {
	verb := s.verb("apply")
	at, err := ApplyTargetOf(obj)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	if s.name == "" {
		return opError(verb, at.GVK, at.Namespace, at.Name, errors.New("subresource name is empty"))
	}
	o := (&SubResourceApplyOptions{}).ApplyOpts(opts)
	o.FieldManager = orString(o.FieldManager, s.c.fieldOwner)
	if o.FieldManager == "" {
		return opError(verb, at.GVK, at.Namespace, at.Name, fmt.Errorf("a field owner is required (client.FieldOwner or Options.FieldOwner)"))
	}
	t, err := s.c.targetForGVK(at.GVK, true, false)
	if err != nil {
		return opError(verb, at.GVK, at.Namespace, at.Name, err)
	}
	if err := t.check(verb, at.Namespace, at.Name); err != nil {
		return err
	}
	body, data := obj, at.Data
	if !isNil(o.SubResourceBody) {
		body = o.SubResourceBody
		if data, err = json.Marshal(body); err != nil {
			return opError(verb, at.GVK, at.Namespace, at.Name, fmt.Errorf("encode subresource body %T: %w", body, err))
		}
	}
	ctx, done, err := fenceWrite(ctx)
	if err != nil {
		return opError(verb, at.GVK, at.Namespace, at.Name, err)
	}
	res := withParams(t.request(t.rc.Patch(types.ApplyPatchType), at.Namespace, at.Name).SubResource(s.name), o.AsPatchOptions()).
		Body(data).Do(ctx)
	if err := done(res.Error()); err != nil {
		return opError(verb, at.GVK, at.Namespace, at.Name, err)
	}
	raw, err := res.Raw()
	if err != nil {
		return opError(verb, at.GVK, at.Namespace, at.Name, err)
	}
	if err := json.Unmarshal(raw, body); err != nil {
		return opError(verb, at.GVK, at.Namespace, at.Name, fmt.Errorf("decode answer: %w", err))
	}
	return nil
}

// metadataOfApplied reads the kind and metadata of an apply configuration
// that holds the server's answer.
func metadataOfApplied(ac runtime.ApplyConfiguration) (*metav1.PartialObjectMetadata, error) {
	data, err := json.Marshal(ac)
	if err != nil {
		return nil, err
	}
	var p metav1.PartialObjectMetadata
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	if p.APIVersion == "" || p.Kind == "" || p.Name == "" {
		return nil, errors.New("no apiVersion, kind or name")
	}
	return &p, nil
}
