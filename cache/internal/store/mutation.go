package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
)

// MutationDetectorEnv names the environment variable that switches the
// mutation detector on for every cache of the process when set to "true";
// client-go's KUBE_CACHE_MUTATION_DETECTOR is honoured the same way.
const MutationDetectorEnv = "KUBELOOP_CACHE_MUTATION_DETECTOR"

// MutationDetectorFromEnv reports whether MutationDetectorEnv or
// KUBE_CACHE_MUTATION_DETECTOR is "true".
func MutationDetectorFromEnv() bool {
	for _, name := range []string{MutationDetectorEnv, "KUBE_CACHE_MUTATION_DETECTOR"} {
		if v, err := strconv.ParseBool(os.Getenv(name)); err == nil && v {
			return true
		}
	}
	return false
}

// The cache hands out the objects it stores without copying them: to event
// handlers, to GetShared, to no-copy reads, and the decoders share maps
// between the stored version of an object and the next (and, for Pods,
// between objects). A caller that writes into one of them corrupts the
// cache for everyone. The mutation detector keeps a deep copy of every
// object stored and compares the object with it when the object leaves
// the store (replaced or deleted) and on every Check, with
// apimachinery's semantic equality. It doubles the cache's memory and
// costs a deep copy per change: it is for tests and debugging, as
// client-go's KUBE_CACHE_MUTATION_DETECTOR is.
type detector struct {
	copies map[unsafe.Pointer]detected // the stored object -> its copy when stored
	fail   func(error)
}

type detected struct {
	key  Key
	copy any
}

// DetectMutations switches the mutation detector on: from now on, every
// object Put is copied, and an object found changed since it was Put is
// reported to fail (nil: panic, as client-go's detector does). Objects
// stored before the call are not watched. Objects must have a
// DeepCopyObject method (runtime.Object); others are not watched.
func (s *Store) DetectMutations(fail func(error)) {
	if fail == nil {
		fail = func(err error) { panic(err) }
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.detect == nil {
		s.detect = &detector{copies: map[unsafe.Pointer]detected{}}
	}
	s.detect.fail = fail
}

// CheckMutations compares every watched object with its copy, reports
// the objects that changed (each change once: the copy of a changed object
// is taken again) and returns the error it reported (nil when none changed
// or the detector is off). It holds the store's write lock meanwhile.
func (s *Store) CheckMutations() error {
	s.mu.Lock()
	d := s.detect
	if d == nil {
		s.mu.Unlock()
		return nil
	}
	var errs []string
	for p, c := range d.copies {
		if err := s.compare(p, c); err != nil {
			errs = append(errs, err.Error())
			c.copy = s.object(p).(interface{ DeepCopyObject() runtime.Object }).DeepCopyObject()
			d.copies[p] = c
		}
	}
	fail := d.fail
	s.mu.Unlock()
	if len(errs) == 0 {
		return nil
	}
	slices.Sort(errs)
	err := errors.New(strings.Join(errs, "\n"))
	fail(err)
	return err
}

// stored records obj, just stored at p under k, and checks the object it
// replaced (oldP, nil when none). The caller holds s.mu for writing.
func (d *detector) stored(s *Store, k Key, p, oldP unsafe.Pointer, obj any) {
	d.left(s, oldP)
	if c, ok := obj.(interface{ DeepCopyObject() runtime.Object }); ok {
		d.copies[p] = detected{key: k, copy: c.DeepCopyObject()}
	}
}

// left checks and forgets the object at p, which left the store (nil:
// none). The caller holds s.mu for writing.
func (d *detector) left(s *Store, p unsafe.Pointer) {
	if p == nil {
		return
	}
	c, ok := d.copies[p]
	if !ok {
		return
	}
	delete(d.copies, p)
	if err := s.compare(p, c); err != nil {
		d.fail(err)
	}
}

// compare returns an error naming c's key and the first changed field
// when the object at p differs from c's copy. The caller holds s.mu.
func (s *Store) compare(p unsafe.Pointer, c detected) error {
	obj := s.object(p)
	if equality.Semantic.DeepEqual(obj, c.copy) {
		return nil
	}
	return fmt.Errorf("cache: mutation detected: %s %s was changed while the cache held it (%s); "+
		"objects from event handlers, GetShared and reads with UnsafeDisableDeepCopy are the cache's own: DeepCopy before writing",
		s.elem.Name(), c.key, firstChange(c.copy, obj))
}

// firstChange describes the first field path where the JSON forms of a and
// b differ, as "metadata.labels.app: \"x\" -> \"y\"".
func firstChange(a, b any) string {
	var av, bv any
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil || json.Unmarshal(ja, &av) != nil || json.Unmarshal(jb, &bv) != nil {
		return "a field changed"
	}
	if path, was, now, ok := diff("", av, bv); ok {
		return fmt.Sprintf("%s: %s -> %s", path, was, now)
	}
	return "a field changed that JSON does not show"
}

func diff(path string, a, b any) (string, string, string, bool) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := make([]string, 0, len(am)+len(bm))
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			if p, w, n, ok := diff(join(path, k), am[k], bm[k]); ok {
				return p, w, n, true
			}
		}
		return "", "", "", false
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			if p, w, n, ok := diff(path+"["+strconv.Itoa(i)+"]", as[i], bs[i]); ok {
				return p, w, n, true
			}
		}
		return "", "", "", false
	}
	if reflect.DeepEqual(a, b) {
		return "", "", "", false
	}
	if path == "" {
		path = "(object)"
	}
	return path, short(a), short(b), true
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func short(v any) string {
	if v == nil {
		return "(none)"
	}
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}
