package komega

import (
	"context"
	"errors"
	"sync"

	"github.com/kubeloop/kubeloop/client"
)

// errNoClient is what the functions return before SetClient.
var errNoClient = errors.New("komega: no client set: call komega.SetClient(c) first (or use komega.New(c))")

// shared is the state of the package-level functions, kept for
// controller-runtime's call shape.
var shared = struct {
	mu     sync.Mutex
	ctx    context.Context
	client client.Client
}{ctx: context.Background()}

// SetClient sets the client the package-level functions use.
func SetClient(c client.Client) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.client = c
}

// SetContext sets the context the package-level functions use; the
// default is context.Background().
func SetContext(ctx context.Context) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.ctx = ctx
}

// current returns a Komega with the client and context set when it is
// called.
func current() *komega {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	return &komega{ctx: shared.ctx, client: shared.client}
}

// Get returns a function that reads obj (by its current name and namespace)
// into obj and returns the error, for Eventually(komega.Get(&d)).Should(Succeed()).
func Get(obj client.Object) func() error { return current().Get(obj) }

// List returns a function that lists into list and returns the error.
func List(list client.ObjectList, opts ...client.ListOption) func() error {
	return current().List(list, opts...)
}

// Update returns a function that reads obj, runs f (which changes obj),
// then updates obj and returns the error.
func Update(obj client.Object, f func(), opts ...client.UpdateOption) func() error {
	return current().Update(obj, f, opts...)
}

// UpdateStatus returns a function that reads obj, runs f, then updates
// obj's status subresource and returns the error.
func UpdateStatus(obj client.Object, f func(), opts ...client.SubResourceUpdateOption) func() error {
	return current().UpdateStatus(obj, f, opts...)
}

// Object returns a function that reads obj and returns it with the error.
func Object(obj client.Object) func() (client.Object, error) { return current().Object(obj) }

// ObjectList returns a function that lists into list and returns it with
// the error.
func ObjectList(list client.ObjectList, opts ...client.ListOption) func() (client.ObjectList, error) {
	return current().ObjectList(list, opts...)
}
