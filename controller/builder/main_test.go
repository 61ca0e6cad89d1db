package builder_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
)

// env is the control plane shared by the integration tests of this
// package; RBAC lets one test run as a user without permissions.
var (
	env *envtest.Environment
	cfg *rest.Config
)

func TestMain(m *testing.M) {
	env = &envtest.Environment{Authorization: "RBAC"}
	var err error
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}
