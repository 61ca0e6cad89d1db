// Package fakecluster has a cluster-scoped custom resource, ClusterWidget,
// and tests that read it through controller-runtime's fake client, with a
// RESTMapper that says it is cluster-scoped and without one.
package fakecluster

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is group version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "fleet.example.com", Version: "v1alpha1"}

	// SchemeBuilder is used to add go types to the GroupVersionKind scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types in this group-version to the given scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster

// ClusterWidget is a cluster-scoped custom resource.
type ClusterWidget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterWidgetSpec `json:"spec,omitempty"`
}

// ClusterWidgetSpec defines the desired state of ClusterWidget.
type ClusterWidgetSpec struct {
	Tier string `json:"tier,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterWidgetList contains a list of ClusterWidget.
type ClusterWidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterWidget `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterWidget{}, &ClusterWidgetList{})
}

// DeepCopyInto copies the receiver into out.
func (in *ClusterWidget) DeepCopyInto(out *ClusterWidget) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = in.Spec
}

// DeepCopy copies the receiver into a new ClusterWidget.
func (in *ClusterWidget) DeepCopy() *ClusterWidget {
	if in == nil {
		return nil
	}
	out := new(ClusterWidget)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject copies the receiver into a new runtime.Object.
func (in *ClusterWidget) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies the receiver into out.
func (in *ClusterWidgetList) DeepCopyInto(out *ClusterWidgetList) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]ClusterWidget, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy copies the receiver into a new ClusterWidgetList.
func (in *ClusterWidgetList) DeepCopy() *ClusterWidgetList {
	if in == nil {
		return nil
	}
	out := new(ClusterWidgetList)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject copies the receiver into a new runtime.Object.
func (in *ClusterWidgetList) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}
