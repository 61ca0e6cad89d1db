package apiutil_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	discoveryfake "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}) }

// countingDiscovery is client-go's fake discovery that counts requests.
type countingDiscovery struct {
	*discoveryfake.FakeDiscovery
	mu        sync.Mutex
	groups    int
	resources map[string]int
}

func (d *countingDiscovery) ServerGroups() (*metav1.APIGroupList, error) {
	d.mu.Lock()
	d.groups++
	d.mu.Unlock()
	return d.FakeDiscovery.ServerGroups()
}

func (d *countingDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	d.mu.Lock()
	d.resources[gv]++
	d.mu.Unlock()
	return d.FakeDiscovery.ServerResourcesForGroupVersion(gv)
}

func newDiscovery() *countingDiscovery {
	fake := &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{}}
	fake.Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true},
			{Name: "namespaces", Kind: "Namespace"},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", Namespaced: true},
			{Name: "deployments/status", Kind: "Deployment", Namespaced: true},
		}},
	}
	return &countingDiscovery{FakeDiscovery: fake, resources: map[string]int{}}
}

func TestDynamicRESTMapperIsLazyPerGroup(t *testing.T) {
	d := newDiscovery()
	m := apiutil.NewDynamicRESTMapperFromDiscovery(d)
	assert.Zero(t, d.groups, "nothing is discovered at construction")

	mapping, err := m.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "v1")
	require.NoError(t, err)
	assert.Equal(t, "deployments", mapping.Resource.Resource)
	assert.Equal(t, meta.RESTScopeNameNamespace, mapping.Scope.Name())
	assert.Equal(t, map[string]int{"apps/v1": 1}, d.resources, "only the asked group is fetched")

	_, err = m.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"})
	require.NoError(t, err)
	assert.Equal(t, 1, d.resources["apps/v1"], "answers are cached")

	ns, err := apiutil.IsGVKNamespaced(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, m)
	require.NoError(t, err)
	assert.False(t, ns)
	assert.Equal(t, 1, d.resources["v1"])
}

func TestDynamicRESTMapperRefreshesOnMiss(t *testing.T) {
	d := newDiscovery()
	m := apiutil.NewDynamicRESTMapperFromDiscovery(d)
	widget := schema.GroupKind{Group: "example.com", Kind: "Widget"}

	_, err := m.RESTMapping(widget, "v1")
	require.Error(t, err)
	assert.True(t, meta.IsNoMatchError(err), "got %v", err)

	// The CRD is installed later.
	d.Resources = append(d.Resources, &metav1.APIResourceList{GroupVersion: "example.com/v1",
		APIResources: []metav1.APIResource{{Name: "widgets", Kind: "Widget", Namespaced: true}}})
	mapping, err := m.RESTMapping(widget, "v1")
	require.NoError(t, err)
	assert.Equal(t, "widgets", mapping.Resource.Resource)

	// A new version of a known group is found too.
	_, err = m.RESTMapping(widget, "v2")
	require.Error(t, err)
	d.Resources = append(d.Resources, &metav1.APIResourceList{GroupVersion: "example.com/v2",
		APIResources: []metav1.APIResource{{Name: "widgets", Kind: "Widget", Namespaced: true}}})
	mapping, err = m.RESTMapping(widget, "v2")
	require.NoError(t, err)
	assert.Equal(t, "v2", mapping.GroupVersionKind.Version)
}

func TestDynamicRESTMapperResourceQuestions(t *testing.T) {
	m := apiutil.NewDynamicRESTMapperFromDiscovery(newDiscovery())
	gvk, err := m.KindFor(schema.GroupVersionResource{Resource: "deployments"})
	require.NoError(t, err)
	assert.Equal(t, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, gvk)
	gvr, err := m.ResourceFor(schema.GroupVersionResource{Version: "v1", Resource: "configmap"})
	require.NoError(t, err)
	assert.Equal(t, "configmaps", gvr.Resource)
	m.Reset()
	mappings, err := m.RESTMappings(schema.GroupKind{Kind: "ConfigMap"})
	require.NoError(t, err)
	assert.Len(t, mappings, 1)
}

func TestDynamicRESTMapperConcurrentUse(t *testing.T) {
	d := newDiscovery()
	m := apiutil.NewDynamicRESTMapperFromDiscovery(d)
	kinds := []schema.GroupKind{{Kind: "ConfigMap"}, {Group: "apps", Kind: "Deployment"}, {Kind: "Namespace"}}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			if _, err := m.RESTMapping(kinds[i%len(kinds)]); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	assert.Equal(t, map[string]int{"v1": 1, "apps/v1": 1}, d.resources, "each group is discovered once")
}
