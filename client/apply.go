package client

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client/internal/live"
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
	t, err := live.ApplyTargetOf(obj)
	return ApplyTarget(t), err
}
