package file_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/multicluster/providers/file"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/providertest"
)

// restConfig is the admin config of the package's control plane, which
// the real-control-plane test's kubeconfig files point at.
var restConfig *rest.Config

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{
		Env:   &envtest.Environment{},
		Setup: func(cfg *rest.Config) error { restConfig = cfg; return nil },
	})
}

func TestFileClusterReachesTheControlPlane(t *testing.T) {
	dir := t.TempDir()
	data, err := providertest.Kubeconfig(map[string]*rest.Config{"admin": restConfig}, "admin")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "local.yaml"), data, 0o600))

	rec := providertest.NewRecorder()
	p, err := file.New(file.Options{Dirs: []string{dir}, Interval: 10 * time.Millisecond})
	require.NoError(t, err)
	stop := providertest.Run(p, rec)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a hang guard, not a latency bound
	defer cancel()
	require.NoError(t, rec.WaitNames(ctx, "local"))
	require.NoError(t, providertest.Reach(ctx, rec.Current()["local"]))

	require.NoError(t, os.Remove(filepath.Join(dir, "local.yaml")))
	require.NoError(t, rec.WaitNames(ctx))
	require.NoError(t, stop())
}
