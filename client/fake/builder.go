package fake

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/client/fake/internal/objmap"
	"github.com/kubeloop/kubeloop/client/fake/internal/scope"
	"github.com/kubeloop/kubeloop/client/interceptor"
)

// ClientBuilder builds a fake client. Its zero value is not usable; start
// with NewClientBuilder.
type ClientBuilder struct {
	scheme       *runtime.Scheme
	mapper       meta.RESTMapper
	objects      []client.Object
	status       []client.Object
	statusSet    bool
	indexes      []index
	interceptors *interceptor.Funcs
	keepManaged  bool
	errs         []error // found while adding, returned by build
}

type index struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

// NewClientBuilder returns a builder for a fake client.
func NewClientBuilder() *ClientBuilder { return &ClientBuilder{} }

// NewFakeClient is NewClientBuilder().WithRuntimeObjects(initObjs...).Build(),
// controller-runtime's older constructor: a client of the built-in kinds
// holding initObjs.
func NewFakeClient(initObjs ...runtime.Object) client.WithWatch {
	return NewClientBuilder().WithRuntimeObjects(initObjs...).Build()
}

// WithScheme sets the scheme. Not calling it means a new scheme with every
// built-in Kubernetes type.
func (b *ClientBuilder) WithScheme(s *runtime.Scheme) *ClientBuilder {
	b.scheme = s
	return b
}

// WithRESTMapper adds a mapper that tells which kinds are namespaced, for
// example a meta.DefaultRESTMapper holding your custom resources with
// meta.RESTScopeRoot or meta.RESTScopeNamespace. It is asked first, and
// wins over everything else the fake knows; then come the
// CustomResourceDefinitions given with WithObjects (their spec.scope), then
// the built-in kinds. A kind none of them knows (a custom resource in the
// scheme, or unstructured) is, as in controller-runtime's fake, what each
// object or key says: namespaced when it names a namespace, cluster-scoped
// when it names none.
func (b *ClientBuilder) WithRESTMapper(m meta.RESTMapper) *ClientBuilder {
	b.mapper = m
	return b
}

// WithObjects adds objects the client starts with. Objects without a
// resourceVersion get one. A namespace set on an object of a
// cluster-scoped kind is dropped, as the API server does. The
// CustomResourceDefinitions among objs (typed or unstructured) also tell
// the scope and resource name of the kinds they define.
func (b *ClientBuilder) WithObjects(objs ...client.Object) *ClientBuilder {
	b.objects = append(b.objects, objs...)
	return b
}

// WithRuntimeObjects is WithObjects for runtime.Objects, controller-runtime's
// older form: each must be a client.Object (an object with metadata) or a
// list, whose items are added. Anything else makes Build's client fail,
// naming the type.
func (b *ClientBuilder) WithRuntimeObjects(objs ...runtime.Object) *ClientBuilder {
	for _, obj := range objs {
		if o, ok := obj.(client.Object); ok {
			b.objects = append(b.objects, o)
			continue
		}
		if !meta.IsListType(obj) {
			b.errs = append(b.errs, fmt.Errorf("fake: WithRuntimeObjects: %T is neither an object with metadata nor a list", obj))
			continue
		}
		items, err := meta.ExtractList(obj)
		if err != nil {
			b.errs = append(b.errs, fmt.Errorf("fake: WithRuntimeObjects: items of %T: %w", obj, err))
			continue
		}
		b.WithRuntimeObjects(items...)
	}
	return b
}

// WithLists adds the items of lists, as WithObjects does (controller-runtime's
// WithLists).
func (b *ClientBuilder) WithLists(lists ...client.ObjectList) *ClientBuilder {
	for _, l := range lists {
		b.WithRuntimeObjects(l)
	}
	return b
}

// WithStatusSubresource declares the kinds of objs as having a status
// subresource: Update and Patch leave their status alone, and
// Status().Update and Status().Patch change only their status. Every
// built-in kind with a status field has one whether or not it is called;
// the kinds given are added to them, as controller-runtime's builder does
// (a test that declares its custom kind still updates a Job's status).
func (b *ClientBuilder) WithStatusSubresource(objs ...client.Object) *ClientBuilder {
	b.status = append(b.status, objs...)
	b.statusSet = true
	return b
}

// WithIndex adds a field index, so List with MatchingFields{field: value}
// selects the objects of obj's kind for which extract returns value.
func (b *ClientBuilder) WithIndex(obj client.Object, field string, extract client.IndexerFunc) *ClientBuilder {
	b.indexes = append(b.indexes, index{obj: obj, field: field, extract: extract})
	return b
}

// WithReturnManagedFields makes Create keep the metadata.managedFields
// the caller set, as the API server does, so reads return them
// (controller-runtime's WithReturnManagedFields). Without it Create drops
// them. Either way objects given to WithObjects keep theirs, and Update
// stores what it is given; the fake's Apply tracks field owners on its own
// and writes no managedFields (see the package doc).
func (b *ClientBuilder) WithReturnManagedFields() *ClientBuilder {
	b.keepManaged = true
	return b
}

// WithInterceptorFuncs wraps the built client with interceptor.NewClient.
func (b *ClientBuilder) WithInterceptorFuncs(f interceptor.Funcs) *ClientBuilder {
	b.interceptors = &f
	return b
}

// Build returns the client, a client.WithWatch as controller-runtime's
// Build does (wrapped with the interceptors when WithInterceptorFuncs was
// called). It never panics: when the setup is bad (an object that cannot
// be added, such as two with one name, an index added twice, a type the
// scheme does not know) every call of the returned client fails with that
// error, which names the object and says what is wrong; BuildClient
// returns it at once.
func (b *ClientBuilder) Build() client.WithWatch {
	c, err := b.build()
	if err != nil {
		return failing(b.scheme, fmt.Errorf("%w (the fake client was not built; BuildClient returns this error)", err))
	}
	if b.interceptors != nil {
		return interceptor.NewClient(c, *b.interceptors)
	}
	return c
}

// BuildClient is Build without interceptors, returning the concrete type
// and the setup error.
func (b *ClientBuilder) BuildClient() (*Client, error) { return b.build() }

// failing returns a client whose every call fails with err.
func failing(s *runtime.Scheme, err error) client.WithWatch {
	if s == nil {
		s = runtime.NewScheme()
		_ = clientgoscheme.AddToScheme(s)
	}
	return interceptor.NewClient(newClient(s, scope.New(s, nil, nil)), interceptor.Funcs{
		Get: func(context.Context, client.Client, client.ObjectKey, client.Object, ...client.GetOption) error {
			return err
		},
		List:   func(context.Context, client.Client, client.ObjectList, ...client.ListOption) error { return err },
		Create: func(context.Context, client.Client, client.Object, ...client.CreateOption) error { return err },
		Update: func(context.Context, client.Client, client.Object, ...client.UpdateOption) error { return err },
		Patch: func(context.Context, client.Client, client.Object, client.Patch, ...client.PatchOption) error {
			return err
		},
		Delete:      func(context.Context, client.Client, client.Object, ...client.DeleteOption) error { return err },
		DeleteAllOf: func(context.Context, client.Client, client.Object, ...client.DeleteAllOfOption) error { return err },
		Apply: func(context.Context, client.Client, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			return err
		},
		SubResourceGet: func(context.Context, client.Client, string, client.Object, client.Object, ...client.SubResourceGetOption) error {
			return err
		},
		SubResourceCreate: func(context.Context, client.Client, string, client.Object, client.Object, ...client.SubResourceCreateOption) error {
			return err
		},
		SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
			return err
		},
		SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			return err
		},
		SubResourceApply: func(context.Context, client.Client, string, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
			return err
		},
		Watch: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
			return nil, err
		},
	})
}

func (b *ClientBuilder) build() (*Client, error) {
	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	s := b.scheme
	if s == nil {
		s = runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(s); err != nil {
			return nil, fmt.Errorf("fake: build scheme: %w", err)
		}
	}
	crds, err := b.crdMapper(s)
	if err != nil {
		return nil, err
	}
	c := newClient(s, scope.New(s, b.mapper, crds))
	c.keepManaged = b.keepManaged
	if b.statusSet {
		for _, obj := range b.status {
			gvk, err := apiutil.GVKForObject(obj, s)
			if err != nil {
				return nil, fmt.Errorf("fake: WithStatusSubresource: %w", err)
			}
			c.kinds.AddStatus(gvk.GroupKind())
		}
	}
	for _, ix := range b.indexes {
		gvk, err := apiutil.GVKForObject(ix.obj, s)
		if err != nil {
			return nil, fmt.Errorf("fake: WithIndex %q: %w", ix.field, err)
		}
		key := indexKey{gk: gvk.GroupKind(), field: ix.field}
		if _, dup := c.indexes[key]; dup {
			return nil, fmt.Errorf("fake: WithIndex: index %q of %s added twice", ix.field, gvk.Kind)
		}
		c.indexes[key] = ix.extract
	}
	for _, obj := range b.objects {
		if err := c.add(obj); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// crdMapper maps the kinds that the CustomResourceDefinitions among the
// objects define (see scope.AddCRD); objects of other kinds are skipped.
// It returns nil when there is no definition.
func (b *ClientBuilder) crdMapper(s *runtime.Scheme) (meta.RESTMapper, error) {
	var m *meta.DefaultRESTMapper
	for _, obj := range b.objects {
		if isNil(obj) {
			continue // add reports it
		}
		gvk, err := apiutil.GVKForObject(obj, s)
		if err != nil || gvk.GroupKind() != scope.CRDGroupKind {
			continue
		}
		u, err := objmap.ToMap(obj, gvk)
		if err == nil {
			if m == nil {
				m = meta.NewDefaultRESTMapper(nil)
			}
			err = scope.AddCRD(m, u)
		}
		if err != nil {
			return nil, fmt.Errorf("fake: WithObjects: %w", opError("add", gvk, "", obj.GetName(), err))
		}
	}
	if m == nil {
		return nil, nil
	}
	return m, nil
}
