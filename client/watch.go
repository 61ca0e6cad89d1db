package client

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
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

// NewWithWatch returns a client like New without a cache, that can also
// Watch: typed lists deliver typed objects, unstructured lists
// *unstructured.Unstructured, metadata lists *metav1.PartialObjectMetadata.
// Options.Cache must be nil (a cache is itself the watching reader).
func NewWithWatch(cfg *rest.Config, opts Options) (WithWatch, error) {
	if opts.Cache != nil {
		return nil, errors.New("client: NewWithWatch takes no Options.Cache")
	}
	lc, err := newLive(cfg, opts)
	if err != nil {
		return nil, err
	}
	return &watchingClient{liveClient: lc}, nil
}

type watchingClient struct{ *liveClient }

var _ WithWatch = (*watchingClient)(nil)

func (c *watchingClient) Watch(ctx context.Context, list ObjectList, opts ...ListOption) (watch.Interface, error) {
	o := (&ListOptions{}).ApplyOptions(opts)
	return c.rest.Watch(ctx, list, o.Namespace, o.LabelSelector, o.AsListOptions())
}
