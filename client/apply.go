package client

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ApplyConfigurationFromUnstructured wraps u as an apply configuration for
// Client.Apply. u holds the fields the applier owns (with apiVersion, kind,
// metadata.name and, for namespaced kinds, metadata.namespace); Apply
// replaces its content with the server's answer.
func ApplyConfigurationFromUnstructured(u *unstructured.Unstructured) runtime.ApplyConfiguration {
	return &unstructuredApplyConfiguration{Unstructured: u}
}

type unstructuredApplyConfiguration struct {
	*unstructured.Unstructured
}

func (*unstructuredApplyConfiguration) IsApplyConfiguration() {}

func (u *unstructuredApplyConfiguration) MarshalJSON() ([]byte, error) {
	if u.Unstructured == nil {
		return nil, ErrNilObject
	}
	return u.Unstructured.MarshalJSON()
}

func (u *unstructuredApplyConfiguration) UnmarshalJSON(data []byte) error {
	return u.Unstructured.UnmarshalJSON(data)
}

// ApplyTarget is what an apply configuration names: its kind, namespace
// and name, read from its JSON form.
type ApplyTarget struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
	// ResourceVersion is the configuration's metadata.resourceVersion,
	// set after a successful Apply.
	ResourceVersion string
	// Data is the configuration's JSON, the body of the apply request.
	Data []byte
}

// ApplyTargetOf encodes obj and reads the kind, namespace and name it
// names. Every apply configuration generated in
// k8s.io/client-go/applyconfigurations, and ApplyConfigurationFromUnstructured,
// can be read this way.
func ApplyTargetOf(obj runtime.ApplyConfiguration) (ApplyTarget, error) {
	if isNil(obj) {
		return ApplyTarget{}, fmt.Errorf("apply: %w", ErrNilObject)
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return ApplyTarget{}, fmt.Errorf("apply %T: encode: %w", obj, err)
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name            string `json:"name"`
			Namespace       string `json:"namespace"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return ApplyTarget{}, fmt.Errorf("apply %T: decode: %w", obj, err)
	}
	if head.APIVersion == "" || head.Kind == "" {
		return ApplyTarget{}, fmt.Errorf("apply %T: apiVersion and kind are required", obj)
	}
	gv, err := schema.ParseGroupVersion(head.APIVersion)
	if err != nil {
		return ApplyTarget{}, fmt.Errorf("apply %T: %w", obj, err)
	}
	t := ApplyTarget{GVK: gv.WithKind(head.Kind), Namespace: head.Metadata.Namespace, Name: head.Metadata.Name,
		ResourceVersion: head.Metadata.ResourceVersion, Data: data}
	if t.Name == "" {
		return t, opError("apply", t.GVK, t.Namespace, "", ErrNameRequired)
	}
	return t, nil
}

// SubResourceApplyOption modifies a subresource Apply.
type SubResourceApplyOption interface {
	ApplyToSubResourceApply(*SubResourceApplyOptions)
}

// SubResourceApplyOptions are the options of a subresource Apply. A
// *SubResourceApplyOptions is itself an option that sets its non-zero
// fields, to pass a SubResourceBody.
type SubResourceApplyOptions struct {
	ApplyOptions
	// SubResourceBody, when set, is sent instead of the object and
	// receives the server's answer (an autoscaling/v1 Scale configuration
	// for "scale", for example); the object then only names the parent.
	SubResourceBody runtime.ApplyConfiguration
}

// ApplyOpts applies opts in order and returns o (controller-runtime's
// name: the embedded ApplyOptions takes the usual one).
func (o *SubResourceApplyOptions) ApplyOpts(opts []SubResourceApplyOption) *SubResourceApplyOptions {
	for _, opt := range opts {
		opt.ApplyToSubResourceApply(o)
	}
	return o
}

// ApplyToSubResourceApply sets the non-zero fields of o on other.
func (o *SubResourceApplyOptions) ApplyToSubResourceApply(other *SubResourceApplyOptions) {
	if o.DryRun != nil {
		other.DryRun = o.DryRun
	}
	if o.Force != nil {
		other.Force = o.Force
	}
	if o.FieldManager != "" {
		other.FieldManager = o.FieldManager
	}
	if o.SubResourceBody != nil {
		other.SubResourceBody = o.SubResourceBody
	}
}
