// Package ownerref builds a child object from a template before the owner
// is stored, as AliyunContainerService/cron-operator's unit tests do:
// SetControllerReference on an owner without a UID.
package ownerref

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// ConfigFor returns the ConfigMap that owner controls.
func ConfigFor(owner *corev1.Service, scheme *runtime.Scheme) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: owner.Name + "-config"}}
	if err := controllerutil.SetControllerReference(owner, cm, scheme); err != nil {
		return nil, err
	}
	return cm, nil
}
