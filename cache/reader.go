package cache

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// informerFor returns the informer holding namespace ns ("" for all).
func (e *entry) informerFor(ns string) (*nsInformer, error) {
	if !e.restricted {
		return e.informers[0], nil
	}
	if ni, ok := e.byNS[ns]; ok {
		return ni, nil
	}
	watched := make([]string, 0, len(e.informers))
	for _, ni := range e.informers {
		watched = append(watched, ni.namespace)
	}
	return nil, fmt.Errorf("%w: %q (watched: %s)", ErrNamespaceNotCached, ns, strings.Join(watched, ", "))
}

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
	infs := e.informers
	if ns != "" && e.restricted {
		ni, err := e.informerFor(ns)
		if err != nil {
			return fail(err)
		}
		infs = []*nsInformer{ni}
	}
	noCopy := e.noCopy
	if lo.UnsafeDisableDeepCopy != nil {
		noCopy = *lo.UnsafeDisableDeepCopy
	}
	var out []runtime.Object
	for _, ni := range infs {
		items, err := q.lookup(ni, ns)
		if err != nil {
			return fail(err)
		}
		if out == nil {
			out = make([]runtime.Object, 0, len(items))
		}
		for _, item := range items {
			obj, ok := item.(client.Object)
			if !ok {
				continue
			}
			if !matchesLabels(lo.LabelSelector, obj) || !q.matches(ni, obj) {
				continue
			}
			if !noCopy {
				obj = obj.DeepCopyObject().(client.Object)
			}
			out = append(out, obj)
			if lo.Limit > 0 && int64(len(out)) >= lo.Limit {
				break
			}
		}
		if lo.Limit > 0 && int64(len(out)) >= lo.Limit {
			break
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
	name      *string              // metadata.name=x, unless indexed
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

// lookup returns the candidate objects of ni in namespace ns ("" for all):
// from the first indexed field requirement's index, else the namespace
// index, else everything.
func (q fieldQuery) lookup(ni *nsInformer, ns string) ([]any, error) {
	idx := ni.inf.GetIndexer()
	indexers := idx.GetIndexers()
	for _, r := range q.fields {
		if _, ok := indexers[fieldIndexName(r.Field)]; ok {
			return idx.ByIndex(fieldIndexName(r.Field), indexKey(ns, r.Value))
		}
	}
	for _, r := range q.fields {
		if r.Field != "metadata.name" {
			return nil, fmt.Errorf("%w: no index for field %q; add one with IndexField", ErrUnsupportedSelector, r.Field)
		}
	}
	if ns != "" && ni.namespace == "" {
		return idx.ByIndex("namespace", ns)
	}
	return idx.List(), nil
}

// matches checks every field requirement against obj (the one used for
// the lookup passes trivially).
func (q fieldQuery) matches(ni *nsInformer, obj client.Object) bool {
	if q.namespace != nil && obj.GetNamespace() != *q.namespace {
		return false
	}
	if len(q.fields) == 0 {
		return true
	}
	indexers := ni.inf.GetIndexer().GetIndexers()
	for _, r := range q.fields {
		fn, ok := indexers[fieldIndexName(r.Field)]
		if !ok {
			if r.Field == "metadata.name" && obj.GetName() == r.Value {
				continue
			}
			return false
		}
		vals, err := fn(obj)
		if err != nil {
			return false
		}
		want := indexKey("", r.Value)
		found := false
		for _, v := range vals {
			if v == want {
				found = true
				break
			}
		}
		if !found {
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
