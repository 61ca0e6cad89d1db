package komega_test

import (
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

// k8sClient talks to the package's control plane.
var k8sClient client.Client

func TestMain(m *testing.M) {
	env := &envtest.Environment{CRDDirectoryPaths: []string{"../testdata/crds"}, ErrorIfCRDPathMissing: true}
	testenv.Main(m, testenv.Options{
		Env: env,
		Setup: func(cfg *rest.Config) (err error) {
			k8sClient, err = client.New(cfg, client.Options{})
			return err
		},
	})
}
