package envtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Versions of the binaries that `make tools` builds.
const (
	KubeAPIServerVersion = "v1.37.2"
	EtcdVersion          = "v3.7.0"
)

// ToolsDirEnv names the environment variable that overrides the root of the
// binary cache.
const ToolsDirEnv = "KUBELOOP_TOOLS_DIR"

// AssetsDirEnv names the environment variable setup-envtest sets to the
// directory holding etcd, kube-apiserver and kubectl.
const AssetsDirEnv = "KUBEBUILDER_ASSETS"

// ErrBinaryMissing is returned (wrapped) when etcd or kube-apiserver is not
// where the Environment looks for it.
var ErrBinaryMissing = errors.New("envtest: control-plane binary missing")

// versionKey names the cache subdirectory of this pair of versions.
const versionKey = "kube-apiserver-" + KubeAPIServerVersion + "_etcd-" + EtcdVersion

// DefaultBinaryAssetsDirectory returns where `make tools` puts the binaries:
// $KUBELOOP_TOOLS_DIR/<version>, else <user cache dir>/kubeloop/tools/<version>.
func DefaultBinaryAssetsDirectory() string {
	root := os.Getenv(ToolsDirEnv)
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = filepath.Join(os.TempDir(), "kubeloop-cache")
		}
		root = filepath.Join(cache, "kubeloop", "tools")
	}
	return filepath.Join(root, versionKey)
}

// binaryAssetsDirectory returns where Start takes the binaries from:
// BinaryAssetsDirectory; else $KUBEBUILDER_ASSETS when it holds both etcd
// and kube-apiserver; else DefaultBinaryAssetsDirectory().
func (e *Environment) binaryAssetsDirectory() string {
	if e.BinaryAssetsDirectory != "" {
		return e.BinaryAssetsDirectory
	}
	if dir := os.Getenv(AssetsDirEnv); dir != "" {
		_, etcdErr := binaryPath(dir, "etcd")
		_, apiErr := binaryPath(dir, "kube-apiserver")
		if etcdErr == nil && apiErr == nil {
			return dir
		}
	}
	return DefaultBinaryAssetsDirectory()
}

// binaryPath returns the path of name in dir, or an error saying how to
// build it.
func binaryPath(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	info, err := os.Stat(p)
	if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%w: %s not found at %s; build it with `make tools` "+
			"(or set %s to the root of a directory holding %s/%s, or %s to a directory holding etcd and kube-apiserver)",
			ErrBinaryMissing, name, p, ToolsDirEnv, versionKey, name, AssetsDirEnv)
	}
	return p, nil
}
