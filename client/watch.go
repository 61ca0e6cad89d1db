package client

import (
	"context"

	"k8s.io/apimachinery/pkg/watch"
)

// WithWatch is a Client that can also watch, controller-runtime's
// client.WithWatch. *fake.Client implements it, and so does the client
// NewWithWatch returns.
type WithWatch interface {
	Client
	// Watch watches the objects of obj's item kind that opts select;
	// opts.Raw.ResourceVersion says where to start (see the API server's
	// watch semantics). The caller must Stop the watch.
	Watch(ctx context.Context, obj ObjectList, opts ...ListOption) (watch.Interface, error)
}
