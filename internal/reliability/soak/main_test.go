//go:build soak

package soak_test

import (
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

var (
	testEnv    *envtest.Environment
	restConfig *rest.Config
	admin      kubernetes.Interface
)

func TestMain(m *testing.M) {
	// Dead HTTP/2 connections are found after 1 s + 1 s, not 30 s + 15 s.
	os.Setenv("HTTP2_READ_IDLE_TIMEOUT_SECONDS", "1")
	os.Setenv("HTTP2_PING_TIMEOUT_SECONDS", "1")
	testEnv = &envtest.Environment{CRDDirectoryPaths: []string{"../../../envtest/testdata/crds"}, ErrorIfCRDPathMissing: true}
	testenv.Main(m, testenv.Options{
		Env: testEnv,
		Setup: func(cfg *rest.Config) error {
			restConfig = cfg
			var err error
			admin, err = kubernetes.NewForConfig(cfg)
			return err
		},
	})
}
