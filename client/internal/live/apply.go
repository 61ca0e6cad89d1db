package live

import (
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/internal/kinds"
)

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
	if kinds.IsNil(obj) {
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
		return t, opError("apply", t.GVK, t.Namespace, "", kinds.ErrNameRequired)
	}
	return t, nil
}

// MetadataOfApplied reads the kind and metadata of an apply configuration
// that holds the server's answer.
func MetadataOfApplied(ac runtime.ApplyConfiguration) (*metav1.PartialObjectMetadata, error) {
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
