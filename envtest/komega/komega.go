package komega

import (
	"context"

	"github.com/kubeloop/kubeloop/client"
)

// Komega turns client calls into functions to poll, controller-runtime's
// komega.Komega. New returns one; the package-level functions use a shared
// one set up by SetClient and SetContext.
type Komega interface {
	// Get returns a function that reads obj (by its current name and
	// namespace) into obj and returns the error:
	// Eventually(k.Get(&deployment)).Should(Succeed()).
	Get(client.Object) func() error
	// List returns a function that lists into list and returns the error.
	List(client.ObjectList, ...client.ListOption) func() error
	// Update returns a function that reads obj, runs f (which changes
	// obj), then updates obj and returns the error.
	Update(client.Object, func(), ...client.UpdateOption) func() error
	// UpdateStatus is Update writing the status subresource.
	UpdateStatus(client.Object, func(), ...client.SubResourceUpdateOption) func() error
	// Object returns a function that reads obj and returns it with the
	// error: Eventually(k.Object(&d)).Should(HaveField("Spec.Replicas", ...)).
	Object(client.Object) func() (client.Object, error)
	// ObjectList returns a function that lists into list and returns it
	// with the error.
	ObjectList(client.ObjectList, ...client.ListOption) func() (client.ObjectList, error)
	// WithContext returns a copy that uses ctx.
	WithContext(context.Context) Komega
}

// komega is the Komega of New.
type komega struct {
	ctx    context.Context
	client client.Client
}

var _ Komega = (*komega)(nil)

// New returns a Komega that uses c and context.Background().
func New(c client.Client) Komega {
	return &komega{ctx: context.Background(), client: c}
}

// WithContext returns a copy of k that uses ctx.
func (k *komega) WithContext(ctx context.Context) Komega {
	cp := *k
	cp.ctx = ctx
	return &cp
}

// Get returns a function that reads obj into obj.
func (k *komega) Get(obj client.Object) func() error {
	key := client.ObjectKeyFromObject(obj)
	return func() error {
		if err := k.check(); err != nil {
			return err
		}
		return k.client.Get(k.ctx, key, obj)
	}
}

// List returns a function that lists into list.
func (k *komega) List(list client.ObjectList, opts ...client.ListOption) func() error {
	return func() error {
		if err := k.check(); err != nil {
			return err
		}
		return k.client.List(k.ctx, list, opts...)
	}
}

// Update returns a function that reads obj, runs f and updates obj.
func (k *komega) Update(obj client.Object, f func(), opts ...client.UpdateOption) func() error {
	key := client.ObjectKeyFromObject(obj)
	return func() error {
		if err := k.check(); err != nil {
			return err
		}
		if err := k.client.Get(k.ctx, key, obj); err != nil {
			return err
		}
		f()
		return k.client.Update(k.ctx, obj, opts...)
	}
}

// UpdateStatus returns a function that reads obj, runs f and updates obj's
// status.
func (k *komega) UpdateStatus(obj client.Object, f func(), opts ...client.SubResourceUpdateOption) func() error {
	key := client.ObjectKeyFromObject(obj)
	return func() error {
		if err := k.check(); err != nil {
			return err
		}
		if err := k.client.Get(k.ctx, key, obj); err != nil {
			return err
		}
		f()
		return k.client.Status().Update(k.ctx, obj, opts...)
	}
}

// Object returns a function that reads obj and returns it.
func (k *komega) Object(obj client.Object) func() (client.Object, error) {
	get := k.Get(obj)
	return func() (client.Object, error) { return obj, get() }
}

// ObjectList returns a function that lists into list and returns it.
func (k *komega) ObjectList(list client.ObjectList, opts ...client.ListOption) func() (client.ObjectList, error) {
	ls := k.List(list, opts...)
	return func() (client.ObjectList, error) { return list, ls() }
}

// check reports a missing client (SetClient not called, or New(nil)).
func (k *komega) check() error {
	if k.client == nil {
		return errNoClient
	}
	return nil
}
