package cache

import (
	"fmt"
	"slices"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	toolscache "k8s.io/client-go/tools/cache"
)

// AllNamespaces is the key of Options.DefaultNamespaces and
// ByObject.Namespaces that stands for every namespace not listed: alone,
// the whole cluster; beside other namespaces, every other namespace (one
// informer whose field selector excludes the namespaces listed).
const AllNamespaces = metav1.NamespaceAll

// Config is the configuration of one namespace of a kind, controller-
// runtime's cache.Config: the value type of Options.DefaultNamespaces and
// ByObject.Namespaces. Each nil field means the kind's setting (ByObject,
// then the Options defaults).
type Config struct {
	// LabelSelector filters the namespace's objects on the server, in
	// place of the kind's. Nil means the kind's; labels.Everything() means
	// no filter.
	LabelSelector labels.Selector
	// FieldSelector filters the namespace's objects on the server, in
	// place of the kind's. Nil means the kind's; fields.Everything() means
	// no filter.
	FieldSelector fields.Selector
	// Transform runs on the namespace's objects before they are stored, in
	// place of the kind's (see Options.DefaultTransform for its contract).
	// Nil means the kind's.
	Transform toolscache.TransformFunc
	// UnsafeDisableDeepCopy makes reads in the namespace share memory with
	// the cache unless the read says otherwise, in place of the kind's.
	// Nil means the kind's. A List across namespaces copies the objects
	// of each namespace by that namespace's setting.
	UnsafeDisableDeepCopy *bool
	// EnableWatchBookmarks is accepted for controller-runtime's shape:
	// kubeloop's informers always ask for bookmarks (they keep a resumed
	// watch from replaying history), so nil, true and false all mean
	// bookmarks.
	EnableWatchBookmarks *bool
	// SyncPeriod is the namespace's resync period, in place of the kind's
	// (ByObject.SyncPeriod, then Options.SyncPeriod). Nil means the
	// kind's; 0 means never.
	SyncPeriod *time.Duration
}

// nsConfig is the resolved configuration of one informer of a kind.
type nsConfig struct {
	namespace string // "" for all (or all not listed)
	label     labels.Selector
	field     fields.Selector
	transform toolscache.TransformFunc
	resync    time.Duration
}

// restrictedTo reports whether kc limits a namespaced kind to some
// namespaces: it lists namespaces other than AllNamespaces.
func (kc kindConfig) restrictedTo() bool {
	for ns := range kc.namespaces {
		if ns != AllNamespaces {
			return true
		}
	}
	return false
}

// informers returns the informers of a kind configured by kc, sorted by
// namespace ("" first). A cluster-scoped kind, or one with no namespaces
// configured, has one cluster-wide informer.
func (kc kindConfig) informers(namespaced bool) []nsConfig {
	base := nsConfig{label: kc.label, field: kc.field, transform: kc.transform, resync: kc.resync}
	if !namespaced || kc.namespaces == nil {
		return []nsConfig{base}
	}
	keys := make([]string, 0, len(kc.namespaces))
	for ns := range kc.namespaces {
		keys = append(keys, ns)
	}
	sort.Strings(keys)
	out := make([]nsConfig, 0, len(keys))
	for _, ns := range keys {
		nc := kc.merge(ns, kc.namespaces[ns])
		if ns == AllNamespaces && len(keys) > 1 {
			// Every namespace not listed: exclude the listed ones, which
			// have informers of their own.
			sels := []fields.Selector{}
			if nc.field != nil && !nc.field.Empty() {
				sels = append(sels, nc.field)
			}
			for _, other := range keys {
				if other != AllNamespaces {
					sels = append(sels, fields.OneTermNotEqualSelector("metadata.namespace", other))
				}
			}
			nc.field = fields.AndSelectors(sels...)
		}
		out = append(out, nc)
	}
	return out
}

// merge resolves the configuration of namespace ns from c and the kind's.
func (kc kindConfig) merge(ns string, c Config) nsConfig {
	nc := nsConfig{namespace: ns, label: kc.label, field: kc.field, transform: kc.transform, resync: kc.resync}
	if c.SyncPeriod != nil {
		nc.resync = *c.SyncPeriod
	}
	if c.LabelSelector != nil {
		nc.label = c.LabelSelector
	}
	if c.FieldSelector != nil {
		nc.field = c.FieldSelector
	}
	if c.Transform != nil {
		nc.transform = c.Transform
	}
	return nc
}

// noCopyByNamespace returns the UnsafeDisableDeepCopy of each namespace
// listed for a namespaced kind, resolved against the kind's, or nil when
// no namespace sets its own (the kind's applies everywhere).
func (kc kindConfig) noCopyByNamespace(namespaced bool) map[string]bool {
	if !namespaced {
		return nil
	}
	var m map[string]bool
	for _, c := range kc.namespaces {
		if c.UnsafeDisableDeepCopy != nil {
			m = make(map[string]bool, len(kc.namespaces))
			break
		}
	}
	if m == nil {
		return nil
	}
	for ns, c := range kc.namespaces {
		m[ns] = kc.disableDeepCopy
		if c.UnsafeDisableDeepCopy != nil {
			m[ns] = *c.UnsafeDisableDeepCopy
		}
	}
	return m
}

// forNamespace returns the configuration of the informer that holds
// namespace ns of a namespaced kind, and false when none does.
func (kc kindConfig) forNamespace(ns string) (nsConfig, bool) {
	if kc.namespaces == nil {
		return nsConfig{label: kc.label, field: kc.field, transform: kc.transform, resync: kc.resync}, true
	}
	if c, ok := kc.namespaces[ns]; ok {
		return kc.merge(ns, c), true
	}
	if c, ok := kc.namespaces[AllNamespaces]; ok {
		return kc.merge(AllNamespaces, c), true
	}
	return nsConfig{}, false
}

// validateNamespaces returns the problems of a namespace map; field names
// it in errors ("DefaultNamespaces", "ByObject[v1, Kind=Secret].Namespaces").
func validateNamespaces(field string, m map[string]Config) []error {
	keys := make([]string, 0, len(m))
	for ns := range m {
		keys = append(keys, ns)
	}
	slices.Sort(keys)
	var errs []error
	for _, ns := range keys {
		if ns != AllNamespaces {
			if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
				errs = append(errs, fmt.Errorf("cache: %s[%q]: not a namespace name: %s", field, ns, msgs[0]))
			}
		}
		if p := m[ns].SyncPeriod; p != nil && *p < 0 {
			errs = append(errs, fmt.Errorf("cache: %s[%q].SyncPeriod %s is negative", field, ns, *p))
		}
	}
	return errs
}
