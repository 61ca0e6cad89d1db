package leaderelection_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
)

// restConfig is the admin config of the package's shared control plane.
var restConfig *rest.Config

func TestMain(m *testing.M) {
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	restConfig = cfg
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
