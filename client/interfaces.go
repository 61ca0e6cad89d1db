package client

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Object is a Kubernetes object: it has ObjectMeta and a kind. Every typed
// API object, *unstructured.Unstructured and *metav1.PartialObjectMetadata
// satisfy it.
type Object interface {
	metav1.Object
	runtime.Object
}

// ObjectList is a list of Objects: it has ListMeta and a kind.
type ObjectList interface {
	metav1.ListInterface
	runtime.Object
}

// ObjectKey names an object: its namespace (empty for cluster-scoped
// objects) and name.
type ObjectKey = types.NamespacedName

// ObjectKeyFromObject returns the key of obj.
func ObjectKeyFromObject(obj Object) ObjectKey {
	return ObjectKey{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// Patch is a patch that can be applied to an object: its type and the bytes
// computed for the object being patched.
type Patch interface {
	Type() types.PatchType
	Data(obj Object) ([]byte, error)
}

// Reader reads objects. The manager's client reads from the cache; the API
// reader reads from the API server.
type Reader interface {
	// Get fills obj with the object named by key. obj must be a pointer to
	// a type the scheme knows, an *unstructured.Unstructured with its
	// apiVersion and kind set, or a *metav1.PartialObjectMetadata with its
	// apiVersion and kind set.
	Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error

	// List fills list with the objects that match opts.
	List(ctx context.Context, list ObjectList, opts ...ListOption) error
}

// Writer writes objects to the API server.
type Writer interface {
	// Create saves obj; on success obj holds what the server stored.
	Create(ctx context.Context, obj Object, opts ...CreateOption) error
	// Update replaces obj; it fails with a 409 conflict when obj's
	// resourceVersion is stale.
	Update(ctx context.Context, obj Object, opts ...UpdateOption) error
	// Patch applies patch to obj; on success obj holds what the server stored.
	Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error
	// Delete deletes obj.
	Delete(ctx context.Context, obj Object, opts ...DeleteOption) error
	// DeleteAllOf deletes every object of obj's kind that matches opts.
	DeleteAllOf(ctx context.Context, obj Object, opts ...DeleteAllOfOption) error
	// Apply sends a server-side apply request for obj. FieldOwner is required.
	Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...ApplyOption) error
}

// StatusClient returns a writer for the status subresource.
type StatusClient interface {
	Status() SubResourceWriter
}

// SubResourceClientConstructor returns a client for a named subresource
// such as "status", "scale" or "eviction".
type SubResourceClientConstructor interface {
	SubResource(subResource string) SubResourceClient
}

// SubResourceReader reads a subresource.
type SubResourceReader interface {
	// Get fills subResource with the subresource of obj.
	Get(ctx context.Context, obj Object, subResource Object, opts ...SubResourceGetOption) error
}

// SubResourceWriter writes a subresource.
type SubResourceWriter interface {
	// Create creates subResource for obj (for example an Eviction for a Pod).
	Create(ctx context.Context, obj Object, subResource Object, opts ...SubResourceCreateOption) error
	// Update updates the subresource of obj from obj (or from the
	// SubResourceUpdateOptions' SubResourceBody).
	Update(ctx context.Context, obj Object, opts ...SubResourceUpdateOption) error
	// Patch patches the subresource of obj.
	Patch(ctx context.Context, obj Object, patch Patch, opts ...SubResourcePatchOption) error
	// Apply sends a server-side apply request for the subresource of the
	// object obj names: obj itself (Status().Apply with a configuration
	// whose status is set) or the SubResourceApplyOptions'
	// SubResourceBody. FieldOwner is required. The server's answer is
	// decoded into what was sent.
	Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...SubResourceApplyOption) error
}

// SubResourceClient reads and writes a subresource.
type SubResourceClient interface {
	SubResourceReader
	SubResourceWriter
}

// Client reads and writes Kubernetes objects.
type Client interface {
	Reader
	Writer
	StatusClient
	SubResourceClientConstructor

	// Scheme returns the scheme the client uses to map Go types to kinds.
	Scheme() *runtime.Scheme
	// RESTMapper returns the mapper from kinds to resources.
	RESTMapper() meta.RESTMapper
	// GroupVersionKindFor returns the kind of obj.
	GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error)
	// IsObjectNamespaced reports whether obj's kind is namespaced.
	IsObjectNamespaced(obj runtime.Object) (bool, error)
}

// IndexerFunc extracts the values of an index from an object.
type IndexerFunc func(Object) []string

// FieldIndexer adds secondary indexes that List with MatchingFields uses.
type FieldIndexer interface {
	// IndexField indexes objects of obj's kind by the values extract
	// returns, under the name field. Objects are also indexed per
	// namespace, so MatchingFields combined with InNamespace is one lookup.
	IndexField(ctx context.Context, obj Object, field string, extract IndexerFunc) error
}
