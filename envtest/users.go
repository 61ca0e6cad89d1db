package envtest

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// AuthenticatedUser is a user AddAuthenticatedUser provisioned,
// controller-runtime's envtest.AuthenticatedUser (without KubeCtl).
type AuthenticatedUser struct {
	// User is who the API server sees.
	User
	cfg *rest.Config
}

// Config returns a config that authenticates as the user.
func (u *AuthenticatedUser) Config() *rest.Config { return rest.CopyConfig(u.cfg) }

// AddAuthenticatedUser is controller-runtime's AddUser(user, baseConfig):
// it issues a client certificate for u, as AddUser does, and returns the
// user with a config that authenticates as u. A non-nil base is copied
// first, so its other settings (QPS, Burst, UserAgent, timeouts) stay;
// the host, TLS settings and credentials are the Environment's and u's.
// kubeloop-migrate rewrites controller-runtime's two-argument AddUser
// calls to this method.
func (e *Environment) AddAuthenticatedUser(u User, base *rest.Config) (*AuthenticatedUser, error) {
	cfg, err := e.AddUser(u)
	if err != nil {
		return nil, err
	}
	if base != nil {
		out := rest.CopyConfig(base)
		out.Host, out.APIPath, out.TLSClientConfig = cfg.Host, cfg.APIPath, cfg.TLSClientConfig
		out.BearerToken, out.BearerTokenFile, out.Username, out.Password = "", "", "", ""
		out.AuthProvider, out.ExecProvider, out.Impersonate = nil, nil, rest.ImpersonationConfig{}
		cfg = out
	}
	return &AuthenticatedUser{User: u, cfg: cfg}, nil
}

// CRDsOf converts typed CustomResourceDefinitions (for example
// []*apiextensionsv1.CustomResourceDefinition, the type of
// controller-runtime's Environment.CRDs) to the unstructured form
// Environment.CRDs and CRDInstallOptions.CRDs hold, so that this module
// needs no k8s.io/apiextensions-apiserver. Nil entries are skipped.
// kubeloop-migrate wraps the CRDs of ported Environment literals with it.
// It panics, naming the CRD, if one cannot be converted (a typed API
// object always can).
func CRDsOf[T runtime.Object](crds []T) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(crds))
	for _, crd := range crds {
		if v := reflect.ValueOf(crd); !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
			continue
		}
		if u, ok := any(crd).(*unstructured.Unstructured); ok {
			if u != nil {
				out = append(out, u)
			}
			continue
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			panic(fmt.Sprintf("envtest: CRDsOf: convert %T: %v", crd, err))
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" {
			u.SetAPIVersion("apiextensions.k8s.io/v1")
			u.SetKind("CustomResourceDefinition")
		}
		out = append(out, u)
	}
	return out
}
