package composite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/multicluster/providers/composite"
	"github.com/kubeloop/kubeloop/multicluster/providers/file"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/providertest"
	"github.com/kubeloop/kubeloop/multicluster/providers/kubeconfig"
)

// restConfig is the admin config of the package's control plane, which
// both members' kubeconfigs point at.
var restConfig *rest.Config

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{
		Env:   &envtest.Environment{},
		Setup: func(cfg *rest.Config) error { restConfig = cfg; return nil },
	})
}

// A kubeconfig-Secrets member and a file member, one name each, on a real
// control plane: both engage under their prefixes and reach it.
func TestSecretsAndFilesAsOne(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	c, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}}))
	data, err := providertest.Kubeconfig(map[string]*rest.Config{"admin": restConfig}, "admin")
	require.NoError(t, err)
	require.NoError(t, c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "eu-1", Labels: map[string]string{kubeconfig.DefaultLabel: "true"}},
		Data:       map[string][]byte{kubeconfig.DefaultDataKey: data},
	}))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "eu-1.yaml"), data, 0o600))

	secrets, err := kubeconfig.New(restConfig, kubeconfig.Options{Namespace: "fleet", Logger: testenv.Logger()})
	require.NoError(t, err)
	files, err := file.New(file.Options{Dirs: []string{dir}, Interval: 10 * time.Millisecond, Logger: testenv.Logger()})
	require.NoError(t, err)
	p, err := composite.New(composite.Member{Prefix: "secrets", Provider: secrets}, composite.Member{Prefix: "files", Provider: files})
	require.NoError(t, err)
	rec := providertest.NewRecorder()
	stop := providertest.Run(p, rec)

	require.NoError(t, rec.WaitNames(ctx, "files/eu-1", "secrets/eu-1"), "one name from each member, no collision")
	for name, cfg := range rec.Current() {
		require.NoError(t, providertest.Reach(ctx, cfg), name)
	}
	require.NoError(t, stop())
	require.NoError(t, rec.WaitNames(ctx))
}
