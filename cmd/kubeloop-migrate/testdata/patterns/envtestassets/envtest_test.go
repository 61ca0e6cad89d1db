package envtestassets

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const assetsVersion = "1.37.2"

// setupEnvtestLayout makes <root>/k8s/<version>-<os>-<arch>/ hold the
// binaries of $KUBEBUILDER_ASSETS, as setup-envtest leaves them.
func setupEnvtestLayout(t *testing.T) string {
	t.Helper()
	src := os.Getenv("KUBEBUILDER_ASSETS")
	if src == "" {
		t.Fatal("KUBEBUILDER_ASSETS must name the directory with etcd and kube-apiserver")
	}
	root := filepath.Join(t.TempDir(), "k8s")
	dir := filepath.Join(root, fmt.Sprintf("%s-%s-%s", assetsVersion, runtime.GOOS, runtime.GOARCH))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		abs, err := filepath.Abs(filepath.Join(src, bin))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(dir, bin)); err != nil {
			t.Fatal(err)
		}
	}
	// setup-envtest also leaves kubectl; the tests never run it.
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestEnvtestFromASetupEnvtestLayout(t *testing.T) {
	root := setupEnvtestLayout(t)
	// Only the layout may supply the binaries.
	t.Setenv("KUBEBUILDER_ASSETS", "")

	testEnv := &envtest.Environment{
		DownloadBinaryAssets:         true,
		DownloadBinaryAssetsVersion:  "v" + assetsVersion,
		DownloadBinaryAssetsIndexURL: "https://raw.githubusercontent.com/kubernetes-sigs/controller-tools/HEAD/envtest-releases.yaml",
		BinaryAssetsDirectory:        root,
	}
	cfg, err := testEnv.Start()
	if err != nil {
		t.Fatalf("start envtest from %s: %v", root, err)
	}
	defer func() {
		if err := testEnv.Stop(); err != nil {
			t.Errorf("stop envtest: %v", err)
		}
	}()

	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "assets", Namespace: "default"}, Data: map[string]string{"ok": "yes"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	got := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
		t.Fatal(err)
	}
	if got.Data["ok"] != "yes" {
		t.Fatalf("data %v", got.Data)
	}
}
