package cache

import (
	"slices"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubeloop/kubeloop/client"
)

// How far the cache has caught up, for the manager's client: it reads its
// own writes by comparing the resourceVersion it wrote with the one up to
// which an informer has applied every change (client.CacheProgress).

var _ client.CacheProgress = (*InformerCache)(nil)

// ObservedVersion returns the resourceVersion up to which the cache has
// applied every change of obj's kind in namespace ns ("" for a
// cluster-scoped kind or a cluster-wide informer), for the manager's client
// to tell a cache that lags behind its own write from one that has caught
// up. ok is false when the cache cannot say: it has no synced informer for
// the kind and namespace, or that informer's last list or watch failed
// (Healthy names it), so that a read through the cache may be arbitrarily
// stale.
func (c *InformerCache) ObservedVersion(obj client.Object, ns string) (rv uint64, ok bool) {
	e := c.readyEntry(obj)
	if e == nil {
		k, err := c.keyFor(obj)
		if err != nil {
			return 0, false
		}
		c.mu.Lock()
		e = c.entries[k]
		c.mu.Unlock()
		if e == nil {
			return 0, false
		}
	}
	if !e.namespaced {
		ns = ""
	}
	ni, err := e.informerFor(ns)
	if err != nil || !ni.Informer.HasSynced() || ni.Health.Err() != nil {
		return 0, false
	}
	return ni.Informer.ObservedVersion(), true
}

// Holds reports whether the cache would hold obj as it is: its kind is
// cached, its namespace is watched and its labels (and metadata.name and
// metadata.namespace fields) match the kind's selectors. A field selector
// on other fields cannot be judged on an arbitrary object; such an object
// counts as held.
func (c *InformerCache) Holds(obj client.Object) bool {
	k, err := c.keyFor(obj)
	if err != nil {
		return false
	}
	kc := c.configFor(k.gvk)
	if ns := obj.GetNamespace(); ns != "" && kc.namespaces != nil && !slices.Contains(kc.namespaces, ns) {
		return false
	}
	if kc.label != nil && !kc.label.Empty() && !kc.label.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	return matchesMetadataFields(kc.field, obj)
}

// matchesMetadataFields evaluates sel on obj when sel names only
// metadata.name and metadata.namespace, and reports true otherwise.
func matchesMetadataFields(sel fields.Selector, obj client.Object) bool {
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
