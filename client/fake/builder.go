package fake

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
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
}

type index struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

// NewClientBuilder returns a builder for a fake client.
func NewClientBuilder() *ClientBuilder { return &ClientBuilder{} }

// WithScheme sets the scheme. Not calling it means a new scheme with every
// built-in Kubernetes type.
func (b *ClientBuilder) WithScheme(s *runtime.Scheme) *ClientBuilder {
	b.scheme = s
	return b
}

// WithRESTMapper adds a mapper that tells which kinds are namespaced, for
// example a meta.DefaultRESTMapper holding your custom resources. It is
// asked first; the default mapper, built from the scheme and knowing the
// built-in cluster-scoped kinds, answers the rest. Kinds neither knows are
// taken as namespaced when the object has a namespace and cluster-scoped
// when it has none.
func (b *ClientBuilder) WithRESTMapper(m meta.RESTMapper) *ClientBuilder {
	b.mapper = m
	return b
}

// WithObjects adds objects the client starts with. Objects without a
// resourceVersion get one.
func (b *ClientBuilder) WithObjects(objs ...client.Object) *ClientBuilder {
	b.objects = append(b.objects, objs...)
	return b
}

// WithStatusSubresource declares the kinds of objs as having a status
// subresource: Update and Patch leave their status alone, and
// Status().Update and Status().Patch change only their status. Not calling
// it means every built-in kind with a status field has one; calling it
// means exactly the kinds given have one.
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

// WithInterceptorFuncs wraps the built client with interceptor.NewClient.
func (b *ClientBuilder) WithInterceptorFuncs(f interceptor.Funcs) *ClientBuilder {
	b.interceptors = &f
	return b
}

// Build returns the client. It panics when an object or index cannot be
// added (a test setup error), naming the object.
func (b *ClientBuilder) Build() client.Client {
	c, err := b.build()
	if err != nil {
		panic(err)
	}
	if b.interceptors != nil {
		return interceptor.NewClient(c, *b.interceptors)
	}
	return c
}

// BuildClient is Build without interceptors, returning the concrete type
// and the setup error instead of panicking.
func (b *ClientBuilder) BuildClient() (*Client, error) { return b.build() }

func (b *ClientBuilder) build() (*Client, error) {
	s := b.scheme
	if s == nil {
		s = runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(s); err != nil {
			return nil, fmt.Errorf("fake: build scheme: %w", err)
		}
	}
	c := newClient(s, b.mapper)
	c.status = defaultStatusKinds(s)
	c.noGeneration = untrackedGenerationKinds(s)
	if b.statusSet {
		c.status = map[schema.GroupKind]bool{}
		for _, obj := range b.status {
			gvk, err := apiutil.GVKForObject(obj, s)
			if err != nil {
				return nil, fmt.Errorf("fake: WithStatusSubresource: %w", err)
			}
			c.status[gvk.GroupKind()] = true
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
