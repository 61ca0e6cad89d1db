package kubeconfig_test

import (
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

// restConfig is the admin config of the package's control plane: the
// manager's cluster, and (through kubeconfigs in Secrets) every fleet
// member the tests engage.
var restConfig *rest.Config

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{
		Env:   &envtest.Environment{},
		Setup: func(cfg *rest.Config) error { restConfig = cfg; return nil },
	})
}
