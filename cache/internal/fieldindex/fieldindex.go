// Package fieldindex answers the cache's field selectors from the field
// indexes that IndexField adds to the stores: it parses a selector (exact
// matches only), resolves it against one store's indexes once per List,
// and files each value cluster-wide and per namespace.
package fieldindex

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kubeloop/kubeloop/cache/internal/store"
	"github.com/kubeloop/kubeloop/client"
)

// ErrUnsupported is cache.ErrUnsupportedSelector.
var ErrUnsupported = errors.New("cache: unsupported field selector")

// Query is a parsed field selector: exact matches only.
type Query struct {
	Namespace *string              // metadata.namespace=x
	fields    []fields.Requirement // other exact matches
}

// Parse parses a field selector: exact matches only, else an error
// wrapping ErrUnsupported.
func Parse(sel fields.Selector) (Query, error) {
	var q Query
	if sel == nil || sel.Empty() {
		return q, nil
	}
	for _, r := range sel.Requirements() {
		if r.Operator != selection.Equals && r.Operator != selection.DoubleEquals {
			return q, fmt.Errorf("%w: %q: the cache answers only exact matches (=) on indexed fields", ErrUnsupported, sel.String())
		}
		switch r.Field {
		case "metadata.namespace":
			v := r.Value
			q.Namespace = &v
		default:
			q.fields = append(q.fields, r)
		}
	}
	return q, nil
}

// Filter is a Query resolved against one store's indexes, once
// per List: the index lookup that yields the candidates, if any, and the
// checks every candidate must pass.
type Filter struct {
	index, value string // the lookup; index "" walks the namespace
	namespace    *string
	checks       []check
}

// check is one requirement a candidate must meet: an index of the
// field must file it under want, or (fn nil) its name must be want.
type check struct {
	fn   store.IndexFunc
	want string
}

// Resolve finds the index of every field requirement in st; the first
// indexed one is the lookup, in namespace ns ("" for all). A field that is
// neither indexed nor metadata.name is an error.
func (q Query) Resolve(st *store.Store, ns string) (Filter, error) {
	f := Filter{namespace: q.Namespace}
	for _, r := range q.fields {
		fn, ok := st.IndexFunc(Name(r.Field))
		switch {
		case ok && f.index == "":
			f.index, f.value = Name(r.Field), Key(ns, r.Value)
		case ok:
			f.checks = append(f.checks, check{fn: fn, want: Key("", r.Value)})
		case r.Field == "metadata.name":
			f.checks = append(f.checks, check{want: r.Value})
		default:
			return f, fmt.Errorf("%w: no index for field %q; add one with IndexField", ErrUnsupported, r.Field)
		}
	}
	return f, nil
}

// Each calls fn with every candidate of st in namespace ns ("" for all)
// until fn returns false: the lookup's objects, else the namespace's.
func (f Filter) Each(st *store.Store, ns string, fn func(client.Object) bool) {
	visit := func(obj any) bool {
		o, ok := obj.(client.Object)
		return !ok || fn(o)
	}
	if f.index != "" {
		_ = st.ByIndex(f.index, f.value, visit) // resolve found the index
		return
	}
	st.Each(ns, func(_ store.Key, obj any) bool { return visit(obj) })
}

// Collect returns the objects of the stores, in namespace ns ("" for all),
// that match q and keep, at most limit of them (0: all). Each store is
// read under its read lock; the objects are the stored ones, not copies.
func (q Query) Collect(stores []*store.Store, ns string, keep func(client.Object) bool, limit int64) ([]runtime.Object, error) {
	var out []runtime.Object
	for _, st := range stores {
		f, err := q.Resolve(st, ns)
		if err != nil {
			return nil, err
		}
		f.Each(st, ns, func(obj client.Object) bool {
			if keep(obj) && f.Matches(obj) {
				out = append(out, obj)
			}
			return limit <= 0 || int64(len(out)) < limit
		})
		if limit > 0 && int64(len(out)) >= limit {
			break
		}
	}
	return out, nil
}

// Matches checks obj against the namespace and every check.
func (f Filter) Matches(obj client.Object) bool {
	if f.namespace != nil && obj.GetNamespace() != *f.namespace {
		return false
	}
	for _, c := range f.checks {
		if c.fn == nil {
			if obj.GetName() != c.want {
				return false
			}
			continue
		}
		vals, err := c.fn(obj)
		if err != nil || !slices.Contains(vals, c.want) {
			return false
		}
	}
	return true
}

// Field index keys. Every value is stored twice: under allNamespaces for
// cluster-wide lookups and under the object's namespace, so a lookup with
// a namespace is one map access.
const allNamespaces = "__all_namespaces"

// Name returns the name of field's index in a store.
func Name(field string) string { return "field:" + field }

// Key returns the index value of value in namespace ns ("" for all).
func Key(ns, value string) string {
	if ns == "" {
		return allNamespaces + "/" + value
	}
	return ns + "/" + value
}

// Keys returns the index values of an object of namespace ns whose field
// has values.
func Keys(ns string, values []string) []string {
	n := len(values)
	if ns != "" {
		n *= 2
	}
	out := make([]string, 0, n)
	for _, v := range values {
		out = append(out, Key("", v))
		if ns != "" {
			out = append(out, Key(ns, v))
		}
	}
	return out
}

// MatchesMetadata evaluates sel on obj when sel names only
// metadata.name and metadata.namespace, and reports true otherwise.
func MatchesMetadata(sel fields.Selector, obj client.Object) bool {
	if sel == nil || sel.Empty() {
		return true
	}
	for _, r := range sel.Requirements() {
		if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
			return true
		}
	}
	return sel.Matches(fields.Set{"metadata.name": obj.GetName(), "metadata.namespace": obj.GetNamespace()})
}
