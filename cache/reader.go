package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kubeloop/kubeloop/cache/internal/informer"
	"github.com/kubeloop/kubeloop/cache/internal/store"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// List fills list with the cached objects matching opts: namespace, label
// selector and exact-match field selectors on indexed fields (and on
// metadata.name and metadata.namespace). Limit caps the result; Continue
// is not supported. Items are deep copies unless UnsafeDisableDeepCopy.
func (c *InformerCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	k, err := c.keyForList(list)
	if err != nil {
		return fmt.Errorf("list %T: %w", list, err)
	}
	var lo client.ListOptions
	lo.ApplyOptions(opts)
	fail := func(err error) error {
		return kinds.OpError("list", k.gvk, lo.Namespace, "", err)
	}
	if err := client.InvalidSelectorError(lo.LabelSelector); err != nil {
		return fail(fmt.Errorf("invalid label selector: %w", err))
	}
	if lo.Continue != "" {
		return fail(errors.New("continue tokens are not supported by the cache; list from the API server to page"))
	}
	q, err := parseFieldSelector(lo.FieldSelector)
	if err != nil {
		return fail(err)
	}
	e, err := c.entryForRead(ctx, k)
	if err != nil {
		return fail(err)
	}
	ns := lo.Namespace
	if q.namespace != nil {
		if ns != "" && ns != *q.namespace {
			return meta.SetList(list, nil) // contradictory: nothing matches
		}
		ns = *q.namespace
	}
	if !e.namespaced {
		ns = ""
	}
	infs := e.group.All()
	if ns != "" && e.restricted {
		ni, err := e.informerFor(ns)
		if err != nil {
			return fail(err)
		}
		infs = []*informer.NS{ni}
	}
	noCopy := e.noCopy
	if lo.UnsafeDisableDeepCopy != nil {
		noCopy = *lo.UnsafeDisableDeepCopy
	}
	var out []runtime.Object
	full := false
	for _, ni := range infs {
		f, err := q.resolve(ni.Informer.Store(), ns)
		if err != nil {
			return fail(err)
		}
		// Filter under the store's read lock; copy after it.
		f.each(ni.Informer.Store(), ns, func(obj client.Object) bool {
			if matchesLabels(lo.LabelSelector, obj) && f.matches(obj) {
				out = append(out, obj)
				full = lo.Limit > 0 && int64(len(out)) >= lo.Limit
			}
			return !full
		})
		if full {
			break
		}
	}
	if !noCopy {
		for i, obj := range out {
			out[i] = obj.DeepCopyObject()
		}
	}
	if err := meta.SetList(list, out); err != nil {
		return fail(err)
	}
	list.SetContinue("")
	return nil
}

// keyForList returns the kind and shape of list's items.
func (c *InformerCache) keyForList(list client.ObjectList) (kindKey, error) {
	k, err := c.keyFor(list)
	if err != nil {
		return kindKey{}, err
	}
	k.gvk.Kind = kinds.TrimList(k.gvk.Kind)
	return k, nil
}

func matchesLabels(sel labels.Selector, obj client.Object) bool {
	if sel == nil || sel.Empty() {
		return true
	}
	return sel.Matches(labels.Set(obj.GetLabels()))
}

// fieldQuery is a parsed field selector: exact matches only.
type fieldQuery struct {
	namespace *string              // metadata.namespace=x
	fields    []fields.Requirement // other exact matches
}

func parseFieldSelector(sel fields.Selector) (fieldQuery, error) {
	var q fieldQuery
	if sel == nil || sel.Empty() {
		return q, nil
	}
	for _, r := range sel.Requirements() {
		if r.Operator != selection.Equals && r.Operator != selection.DoubleEquals {
			return q, fmt.Errorf("%w: %q: the cache answers only exact matches (=) on indexed fields", ErrUnsupportedSelector, sel.String())
		}
		switch r.Field {
		case "metadata.namespace":
			v := r.Value
			q.namespace = &v
		default:
			q.fields = append(q.fields, r)
		}
	}
	return q, nil
}

// fieldFilter is a fieldQuery resolved against one store's indexes, once
// per List: the index lookup that yields the candidates, if any, and the
// checks every candidate must pass.
type fieldFilter struct {
	index, value string // the lookup; index "" walks the namespace
	namespace    *string
	checks       []fieldCheck
}

// fieldCheck is one requirement a candidate must meet: an index of the
// field must file it under want, or (fn nil) its name must be want.
type fieldCheck struct {
	fn   store.IndexFunc
	want string
}

// resolve finds the index of every field requirement in st; the first
// indexed one is the lookup, in namespace ns ("" for all). A field that is
// neither indexed nor metadata.name is an error.
func (q fieldQuery) resolve(st *store.Store, ns string) (fieldFilter, error) {
	f := fieldFilter{namespace: q.namespace}
	for _, r := range q.fields {
		fn, ok := st.IndexFunc(fieldIndexName(r.Field))
		switch {
		case ok && f.index == "":
			f.index, f.value = fieldIndexName(r.Field), indexKey(ns, r.Value)
		case ok:
			f.checks = append(f.checks, fieldCheck{fn: fn, want: indexKey("", r.Value)})
		case r.Field == "metadata.name":
			f.checks = append(f.checks, fieldCheck{want: r.Value})
		default:
			return f, fmt.Errorf("%w: no index for field %q; add one with IndexField", ErrUnsupportedSelector, r.Field)
		}
	}
	return f, nil
}

// each calls fn with every candidate of st in namespace ns ("" for all)
// until fn returns false: the lookup's objects, else the namespace's.
func (f fieldFilter) each(st *store.Store, ns string, fn func(client.Object) bool) {
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

// matches checks obj against the namespace and every check.
func (f fieldFilter) matches(obj client.Object) bool {
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

func fieldIndexName(field string) string { return "field:" + field }

func indexKey(ns, value string) string {
	if ns == "" {
		return allNamespaces + "/" + value
	}
	return ns + "/" + value
}

func indexKeys(ns string, values []string) []string {
	n := len(values)
	if ns != "" {
		n *= 2
	}
	out := make([]string, 0, n)
	for _, v := range values {
		out = append(out, indexKey("", v))
		if ns != "" {
			out = append(out, indexKey(ns, v))
		}
	}
	return out
}
