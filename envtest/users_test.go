package envtest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
)

func TestAddAuthenticatedUserKeepsTheBaseSettings(t *testing.T) {
	base := &rest.Config{QPS: 7, Burst: 9, UserAgent: "suite", BearerToken: "dropped"}
	u, err := env.AddAuthenticatedUser(envtest.User{Name: "dora", Groups: []string{"testers"}}, base)
	require.NoError(t, err)
	assert.Equal(t, "dora", u.Name)
	c := u.Config()
	assert.Equal(t, float32(7), c.QPS)
	assert.Equal(t, 9, c.Burst)
	assert.Equal(t, "suite", c.UserAgent)
	assert.Empty(t, c.BearerToken, "the certificate authenticates, not the base's token")
	assert.Equal(t, cfg.Host, c.Host)

	cs, err := kubernetes.NewForConfig(c)
	require.NoError(t, err)
	_, err = cs.CoreV1().Secrets("default").List(t.Context(), metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "dora is authenticated and has no role: got %v", err)
	assert.ErrorContains(t, err, `"dora"`)

	nobase, err := env.AddAuthenticatedUser(envtest.User{Name: "erin"}, nil)
	require.NoError(t, err)
	assert.Equal(t, cfg.Host, nobase.Config().Host)
}

// typedCRD has the shape of apiextensionsv1.CustomResourceDefinition as
// far as CRDsOf cares: a typed object it converts.
type typedCRD struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              map[string]any `json:"spec"`
}

func (c *typedCRD) DeepCopyObject() runtime.Object {
	out := *c
	out.Spec = runtime.DeepCopyJSON(c.Spec)
	return &out
}

func TestCRDsOfInstallsTypedCRDs(t *testing.T) {
	crds, err := envtest.ReadCRDs("testdata/crds/widgets.yaml")
	require.NoError(t, err)
	spec, _, _ := unstructured.NestedMap(crds[0].Object, "spec")
	require.NoError(t, unstructured.SetNestedMap(spec, map[string]any{
		"plural": "doodads", "singular": "doodad", "kind": "Doodad", "listKind": "DoodadList",
	}, "names"))
	typed := []*typedCRD{{ObjectMeta: metav1.ObjectMeta{Name: "doodads.test.kubeloop.dev"}, Spec: spec}, nil}

	got := envtest.CRDsOf(typed)
	require.Len(t, got, 1, "nil entries are skipped")
	assert.Equal(t, "CustomResourceDefinition", got[0].GetKind(), "a typed CRD without TypeMeta gets its kind")
	require.NoError(t, env.InstallCRDs(t.Context(), got...))

	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	_, err = dyn.Resource(schema.GroupVersionResource{Group: "test.kubeloop.dev", Version: "v1", Resource: "doodads"}).
		Namespace("default").List(t.Context(), metav1.ListOptions{})
	assert.NoError(t, err, "the converted CRD is served")

	same := envtest.CRDsOf(crds)
	assert.Same(t, crds[0], same[0], "unstructured CRDs pass through")
}

func TestAuthorizationDefaultsToRBAC(t *testing.T) {
	for _, tt := range []struct{ give, want string }{
		{"", "--authorization-mode=RBAC"},
		{"RBAC", "--authorization-mode=RBAC"},
		{"AlwaysAllow", "--authorization-mode=AlwaysAllow"},
	} {
		args := envtest.APIServerArgs(&envtest.Environment{Authorization: tt.give}, 6443)
		assert.Contains(t, args, tt.want, "Authorization %q", tt.give)
	}
}
