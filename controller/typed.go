package controller

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/go-logr/logr"

	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/reconcile"
)

// TypedController is what NewTyped returns, controller-runtime's
// interface: *Controller is the TypedController of reconcile.Request.
type TypedController[request comparable] interface {
	reconcile.TypedReconciler[request]
	// Watch adds a source.
	Watch(src source.TypedSource[request]) error
	// Start runs the controller until ctx ends.
	Start(ctx context.Context) error
	// GetLogger returns the controller's logger.
	GetLogger() logr.Logger
}

var _ TypedController[reconcile.Request] = (*Controller)(nil)

// Reconcile calls the controller's Reconciler for req once, as a worker
// would (with the reconcile timeout and panic recovery), without the
// queue: the result is returned, not acted on.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ctx, _ = newReconcileContextWith(ctx, c.log, c.kind, req, c.logCtor)
	return c.reconcile(ctx, req)
}

// NewTyped is New with controller-runtime's request type parameter. With
// reconcile.Request it is New; any other request type is refused with an
// error, since kubeloop's controllers queue reconcile.Request.
func NewTyped[request comparable](name string, mgr Manager, opts TypedOptions[request]) (TypedController[request], error) {
	o, err := requestOptions(name, opts)
	if err != nil {
		return nil, err
	}
	c, err := New(name, mgr, o)
	if err != nil {
		return nil, err
	}
	return any(c).(TypedController[request]), nil
}

// NewTypedUnmanaged is NewUnmanaged with controller-runtime's request type
// parameter; any request type other than reconcile.Request is refused.
func NewTypedUnmanaged[request comparable](name string, opts TypedOptions[request]) (TypedController[request], error) {
	o, err := requestOptions(name, opts)
	if err != nil {
		return nil, err
	}
	c, err := NewUnmanaged(name, o)
	if err != nil {
		return nil, err
	}
	return any(c).(TypedController[request]), nil
}

// requestOptions returns opts as Options, or an error when request is not
// reconcile.Request.
func requestOptions[request comparable](name string, opts TypedOptions[request]) (Options, error) {
	o, ok := any(opts).(Options)
	if !ok {
		return Options{}, fmt.Errorf("controller %q: %w", name, UnsupportedRequestError(reflect.TypeFor[request]()))
	}
	return o, nil
}

// ErrUnsupportedRequest is wrapped by the error of a typed controller,
// builder or source of a request type other than reconcile.Request:
// kubeloop's controllers queue reconcile.Request only.
var ErrUnsupportedRequest = errors.New("kubeloop's controllers queue reconcile.Request only; " +
	"use reconcile.Request (TypedControllerManagedBy[reconcile.Request], or ControllerManagedBy)")

// UnsupportedRequestError returns the error for request type t, wrapping
// ErrUnsupportedRequest.
func UnsupportedRequestError(t reflect.Type) error {
	return fmt.Errorf("request type %s is not supported: %w", t, ErrUnsupportedRequest)
}
