// Package v1 holds the App custom resource: an image run as a Deployment
// and exposed by a Service, both owned by the App.
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of App.
var GroupVersion = schema.GroupVersion{Group: "examples.kubeloop.dev", Version: "v1"}

// AddToScheme registers App and AppList in a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &App{}, &AppList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// App runs Spec.Image as a Deployment of Spec.Replicas pods behind a Service
// on Spec.Port.
type App struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AppSpec   `json:"spec"`
	Status AppStatus `json:"status,omitempty"`
}

// AppSpec is the desired state of an App.
type AppSpec struct {
	// Image is the container image to run.
	Image string `json:"image"`
	// Replicas is the number of pods; nil means 1.
	Replicas *int32 `json:"replicas,omitempty"`
	// Port is the container and Service port; 0 means 8080.
	Port int32 `json:"port,omitempty"`
}

// AppStatus is the observed state of an App.
type AppStatus struct {
	// ObservedGeneration is the generation of the spec last reconciled.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ReadyReplicas is the Deployment's ready replica count.
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Conditions are Available and Progressing, the Kubernetes way.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AppList is a list of Apps.
type AppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []App `json:"items"`
}

// DeepCopyInto copies a into out.
func (a *App) DeepCopyInto(out *App) {
	*out = *a
	out.TypeMeta = a.TypeMeta
	a.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if a.Spec.Replicas != nil {
		r := *a.Spec.Replicas
		out.Spec.Replicas = &r
	}
	a.Status.DeepCopyInto(&out.Status)
}

// DeepCopyInto copies s into out.
func (s *AppStatus) DeepCopyInto(out *AppStatus) {
	*out = *s
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

// DeepCopy returns a deep copy of s.
func (s *AppStatus) DeepCopy() *AppStatus {
	if s == nil {
		return nil
	}
	out := new(AppStatus)
	s.DeepCopyInto(out)
	return out
}

// DeepCopy returns a deep copy of a.
func (a *App) DeepCopy() *App {
	if a == nil {
		return nil
	}
	out := new(App)
	a.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (a *App) DeepCopyObject() runtime.Object { return a.DeepCopy() }

// DeepCopyInto copies l into out.
func (l *AppList) DeepCopyInto(out *AppList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]App, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a deep copy of l.
func (l *AppList) DeepCopy() *AppList {
	if l == nil {
		return nil
	}
	out := new(AppList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *AppList) DeepCopyObject() runtime.Object { return l.DeepCopy() }
