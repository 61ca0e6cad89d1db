package builder_test

import (
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

// env is the control plane shared by the integration tests of this
// package; RBAC lets one test run as a user without permissions.
var (
	env *envtest.Environment
	cfg *rest.Config
)

func TestMain(m *testing.M) {
	env = &envtest.Environment{Authorization: "RBAC"}
	testenv.Main(m, testenv.Options{
		Env:   env,
		Setup: func(c *rest.Config) error { cfg = c; return nil },
	})
}
