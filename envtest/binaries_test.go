package envtest

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// platform is setup-envtest's folder suffix on this machine.
var platform = "-" + runtime.GOOS + "-" + runtime.GOARCH

// fakeBin writes executable stand-ins for names into dir.
func fakeBin(t *testing.T, dir string, names ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, n := range names {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	}
}

// isolate hides every real place the search looks at, so that only what a
// test creates is found.
func isolate(t *testing.T) {
	t.Helper()
	empty := t.TempDir()
	t.Setenv(ToolsDirEnv, filepath.Join(empty, "tools"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(empty, "data"))
	t.Setenv(AssetsDirEnv, "")
	t.Setenv(EtcdPathEnv, "")
	t.Setenv(APIServerPathEnv, "")
	old := lastResortDir
	lastResortDir = filepath.Join(empty, "usr", "local", "kubebuilder", "bin")
	t.Cleanup(func() { lastResortDir = old })
}

func TestFindBinaries(t *testing.T) {
	tests := []struct {
		name    string
		layout  func(t *testing.T, root string) // makes files under root
		env     func(t *testing.T, root string) *Environment
		assets  string // KUBEBUILDER_ASSETS, relative to root; "" unset
		wantDir string // where both binaries are found, relative to root
	}{
		{
			name:   "binaries directly in BinaryAssetsDirectory",
			layout: func(t *testing.T, root string) { fakeBin(t, filepath.Join(root, "bin"), "etcd", "kube-apiserver") },
			env: func(t *testing.T, root string) *Environment {
				return &Environment{BinaryAssetsDirectory: filepath.Join(root, "bin")}
			},
			wantDir: "bin",
		},
		{
			name: "newest complete version subfolder",
			layout: func(t *testing.T, root string) {
				k8s := filepath.Join(root, "bin", "k8s")
				fakeBin(t, filepath.Join(k8s, "1.9.0"+platform), "etcd", "kube-apiserver")
				fakeBin(t, filepath.Join(k8s, "1.30.0"+platform), "etcd", "kube-apiserver")
				fakeBin(t, filepath.Join(k8s, "1.31.0"+platform), "etcd", "kube-apiserver", "kubectl")
				fakeBin(t, filepath.Join(k8s, "1.32.0"+platform), "etcd") // no kube-apiserver
				fakeBin(t, filepath.Join(k8s, "1.40.0-plan9-mips"), "etcd", "kube-apiserver")
				fakeBin(t, filepath.Join(k8s, "not-a-version"+platform), "etcd", "kube-apiserver")
			},
			env: func(t *testing.T, root string) *Environment {
				return &Environment{BinaryAssetsDirectory: filepath.Join(root, "bin", "k8s")}
			},
			wantDir: filepath.Join("bin", "k8s", "1.31.0"+platform),
		},
		{
			name: "setup-envtest's --bin-dir, versions under k8s/",
			layout: func(t *testing.T, root string) {
				fakeBin(t, filepath.Join(root, "bin", "k8s", "1.31.0"+platform), "etcd", "kube-apiserver")
			},
			env: func(t *testing.T, root string) *Environment {
				return &Environment{BinaryAssetsDirectory: filepath.Join(root, "bin")}
			},
			wantDir: filepath.Join("bin", "k8s", "1.31.0"+platform),
		},
		{
			name: "DownloadBinaryAssetsVersion picks its subfolder",
			layout: func(t *testing.T, root string) {
				fakeBin(t, filepath.Join(root, "k8s", "1.30.2"+platform), "etcd", "kube-apiserver")
				fakeBin(t, filepath.Join(root, "k8s", "1.31.0"+platform), "etcd", "kube-apiserver")
			},
			env: func(t *testing.T, root string) *Environment {
				return &Environment{BinaryAssetsDirectory: filepath.Join(root, "k8s"), DownloadBinaryAssetsVersion: "v1.30.2"}
			},
			wantDir: filepath.Join("k8s", "1.30.2"+platform),
		},
		{
			name: "KUBEBUILDER_ASSETS before BinaryAssetsDirectory, as in controller-runtime",
			layout: func(t *testing.T, root string) {
				fakeBin(t, filepath.Join(root, "assets"), "etcd", "kube-apiserver")
				fakeBin(t, filepath.Join(root, "bin"), "etcd", "kube-apiserver")
			},
			env: func(t *testing.T, root string) *Environment {
				return &Environment{BinaryAssetsDirectory: filepath.Join(root, "bin")}
			},
			assets:  "assets",
			wantDir: "assets",
		},
		{
			name: "an incomplete KUBEBUILDER_ASSETS is passed over",
			layout: func(t *testing.T, root string) {
				fakeBin(t, filepath.Join(root, "assets"), "etcd")
				fakeBin(t, filepath.Join(root, "bin"), "etcd", "kube-apiserver")
			},
			env: func(t *testing.T, root string) *Environment {
				return &Environment{BinaryAssetsDirectory: filepath.Join(root, "bin")}
			},
			assets:  "assets",
			wantDir: "bin",
		},
		{
			name: "the scaffold's missing directory falls through to KUBEBUILDER_ASSETS's versions",
			layout: func(t *testing.T, root string) {
				fakeBin(t, filepath.Join(root, "store", "1.31.0"+platform), "etcd", "kube-apiserver")
			},
			env: func(t *testing.T, root string) *Environment {
				return &Environment{BinaryAssetsDirectory: filepath.Join(root, "bin", "k8s", "1.31.0"+platform)}
			},
			assets:  "store",
			wantDir: filepath.Join("store", "1.31.0"+platform),
		},
		{
			name: "the scaffold's missing directory falls through to the make tools cache",
			layout: func(t *testing.T, root string) {
				fakeBin(t, filepath.Join(root, "tools", versionKey), "etcd", "kube-apiserver")
				t.Setenv(ToolsDirEnv, filepath.Join(root, "tools"))
			},
			env: func(t *testing.T, root string) *Environment {
				return &Environment{BinaryAssetsDirectory: filepath.Join(root, "bin", "k8s", "1.31.0"+platform)}
			},
			wantDir: filepath.Join("tools", versionKey),
		},
		{
			name: "setup-envtest's default store",
			layout: func(t *testing.T, root string) {
				t.Setenv("XDG_DATA_HOME", filepath.Join(root, "share"))
				fakeBin(t, filepath.Join(root, "share", "kubebuilder-envtest", "k8s", "1.31.0"+platform), "etcd", "kube-apiserver")
			},
			env:     func(t *testing.T, root string) *Environment { return &Environment{} },
			wantDir: filepath.Join("share", "kubebuilder-envtest", "k8s", "1.31.0"+platform),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			root := t.TempDir()
			tt.layout(t, root)
			if tt.assets != "" {
				t.Setenv(AssetsDirEnv, filepath.Join(root, tt.assets))
			}
			got, err := tt.env(t, root).findBinaries()
			require.NoError(t, err)
			want := filepath.Join(root, tt.wantDir)
			assert.Equal(t, filepath.Join(want, "etcd"), got.etcd)
			assert.Equal(t, filepath.Join(want, "kube-apiserver"), got.apiserver)
		})
	}
}

func TestFindBinariesPinned(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	fakeBin(t, filepath.Join(root, "pinned"), "my-etcd", "my-apiserver")
	fakeBin(t, filepath.Join(root, "bin"), "etcd", "kube-apiserver")

	t.Setenv(EtcdPathEnv, filepath.Join(root, "pinned", "my-etcd"))
	got, err := (&Environment{BinaryAssetsDirectory: filepath.Join(root, "bin")}).findBinaries()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "pinned", "my-etcd"), got.etcd, "$TEST_ASSET_ETCD pins etcd")
	assert.Equal(t, filepath.Join(root, "bin", "kube-apiserver"), got.apiserver, "the other binary is searched")

	e := &Environment{ControlPlane: ControlPlane{APIServer: &APIServer{Path: filepath.Join(root, "pinned", "my-apiserver")}}}
	got, err = e.findBinaries()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "pinned", "my-apiserver"), got.apiserver, "ControlPlane.APIServer.Path pins kube-apiserver")

	t.Setenv(EtcdPathEnv, filepath.Join(root, "pinned", "gone"))
	_, err = (&Environment{BinaryAssetsDirectory: filepath.Join(root, "bin")}).findBinaries()
	require.ErrorIs(t, err, ErrBinaryMissing)
	assert.Contains(t, err.Error(), "$"+EtcdPathEnv+" "+filepath.Join(root, "pinned", "gone")+" does not exist",
		"a pinned binary that is missing is an error, not a reason to search")
}

func TestFindBinariesReportsEveryPlace(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	assets := filepath.Join(root, "assets")
	fakeBin(t, assets, "etcd")
	require.NoError(t, os.WriteFile(filepath.Join(assets, "kube-apiserver"), []byte("x"), 0o644))
	versions := filepath.Join(root, "bin", "k8s")
	fakeBin(t, filepath.Join(versions, "1.31.0"+platform), "kube-apiserver")
	t.Setenv(AssetsDirEnv, assets)

	_, err := (&Environment{BinaryAssetsDirectory: versions}).findBinaries()
	require.ErrorIs(t, err, ErrBinaryMissing)
	msg := err.Error()
	for _, want := range []string{
		"$KUBEBUILDER_ASSETS " + assets + ": kube-apiserver is not executable",
		"BinaryAssetsDirectory " + versions + ": etcd does not exist, kube-apiserver does not exist; " +
			"no version subfolder of " + versions + " holds them all: 1.31.0" + platform + " (etcd does not exist)",
		"the `make tools` cache " + DefaultBinaryAssetsDirectory() + ": does not exist",
		"setup-envtest's default directory ",
		"controller-runtime's default directory " + lastResortDir + ": does not exist",
		"point $KUBEBUILDER_ASSETS (now " + assets + ")",
		"make tools",
	} {
		assert.Contains(t, msg, want)
	}
	assert.NotContains(t, msg, "set $KUBEBUILDER_ASSETS to", "KUBEBUILDER_ASSETS is set already")
	assert.NotContains(t, msg, "DownloadBinaryAssets")

	t.Setenv(AssetsDirEnv, "")
	_, err = (&Environment{DownloadBinaryAssets: true, DownloadBinaryAssetsVersion: "1.31.0"}).findBinaries()
	require.ErrorIs(t, err, ErrBinaryMissing)
	msg = err.Error()
	assert.Contains(t, msg, "$KUBEBUILDER_ASSETS: not set")
	assert.Contains(t, msg, "BinaryAssetsDirectory: not set")
	assert.Contains(t, msg, "DownloadBinaryAssets is true, but kubeloop's envtest downloads nothing")
	assert.Contains(t, msg, "set $KUBEBUILDER_ASSETS to the directory it prints")
	var target *missingBinariesError
	assert.True(t, errors.As(err, &target))
	assert.True(t, strings.HasPrefix(msg, ErrBinaryMissing.Error()))
}

func TestSetupEnvtestDefaultBinaryAssetsDirectory(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data")
	if runtime.GOOS != "linux" {
		dir, err := SetupEnvtestDefaultBinaryAssetsDirectory()
		require.NoError(t, err)
		assert.Equal(t, "k8s", filepath.Base(dir))
		return
	}
	dir, err := SetupEnvtestDefaultBinaryAssetsDirectory()
	require.NoError(t, err)
	assert.Equal(t, "/data/kubebuilder-envtest/k8s", dir)
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/u")
	dir, err = SetupEnvtestDefaultBinaryAssetsDirectory()
	require.NoError(t, err)
	assert.Equal(t, "/home/u/.local/share/kubebuilder-envtest/k8s", dir)
}
