package cache

import (
	"errors"
	"fmt"
	"hash/maphash"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// objectStore is the store of one informer: its objects by namespace and
// name, with secondary indexes. It implements client-go's Indexer, with
// keys in client-go's "namespace/name" form, so it can stand where a
// client-go Indexer would; the cache's own reads go through get and
// eachIn, which take the namespace and name as they come.
//
// Why not client-go's Indexer: it keys objects by a "namespace/name"
// string built and kept for every object, and keeps the namespace index as
// a second map of those keys. Here the objects sit in one nameTable per
// namespace, so a Get builds no key and reads two small arrays (see
// nameTable), and the namespace index costs nothing: it is the
// per-namespace table itself.
//
// toolscache.NamespaceIndex is always present and answered from those
// tables; other indexes are kept as client-go keeps them, value to keys.
type objectStore struct {
	mu       sync.RWMutex
	typ      reflect.Type // the pointer type of every object, from the first stored
	elem     reflect.Type // typ's element type
	seed     maphash.Seed
	byNS     map[string]*nameTable // namespace ("" when cluster-scoped) -> objects by name
	count    int
	indexers toolscache.Indexers                          // without NamespaceIndex
	indices  map[string]map[string]map[objectKey]struct{} // index -> value -> keys
	rv       string                                       // the latest resourceVersion seen
}

// objectKey names an object in an objectStore.
type objectKey struct{ namespace, name string }

// String returns the key in client-go's form.
func (k objectKey) String() string {
	if k.namespace == "" {
		return k.name
	}
	return k.namespace + "/" + k.name
}

var _ toolscache.Indexer = (*objectStore)(nil)

// newObjectStore returns an empty store with indexers;
// toolscache.NamespaceIndex among them must be
// toolscache.MetaNamespaceIndexFunc, which the store serves itself.
func newObjectStore(indexers toolscache.Indexers) *objectStore {
	s := &objectStore{
		seed:     maphash.MakeSeed(),
		byNS:     map[string]*nameTable{},
		indexers: toolscache.Indexers{},
		indices:  map[string]map[string]map[objectKey]struct{}{},
	}
	for name, fn := range indexers {
		if name == toolscache.NamespaceIndex {
			continue
		}
		s.indexers[name] = fn
		s.indices[name] = map[string]map[objectKey]struct{}{}
	}
	return s
}

// keyOf returns the key of obj, which may be a DeletedFinalStateUnknown.
func keyOf(obj any) (objectKey, error) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		return parseKey(d.Key)
	}
	if o, ok := obj.(metav1.Object); ok {
		return objectKey{o.GetNamespace(), o.GetName()}, nil
	}
	o, err := meta.Accessor(obj)
	if err != nil {
		return objectKey{}, toolscache.KeyError{Obj: obj, Err: err}
	}
	return objectKey{o.GetNamespace(), o.GetName()}, nil
}

// parseKey parses a key in client-go's form, as
// toolscache.SplitMetaNamespaceKey does but without allocating.
func parseKey(key string) (objectKey, error) {
	ns, name, found := strings.Cut(key, "/")
	if !found {
		return objectKey{name: key}, nil
	}
	if strings.Contains(name, "/") {
		return objectKey{}, fmt.Errorf("unexpected key format: %q", key)
	}
	return objectKey{ns, name}, nil
}

// get returns the object named by namespace and name.
func (s *objectStore) get(namespace, name string) (any, bool) {
	s.mu.RLock()
	p, ok := s.byNS[namespace].get(name)
	s.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return s.object(p), true
}

// getLocked is get with s.mu held.
func (s *objectStore) getLocked(k objectKey) (any, bool) {
	p, ok := s.byNS[k.namespace].get(k.name)
	if !ok {
		return nil, false
	}
	return s.object(p), true
}

// object returns the stored object p points to, with its Go type.
func (s *objectStore) object(p unsafe.Pointer) any {
	return reflect.NewAt(s.elem, p).Interface()
}

// pointer returns the pointer the store keeps for obj: every object of a
// store is a non-nil pointer of one Go type, the first one stored.
func (s *objectStore) pointer(obj any) (unsafe.Pointer, error) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil, fmt.Errorf("cache: the store holds pointers to objects, not %T", obj)
	}
	if s.typ == nil {
		s.typ, s.elem = v.Type(), v.Type().Elem()
	} else if v.Type() != s.typ {
		return nil, fmt.Errorf("cache: the store holds %s, not %T", s.typ, obj)
	}
	return v.UnsafePointer(), nil
}

// len returns the number of objects.
func (s *objectStore) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.count
}

// each calls f for every object until f returns false. f must not call
// back into the store, nor keep the key's name, which shares a table's
// bytes.
func (s *objectStore) each(f func(key objectKey, obj any) bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for ns, objs := range s.byNS {
		if !objs.each(func(name string, p unsafe.Pointer) bool { return f(objectKey{ns, name}, s.object(p)) }) {
			return
		}
	}
}

// eachIn calls f for every object of objs, which may be nil. The caller
// holds s.mu.
func (s *objectStore) eachIn(objs *nameTable, f func(obj any)) {
	if objs != nil {
		objs.each(func(_ string, p unsafe.Pointer) bool { f(s.object(p)); return true })
	}
}

// Add stores obj.
func (s *objectStore) Add(obj any) error { return s.Update(obj) }

// Update stores obj, replacing the version stored under its key. An index
// function's error is returned after obj is stored, as client-go's
// Indexer does, and leaves that index without obj's new values.
func (s *objectStore) Update(obj any) error {
	k, err := keyOf(obj)
	if err != nil {
		return err
	}
	return s.put(k, obj)
}

// put stores obj under k.
func (s *objectStore) put(k objectKey, obj any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.putLocked(k, obj)
}

func (s *objectStore) putLocked(k objectKey, obj any) error {
	p, err := s.pointer(obj)
	if err != nil {
		return err
	}
	objs := s.byNS[k.namespace]
	if objs == nil {
		objs = newNameTable(s.seed, 1)
		s.byNS[k.namespace] = objs
	}
	oldP, existed := objs.put(k.name, p)
	s.seen(obj)
	var old any
	if existed {
		old = s.object(oldP)
	} else {
		s.count++
	}
	return s.updateIndicesLocked(k, old, obj)
}

// Delete removes obj (or the object its DeletedFinalStateUnknown names).
func (s *objectStore) Delete(obj any) error {
	k, err := keyOf(obj)
	if err != nil {
		return err
	}
	return s.deleteKey(k)
}

// deleteKey removes the object stored under k.
func (s *objectStore) deleteKey(k objectKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deleteLocked(k)
}

func (s *objectStore) deleteLocked(k objectKey) error {
	objs := s.byNS[k.namespace]
	if objs == nil {
		return nil
	}
	oldP, ok := objs.delete(k.name)
	if !ok {
		return nil
	}
	old := s.object(oldP)
	s.seen(old)
	if objs.len() == 0 {
		delete(s.byNS, k.namespace)
	}
	s.count--
	return s.updateIndicesLocked(k, old, nil)
}

// updateIndicesLocked moves k from old's index values to obj's; either
// may be nil.
func (s *objectStore) updateIndicesLocked(k objectKey, old, obj any) error {
	var errs []error
	for name, fn := range s.indexers {
		var oldValues, newValues []string
		var err error
		if old != nil {
			if oldValues, err = fn(old); err != nil {
				errs = append(errs, fmt.Errorf("index %q: %w", name, err))
			}
		}
		if obj != nil {
			if newValues, err = fn(obj); err != nil {
				errs = append(errs, fmt.Errorf("index %q: %w", name, err))
			}
		}
		if len(oldValues) == 1 && len(newValues) == 1 && oldValues[0] == newValues[0] {
			continue // the common update: nothing moves
		}
		index := s.indices[name]
		for _, v := range oldValues {
			if set := index[v]; set != nil {
				delete(set, k)
				if len(set) == 0 {
					delete(index, v)
				}
			}
		}
		for _, v := range newValues {
			indexAdd(index, v, k)
		}
	}
	return errors.Join(errs...)
}

// indexAdd files k under value v of index.
func indexAdd(index map[string]map[objectKey]struct{}, v string, k objectKey) {
	set := index[v]
	if set == nil {
		set = map[objectKey]struct{}{}
		index[v] = set
	}
	set[k] = struct{}{}
}

// List returns every object.
func (s *objectStore) List() []any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]any, 0, s.count)
	for _, objs := range s.byNS {
		s.eachIn(objs, func(obj any) { out = append(out, obj) })
	}
	return out
}

// ListKeys returns every key, in client-go's form.
func (s *objectStore) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, s.count)
	for ns, objs := range s.byNS {
		objs.each(func(name string, _ unsafe.Pointer) bool {
			out = append(out, objectKey{ns, name}.String())
			return true
		})
	}
	return out
}

// Get returns the stored version of obj.
func (s *objectStore) Get(obj any) (any, bool, error) {
	k, err := keyOf(obj)
	if err != nil {
		return nil, false, err
	}
	item, ok := s.get(k.namespace, k.name)
	return item, ok, nil
}

// GetByKey returns the object stored under key ("namespace/name" or
// "name").
func (s *objectStore) GetByKey(key string) (any, bool, error) {
	k, err := parseKey(key)
	if err != nil {
		return nil, false, err
	}
	item, ok := s.get(k.namespace, k.name)
	return item, ok, nil
}

// Replace replaces the contents of the store with list.
func (s *objectStore) Replace(list []any, resourceVersion string) error {
	keys := make([]objectKey, len(list))
	for i, obj := range list {
		k, err := keyOf(obj)
		if err != nil {
			return err
		}
		keys[i] = k
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byNS, s.count = map[string]*nameTable{}, 0
	for name := range s.indices {
		s.indices[name] = map[string]map[objectKey]struct{}{}
	}
	var errs []error
	for i, obj := range list {
		if err := s.putLocked(keys[i], obj); err != nil {
			errs = append(errs, err)
		}
	}
	s.rv = resourceVersion
	return errors.Join(errs...)
}

// seen records obj's resourceVersion as the latest. The caller holds s.mu.
func (s *objectStore) seen(obj any) {
	if o, ok := obj.(metav1.Object); ok {
		if rv := o.GetResourceVersion(); rv != "" {
			s.rv = rv
		}
	}
}

// LastStoreSyncResourceVersion returns the resourceVersion of the latest
// list, bookmark or object stored or deleted.
func (s *objectStore) LastStoreSyncResourceVersion() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rv
}

// Bookmark records rv as the latest resourceVersion.
func (s *objectStore) Bookmark(rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv = rv
}

// Resync does nothing: there is nothing queued to resync.
func (s *objectStore) Resync() error { return nil }

// Index returns the objects that share a value of index with obj.
func (s *objectStore) Index(indexName string, obj any) ([]any, error) {
	fn, err := s.indexFunc(indexName)
	if err != nil {
		return nil, err
	}
	values, err := fn(obj)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if indexName == toolscache.NamespaceIndex {
		var out []any
		for _, v := range values {
			s.eachIn(s.byNS[v], func(obj any) { out = append(out, obj) })
		}
		return out, nil
	}
	seen := map[objectKey]struct{}{}
	var out []any
	for _, v := range values {
		for k := range s.indices[indexName][v] {
			if _, dup := seen[k]; dup {
				continue
			}
			seen[k] = struct{}{}
			if obj, ok := s.getLocked(k); ok {
				out = append(out, obj)
			}
		}
	}
	return out, nil
}

// IndexKeys returns the keys of the objects whose index value is value.
func (s *objectStore) IndexKeys(indexName, value string) ([]string, error) {
	if _, err := s.indexFunc(indexName); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	if indexName == toolscache.NamespaceIndex {
		if objs := s.byNS[value]; objs != nil {
			objs.each(func(name string, _ unsafe.Pointer) bool {
				out = append(out, objectKey{value, name}.String())
				return true
			})
		}
		return out, nil
	}
	for k := range s.indices[indexName][value] {
		out = append(out, k.String())
	}
	return out, nil
}

// ListIndexFuncValues returns the values of index that some object has.
func (s *objectStore) ListIndexFuncValues(indexName string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	if indexName == toolscache.NamespaceIndex {
		for ns := range s.byNS {
			out = append(out, ns)
		}
		return out
	}
	for v := range s.indices[indexName] {
		out = append(out, v)
	}
	return out
}

// ByIndex returns the objects whose index value is value.
func (s *objectStore) ByIndex(indexName, value string) ([]any, error) {
	if _, err := s.indexFunc(indexName); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if indexName == toolscache.NamespaceIndex {
		objs := s.byNS[value]
		out := make([]any, 0, objs.len())
		s.eachIn(objs, func(obj any) { out = append(out, obj) })
		return out, nil
	}
	set := s.indices[indexName][value]
	out := make([]any, 0, len(set))
	for k := range set {
		if obj, ok := s.getLocked(k); ok {
			out = append(out, obj)
		}
	}
	return out, nil
}

// GetIndexers returns the indexes, NamespaceIndex included.
func (s *objectStore) GetIndexers() toolscache.Indexers {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(toolscache.Indexers, len(s.indexers)+1)
	for name, fn := range s.indexers {
		out[name] = fn
	}
	out[toolscache.NamespaceIndex] = toolscache.MetaNamespaceIndexFunc
	return out
}

// AddIndexers adds indexes and indexes the stored objects by them. A name
// already in use is an error.
func (s *objectStore) AddIndexers(indexers toolscache.Indexers) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var taken []string
	for name := range indexers {
		if _, ok := s.indexers[name]; ok || name == toolscache.NamespaceIndex {
			taken = append(taken, name)
		}
	}
	if len(taken) > 0 {
		return fmt.Errorf("indexer conflict: %s", strings.Join(taken, ", "))
	}
	var errs []error
	for name, fn := range indexers {
		index := map[string]map[objectKey]struct{}{}
		for _, objs := range s.byNS {
			s.eachIn(objs, func(obj any) {
				k, err := keyOf(obj) // the object's own strings, not the table's
				if err == nil {
					var values []string
					values, err = fn(obj)
					for _, v := range values {
						indexAdd(index, v, k)
					}
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("index %q: %w", name, err))
				}
			})
		}
		s.indexers[name] = fn
		s.indices[name] = index
	}
	return errors.Join(errs...)
}

// indexFunc returns the function of index name.
func (s *objectStore) indexFunc(name string) (toolscache.IndexFunc, error) {
	if name == toolscache.NamespaceIndex {
		return toolscache.MetaNamespaceIndexFunc, nil
	}
	s.mu.RLock()
	fn, ok := s.indexers[name]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("index with name %s does not exist", name)
	}
	return fn, nil
}
