package envtestusers

import (
	"context"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

var (
	testEnv *envtest.Environment
	cfg     *rest.Config
)

func loadCRDs() []*apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return []*apiextensionsv1.CustomResourceDefinition{{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "tenants.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "tenants", Singular: "tenant", Kind: "Tenant", ListKind: "TenantList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}}
}

func TestMain(m *testing.M) {
	testEnv = &envtest.Environment{CRDs: loadCRDs()}
	var err error
	cfg, err = testEnv.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "start envtest: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := testEnv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop envtest: %v\n", err)
	}
	os.Exit(code)
}

func TestTypedCRDIsServed(t *testing.T) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tenant := &unstructured.Unstructured{}
	tenant.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Tenant"})
	tenant.SetNamespace("default")
	tenant.SetName("team-a")
	if err := c.Create(context.Background(), tenant); err != nil {
		t.Fatalf("create a Tenant: %v", err)
	}
}

func TestUserWithoutRolesIsForbidden(t *testing.T) {
	noAccess, err := testEnv.AddUser(envtest.User{Name: "no-access-user"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(noAccess.Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = c.List(context.Background(), &corev1.SecretList{}, client.InNamespace("default"))
	if !apierrors.IsForbidden(err) {
		t.Fatalf("a user without roles lists secrets: got %v, want Forbidden", err)
	}
}
