// Package api is a valid package that the tool would rewrite.
package api

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Reconciler does nothing.
type Reconciler struct{}

// Reconcile returns an empty result.
func (Reconciler) Reconcile(context.Context, ctrl.Request) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}
