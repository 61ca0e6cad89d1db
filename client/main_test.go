package client_test

import (
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

// restConfig is the admin config of the package's control plane.
var (
	restConfig *rest.Config
	testEnv    *envtest.Environment
)

func TestMain(m *testing.M) {
	testEnv = &envtest.Environment{CRDDirectoryPaths: []string{"testdata/crds"}}
	testenv.Main(m, testenv.Options{
		Env:   testEnv,
		Setup: func(cfg *rest.Config) error { restConfig = cfg; return nil },
	})
}
