package apiutil

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// NewDynamicRESTMapper returns a RESTMapper that discovers the API lazily:
// the first question about a group fetches that group's resources (not
// the whole API), and a question the mapper cannot answer refreshes the
// group once before failing, so a CustomResourceDefinition installed after
// the mapper was built is found. It is safe for concurrent use.
//
// httpClient nil means a new one from cfg.
func NewDynamicRESTMapper(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	if cfg == nil {
		return nil, errors.New("apiutil: REST mapper: rest.Config is nil")
	}
	if httpClient == nil {
		var err error
		if httpClient, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, fmt.Errorf("apiutil: REST mapper: %w", err)
		}
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("apiutil: REST mapper: %w", err)
	}
	return NewDynamicRESTMapperFromDiscovery(dc), nil
}

// NewDynamicRESTMapperFromDiscovery is NewDynamicRESTMapper over an
// existing discovery client.
func NewDynamicRESTMapperFromDiscovery(dc discovery.DiscoveryInterface) meta.ResettableRESTMapper {
	return &dynamicRESTMapper{disc: dc, loaded: map[string]*restmapper.APIGroupResources{}}
}

type dynamicRESTMapper struct {
	disc discovery.DiscoveryInterface

	// mu guards the fields below. Answers from what is loaded take the
	// read lock; discovery takes the write lock.
	mu        sync.RWMutex
	groups    map[string]metav1.APIGroup // nil until the first ServerGroups
	loaded    map[string]*restmapper.APIGroupResources
	allLoaded bool            // every group in groups is loaded
	delegate  meta.RESTMapper // built from loaded; nil when stale
}

var _ meta.ResettableRESTMapper = (*dynamicRESTMapper)(nil)

// Reset forgets everything discovered.
func (m *dynamicRESTMapper) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.groups = nil
	m.loaded = map[string]*restmapper.APIGroupResources{}
	m.allLoaded = false
	m.delegate = nil
}

// refreshGroups fetches the list of groups and versions. Caller holds mu.
func (m *dynamicRESTMapper) refreshGroups() error {
	list, err := m.disc.ServerGroups()
	if err != nil && list == nil {
		return fmt.Errorf("apiutil: discover API groups: %w", err)
	}
	m.groups = make(map[string]metav1.APIGroup, len(list.Groups))
	for _, g := range list.Groups {
		m.groups[g.Name] = g
	}
	return nil
}

// loadGroup fetches group's resources for every version it serves.
// refresh forces a new list of groups first. Caller holds mu.
func (m *dynamicRESTMapper) loadGroup(group string, refresh bool) error {
	if m.groups == nil || refresh {
		if err := m.refreshGroups(); err != nil {
			return err
		}
	}
	g, ok := m.groups[group]
	if !ok {
		delete(m.loaded, group)
		m.delegate = nil
		return nil // unknown group: the delegate answers "no match"
	}
	agr := &restmapper.APIGroupResources{Group: g, VersionedResources: map[string][]metav1.APIResource{}}
	var errs []error
	for _, v := range g.Versions {
		rl, err := m.disc.ServerResourcesForGroupVersion(v.GroupVersion)
		if err != nil {
			if apierrors.IsNotFound(err) {
				continue // version went away between the two requests
			}
			errs = append(errs, fmt.Errorf("apiutil: discover resources of %s: %w", v.GroupVersion, err))
			continue
		}
		agr.VersionedResources[v.Version] = rl.APIResources
	}
	if len(errs) > 0 && len(agr.VersionedResources) == 0 {
		return errors.Join(errs...)
	}
	m.loaded[group] = agr
	m.delegate = nil
	return nil
}

// mapper returns the delegate built from the loaded groups. Caller holds mu.
func (m *dynamicRESTMapper) mapper() meta.RESTMapper {
	if m.delegate == nil {
		list := make([]*restmapper.APIGroupResources, 0, len(m.loaded))
		for _, g := range m.loaded {
			list = append(list, g)
		}
		m.delegate = restmapper.NewDiscoveryRESTMapper(list)
	}
	return m.delegate
}

// ensure loads the groups a question needs: one group, or every group when
// group is empty and all is true (a resource named without its group).
func (m *dynamicRESTMapper) ensure(group string, all bool, refresh bool) error {
	if all {
		if m.groups == nil || refresh {
			if err := m.refreshGroups(); err != nil {
				return err
			}
		}
		for name := range m.groups {
			if _, ok := m.loaded[name]; ok && !refresh {
				continue
			}
			if err := m.loadGroup(name, false); err != nil {
				return err
			}
		}
		m.allLoaded = true
		return nil
	}
	if _, ok := m.loaded[group]; ok && !refresh {
		return nil
	}
	return m.loadGroup(group, refresh)
}

// do answers a question, loading what it needs, and retries once after a
// refresh when the answer is "no match".
func do[T any](m *dynamicRESTMapper, group string, all bool, ask func(meta.RESTMapper) (T, error)) (T, error) {
	m.mu.RLock()
	_, ready := m.loaded[group]
	if all {
		ready = m.allLoaded
	}
	if ready && m.delegate != nil {
		out, err := ask(m.delegate)
		if err == nil || !meta.IsNoMatchError(err) {
			m.mu.RUnlock()
			return out, err
		}
	}
	m.mu.RUnlock()

	m.mu.Lock()
	defer m.mu.Unlock()
	var zero T
	if err := m.ensure(group, all, false); err != nil {
		return zero, err
	}
	out, err := ask(m.mapper())
	if err == nil || !meta.IsNoMatchError(err) {
		return out, err
	}
	if rerr := m.ensure(group, all, true); rerr != nil {
		return zero, rerr
	}
	// Build the delegate now, under the write lock, so readers can use it.
	return ask(m.mapper())
}

// needsAll reports whether a resource question must look in every group.
func needsAll(r schema.GroupVersionResource) bool { return r.Group == "" && !isCore(r) }

// isCore reports whether r names a resource of the core group with its
// version, the only case where an empty group is unambiguous.
func isCore(r schema.GroupVersionResource) bool { return r.Version == "v1" }

func (m *dynamicRESTMapper) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return do(m, r.Group, needsAll(r), func(d meta.RESTMapper) (schema.GroupVersionKind, error) { return d.KindFor(r) })
}

func (m *dynamicRESTMapper) KindsFor(r schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return do(m, r.Group, needsAll(r), func(d meta.RESTMapper) ([]schema.GroupVersionKind, error) { return d.KindsFor(r) })
}

func (m *dynamicRESTMapper) ResourceFor(r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return do(m, r.Group, needsAll(r), func(d meta.RESTMapper) (schema.GroupVersionResource, error) { return d.ResourceFor(r) })
}

func (m *dynamicRESTMapper) ResourcesFor(r schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return do(m, r.Group, needsAll(r), func(d meta.RESTMapper) ([]schema.GroupVersionResource, error) { return d.ResourcesFor(r) })
}

func (m *dynamicRESTMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return do(m, gk.Group, false, func(d meta.RESTMapper) (*meta.RESTMapping, error) { return d.RESTMapping(gk, versions...) })
}

func (m *dynamicRESTMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return do(m, gk.Group, false, func(d meta.RESTMapper) ([]*meta.RESTMapping, error) { return d.RESTMappings(gk, versions...) })
}

func (m *dynamicRESTMapper) ResourceSingularizer(resource string) (string, error) {
	group := ""
	if i := strings.IndexByte(resource, '.'); i >= 0 {
		group = resource[i+1:]
	}
	return do(m, group, group == "", func(d meta.RESTMapper) (string, error) { return d.ResourceSingularizer(resource) })
}
