package cache

import (
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/cache/internal/fieldindex"
	"github.com/kubeloop/kubeloop/cache/internal/informer"
	"github.com/kubeloop/kubeloop/cache/internal/listwatch"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// shape is the Go representation of cached objects. Each shape has its own
// informers, so typed and unstructured reads of one kind never collide.
type shape = listwatch.Shape

const (
	shapeTyped        = listwatch.Typed
	shapeUnstructured = listwatch.Unstructured
	shapeMetadata     = listwatch.Metadata
)

var shapeOf = listwatch.ShapeOf

// kindKey names one family of informers: a kind in one shape.
type kindKey struct {
	shape shape
	gvk   schema.GroupVersionKind
}

func compareKeys(a, b kindKey) int {
	return strings.Compare(a.shape.String()+kinds.String(a.gvk), b.shape.String()+kinds.String(b.gvk))
}

// entry is the informers of one kind and shape: one cluster-wide, or one
// per watched namespace.
type entry struct {
	key        kindKey
	mapping    *meta.RESTMapping
	namespaced bool
	restricted bool // namespaced and limited to the group's namespaces
	noCopy     bool // reads share memory unless the read says otherwise
	// noCopyNS is noCopy per listed namespace when one sets its own
	// (Config.UnsafeDisableDeepCopy); nil when none does.
	noCopyNS map[string]bool
	group    *informer.Group
}

// noCopyIn is noCopy for the objects of namespace ns.
func (e *entry) noCopyIn(ns string) bool {
	if e.noCopyNS == nil {
		return e.noCopy
	}
	if v, ok := e.noCopyNS[ns]; ok {
		return v
	}
	if v, ok := e.noCopyNS[AllNamespaces]; ok {
		return v
	}
	return e.noCopy
}

// newEntry builds the informers of key, of a kind mapped to mapping and
// configured by kc: one per namespace kc watches, each with the pipeline
// that b names.
func newEntry(key kindKey, mapping *meta.RESTMapping, kc kindConfig, b *pipelines, log logr.Logger) (*entry, error) {
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	log = log.WithValues("kind", kinds.String(key.gvk), "shape", key.shape.String())
	e := &entry{
		key:        key,
		mapping:    mapping,
		namespaced: namespaced,
		restricted: namespaced && kc.restrictedTo(),
		noCopy:     kc.disableDeepCopy,
		noCopyNS:   kc.noCopyByNamespace(namespaced),
		group:      informer.NewGroup(kinds.String(key.gvk), log),
	}
	example, err := listwatch.Example(key.gvk, key.shape, b.scheme)
	if err != nil {
		return nil, err
	}
	for _, nc := range kc.informers(namespaced) {
		p, err := b.pipeline(key, mapping, kc, nc, example, log)
		if err != nil {
			return nil, err
		}
		e.group.Add(nc.namespace, p)
	}
	return e, nil
}

// informerFor returns the informer holding namespace ns ("" for all).
func (e *entry) informerFor(ns string) (*informer.NS, error) {
	if !e.restricted {
		return e.group.All()[0], nil
	}
	if n, ok := e.group.For(ns); ok {
		return n, nil
	}
	if n, ok := e.group.For(AllNamespaces); ok {
		return n, nil // the informer of every namespace not listed
	}
	var watched []string
	for _, n := range e.group.All() {
		watched = append(watched, n.Namespace)
	}
	return nil, fmt.Errorf("%w: %q (watched: %s)", ErrNamespaceNotCached, ns, strings.Join(watched, ", "))
}

// informer returns what GetInformer hands out: the informer itself when
// there is one, else a fan-out over the namespaces.
func (e *entry) informer() Informer {
	if all := e.group.All(); len(all) == 1 {
		return all[0].Informer
	}
	return e.group.Multi()
}

// healthErrors returns one error per informer whose list-watch is failing.
func (e *entry) healthErrors() []error {
	var errs []error
	for _, n := range e.group.All() {
		err := n.Health.Err()
		if err == nil {
			continue
		}
		where := kinds.String(e.key.gvk)
		if e.key.shape != shapeTyped {
			where += " (" + e.key.shape.String() + ")"
		}
		if n.Namespace != "" {
			where += " in namespace " + n.Namespace
		}
		errs = append(errs, fmt.Errorf("cache: %s: %w", where, err))
	}
	return errs
}

// addFieldIndex adds the index of field to every informer of e.
func (e *entry) addFieldIndex(field string, extract client.IndexerFunc) error {
	fn := func(obj any) ([]string, error) {
		o, ok := obj.(client.Object)
		if !ok {
			return nil, fmt.Errorf("object %T has no metadata", obj)
		}
		return fieldindex.Keys(o.GetNamespace(), extract(o)), nil
	}
	return e.group.AddIndexers(toolscache.Indexers{fieldindex.Name(field): fn})
}

// getError wraps err with the kind and key of a failed Get.
func (e *entry) getError(key client.ObjectKey, err error) error {
	return kinds.OpError("get", e.key.gvk, key.Namespace, key.Name, err)
}
