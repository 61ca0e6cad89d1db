package sharding_test

import (
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

// restConfig is the admin config of the package's control plane, which
// the tests against a real API server share (the others use the fake).
var restConfig *rest.Config

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{
		Env:   &envtest.Environment{},
		Setup: func(cfg *rest.Config) error { restConfig = cfg; return nil },
	})
}
