// Package interceptorfake has a small helper that writes through a
// client, tested with controller-runtime's fake client and interceptor
// functions (the way operators inject API errors in unit tests).
package interceptorfake

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EnsureConfigMap creates the ConfigMap namespace/name with data, or
// updates its data when it exists.
func EnsureConfigMap(ctx context.Context, c client.Client, namespace, name string, data map[string]string) error {
	cm := &corev1.ConfigMap{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: data}
		if err := c.Create(ctx, cm); err != nil {
			return fmt.Errorf("create configmap %s/%s: %w", namespace, name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("get configmap %s/%s: %w", namespace, name, err)
	}
	cm.Data = data
	if err := c.Update(ctx, cm); err != nil {
		return fmt.Errorf("update configmap %s/%s: %w", namespace, name, err)
	}
	return nil
}
