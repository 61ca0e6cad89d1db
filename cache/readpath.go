package cache

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// The Get path. A typed Get of a synced kind costs an atomic load and a
// short scan to find the kind's entry, the store's lookup by namespace and
// name (no key is built; see nameTable), and one reflect.Value.Set (after
// a DeepCopyObject unless the read is no-copy); GetShared skips the Set.
// On a large cache read in random order most of the time goes into CPU
// cache misses on the store's table, the name bytes and, unless the read
// is GetShared, the object itself (bench/cache BenchmarkStoreFloor), not
// into this code.

// Get fills obj with the cached object named by key: a deep copy, or with
// client.UnsafeDisableDeepCopy the cached object's fields themselves (which
// must then not be mutated). The object keeps its resourceVersion and has
// its apiVersion and kind set. A missing object is an apierrors NotFound.
func (c *InformerCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if v := reflect.ValueOf(obj); obj == nil || (v.Kind() == reflect.Pointer && v.IsNil()) {
		// A typed nil pointer would pass the type-keyed fast path below
		// and panic when filled.
		return fmt.Errorf("get %T %s: %w", obj, key, client.ErrNilObject)
	}
	e, item, err := c.lookup(ctx, key, obj)
	if err != nil {
		return err
	}
	deep := !getNoCopy(e.noCopy, opts)
	if e.key.shape == shapeTyped {
		err = fillTyped(obj, item, deep)
	} else {
		err = fill(obj, item, deep)
	}
	if err != nil {
		return e.getError(key, err)
	}
	return nil
}

// GetShared returns the cached object named by key, of obj's kind, itself:
// no copy is made, so it is shared with the cache and every other reader
// and must not be modified. obj only names the kind and is not filled; for
// a typed kind a nil pointer does (client.GetShared passes one). The object
// keeps its resourceVersion and has its apiVersion and kind set. A missing
// object is an apierrors NotFound.
func (c *InformerCache) GetShared(ctx context.Context, key client.ObjectKey, obj client.Object) (client.Object, error) {
	if obj == nil {
		return nil, fmt.Errorf("get %s: %w", key, client.ErrNilObject)
	}
	e, item, err := c.lookup(ctx, key, obj)
	if err != nil {
		return nil, err
	}
	if reflect.TypeOf(item) != reflect.TypeOf(obj) {
		return nil, e.getError(key, fmt.Errorf("cannot share cached %T as %T", item, obj))
	}
	return item.(client.Object), nil
}

// lookup returns the entry of obj's kind and the object it caches under
// key. obj only names the kind: for a typed kind it may be a nil pointer.
// It checks key as the live client does, and its errors read as the live
// client's: "get <kind> <namespace>/<name>: <cause>".
func (c *InformerCache) lookup(ctx context.Context, key client.ObjectKey, obj client.Object) (*entry, any, error) {
	e := c.readyEntry(obj)
	if e == nil {
		kindOf := obj
		if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.IsNil() {
			kindOf = reflect.New(v.Type().Elem()).Interface().(client.Object)
		}
		k, err := c.keyFor(kindOf)
		if err != nil {
			return nil, nil, fmt.Errorf("get %T %s: %w", obj, key, err)
		}
		if e, err = c.entryForRead(ctx, k); err != nil {
			return nil, nil, kinds.OpError("get", k.gvk, key.Namespace, key.Name, err)
		}
		c.rememberReady(obj, e)
	}
	if err := kinds.CheckKey("get", e.key.gvk, e.namespaced, key.Namespace, key.Name); err != nil {
		return nil, nil, err
	}
	ns := key.Namespace
	if !e.namespaced {
		ns = ""
	}
	ni, err := e.informerFor(ns)
	if err != nil {
		return nil, nil, e.getError(key, err)
	}
	item, exists := ni.Informer.Store().Get(ns, key.Name)
	if !exists {
		return nil, nil, e.getError(key, apierrors.NewNotFound(e.mapping.Resource.GroupResource(), key.Name))
	}
	return e, item, nil
}

// getNoCopy resolves the copy mode of a Get: the kind's default, or the
// options'. The common option values are recognised without allocating.
func getNoCopy(def bool, opts []client.GetOption) bool {
	if len(opts) == 0 {
		return def
	}
	if len(opts) == 1 && opts[0] == client.UnsafeDisableDeepCopy {
		return true
	}
	o := (&client.GetOptions{}).ApplyOptions(opts)
	if o.UnsafeDisableDeepCopy != nil {
		return *o.UnsafeDisableDeepCopy
	}
	return def
}

// fillTyped sets *out to the cached typed object src, or to a deep copy of
// it. The store holds the kind's Go type, so out and src must match.
func fillTyped(out client.Object, src any, deep bool) error {
	if reflect.TypeOf(out) != reflect.TypeOf(src) {
		return fmt.Errorf("cannot fill %T with cached %T", out, src)
	}
	if deep {
		o, ok := src.(runtime.Object)
		if !ok {
			return fmt.Errorf("cached %T is not a runtime.Object", src)
		}
		src = o.DeepCopyObject()
	}
	reflect.ValueOf(out).Elem().Set(reflect.ValueOf(src).Elem())
	return nil
}

// fill sets out to the cached object src, copying it when deep is true:
// any shape.
func fill(out client.Object, src any, deep bool) error {
	switch o := out.(type) {
	case *unstructured.Unstructured:
		s, ok := src.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("cached object is %T, not unstructured", src)
		}
		if deep {
			s = s.DeepCopy()
		}
		o.Object = s.Object
		return nil
	case runtime.Unstructured:
		s, ok := src.(runtime.Unstructured)
		if !ok {
			return fmt.Errorf("cached object is %T, not unstructured", src)
		}
		if deep {
			s = s.DeepCopyObject().(runtime.Unstructured)
		}
		o.SetUnstructuredContent(s.UnstructuredContent())
		return nil
	}
	return fillTyped(out, src, deep)
}

// readyEntry returns the synced entry of a typed obj from the fast path,
// or nil.
func (c *InformerCache) readyEntry(obj client.Object) *entry {
	if runState(c.state.Load()) != running {
		return nil
	}
	e, _ := c.readyByType.Load(reflect.TypeOf(obj))
	return e
}

// rememberReady records the synced entry of a typed obj for readyEntry.
func (c *InformerCache) rememberReady(obj client.Object, e *entry) {
	if e.key.shape != shapeTyped {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[e.key] == e { // not removed meanwhile
		c.readyByType.Store(reflect.TypeOf(obj), e)
	}
}

// readyTable maps the Go type of typed objects to the synced entry of their
// kind, for the start of every typed Get. A read is an atomic load and a
// scan of a short immutable snapshot (a map lookup past readyScanMax
// types); a write, once per type and cache, replaces the snapshot.
type readyTable struct {
	mu   sync.Mutex
	snap atomic.Pointer[readySnapshot]
}

type readySnapshot struct {
	types   []reflect.Type
	entries []*entry
	byType  map[reflect.Type]*entry // set past readyScanMax types
}

// readyScanMax is the number of types scanned linearly; most operators
// read fewer kinds than this.
const readyScanMax = 8

// Load returns the entry of typ.
func (t *readyTable) Load(typ reflect.Type) (*entry, bool) {
	s := t.snap.Load()
	if s == nil {
		return nil, false
	}
	if s.byType != nil {
		e, ok := s.byType[typ]
		return e, ok
	}
	for i, x := range s.types {
		if x == typ {
			return s.entries[i], true
		}
	}
	return nil, false
}

// Store sets the entry of typ.
func (t *readyTable) Store(typ reflect.Type, e *entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	next := &readySnapshot{}
	if s := t.snap.Load(); s != nil {
		for i, x := range s.types {
			if x != typ {
				next.types = append(next.types, x)
				next.entries = append(next.entries, s.entries[i])
			}
		}
	}
	next.types = append(next.types, typ)
	next.entries = append(next.entries, e)
	if len(next.types) > readyScanMax {
		next.byType = make(map[reflect.Type]*entry, len(next.types))
		for i, x := range next.types {
			next.byType[x] = next.entries[i]
		}
	}
	t.snap.Store(next)
}

// Clear forgets every type.
func (t *readyTable) Clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.snap.Store(nil)
}
