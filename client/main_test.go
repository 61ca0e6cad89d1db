package client_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
)

// restConfig is the admin config of the package's control plane.
var (
	restConfig *rest.Config
	testEnv    *envtest.Environment
)

func TestMain(m *testing.M) {
	testEnv = &envtest.Environment{CRDDirectoryPaths: []string{"testdata/crds"}}
	cfg, err := testEnv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start control plane:", err)
		os.Exit(1)
	}
	restConfig = cfg
	code := m.Run()
	if err := testEnv.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop control plane:", err)
	}
	if code == 0 {
		if err := goleak.Find(leakOptions()...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// leakOptions ignores the goroutines of shared HTTP connections, which
// client-go keeps idle in its transport cache for the life of the process.
func leakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*clientConnReadLoop).run"),
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	}
}
