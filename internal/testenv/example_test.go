package testenv_test

import (
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/internal/testenv"
)

var restConfig *rest.Config

// A package's TestMain. With Env set (normally an *envtest.Environment),
// the control plane starts before Setup and stops after Teardown; the leak
// check runs once it is gone.
func ExampleMain() {
	var m *testing.M // TestMain's argument
	testenv.Main(m, testenv.Options{
		Setup: func(cfg *rest.Config) error {
			restConfig = cfg
			return nil
		},
	})
}
