package envtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/kubeloop/kubeloop/envtest/internal/binaries"
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

// Environment variables that pin one binary, as in controller-runtime; they
// come before every directory.
const (
	APIServerPathEnv = "TEST_ASSET_KUBE_APISERVER"
	EtcdPathEnv      = "TEST_ASSET_ETCD"
)

// DefaultAssetsDirectory is controller-runtime's last resort, searched last
// here too.
const DefaultAssetsDirectory = "/usr/local/kubebuilder/bin"

// lastResortDir is DefaultAssetsDirectory; tests point it elsewhere.
var lastResortDir = DefaultAssetsDirectory

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

// SetupEnvtestDefaultBinaryAssetsDirectory returns the directory where
// setup-envtest keeps the binaries it downloads when given no --bin-dir
// (controller-runtime's function of the same name): on Linux
// ${XDG_DATA_HOME:-~/.local/share}/kubebuilder-envtest/k8s, on macOS
// ~/Library/Application Support/io.kubebuilder.envtest/k8s, on Windows
// %LocalAppData%\kubebuilder-envtest\k8s. It holds one
// <version>-<os>-<arch> subfolder per version, which BinaryAssetsDirectory
// accepts as it is. Start searches it even when BinaryAssetsDirectory is
// something else.
func SetupEnvtestDefaultBinaryAssetsDirectory() (string, error) {
	var base string
	switch runtime.GOOS {
	case "windows":
		if base = os.Getenv("LocalAppData"); base == "" {
			return "", errors.New("envtest: %LocalAppData% is not defined")
		}
		return filepath.Join(base, "kubebuilder-envtest", "k8s"), nil
	case "darwin", "ios":
		home := os.Getenv("HOME")
		if home == "" {
			return "", errors.New("envtest: $HOME is not defined")
		}
		return filepath.Join(home, "Library", "Application Support", "io.kubebuilder.envtest", "k8s"), nil
	default:
		if base = os.Getenv("XDG_DATA_HOME"); base == "" {
			home := os.Getenv("HOME")
			if home == "" {
				return "", errors.New("envtest: neither $XDG_DATA_HOME nor $HOME is defined")
			}
			base = filepath.Join(home, ".local", "share")
		}
		return filepath.Join(base, "kubebuilder-envtest", "k8s"), nil
	}
}

// binaryPaths are the binaries Start runs.
type binaryPaths struct {
	etcd, apiserver string
}

// place is one location the search looked at, for the error.
type place struct {
	what    string // "$KUBEBUILDER_ASSETS", "BinaryAssetsDirectory", ...
	dir     string // "" when not set
	problem string // what was missing there
}

func (p place) String() string {
	if p.dir == "" {
		return p.what + ": not set"
	}
	return p.what + " " + p.dir + ": " + p.problem
}

// findBinaries returns the etcd and kube-apiserver to run. A binary pinned
// by ControlPlane.<X>.Path or $TEST_ASSET_<X> is taken as it is (and must
// exist); the others come from the first directory that holds them all, in
// controller-runtime's order extended with kubeloop's cache:
// $KUBEBUILDER_ASSETS, BinaryAssetsDirectory, DefaultBinaryAssetsDirectory(),
// SetupEnvtestDefaultBinaryAssetsDirectory(), /usr/local/kubebuilder/bin.
// A directory may hold the binaries or setup-envtest's
// <version>-<os>-<arch> subfolders (directly or under k8s/); of those the
// newest holding all of them is taken. The error lists every place and what
// was missing there.
func (e *Environment) findBinaries() (binaryPaths, error) {
	var out binaryPaths
	var need []string
	pin := func(name, field, fieldPath, env string, dst *string) error {
		if fieldPath != "" {
			*dst = fieldPath
			return checkPinned(name, field, fieldPath)
		}
		if p, ok := os.LookupEnv(env); ok && p != "" {
			*dst = p
			return checkPinned(name, "$"+env, p)
		}
		need = append(need, name)
		return nil
	}
	cp := &e.ControlPlane
	var etcdPin, apiPin string
	if cp.Etcd != nil {
		etcdPin = cp.Etcd.Path
	}
	if cp.APIServer != nil {
		apiPin = cp.APIServer.Path
	}
	if err := pin("etcd", "ControlPlane.Etcd.Path", etcdPin, EtcdPathEnv, &out.etcd); err != nil {
		return out, err
	}
	if err := pin("kube-apiserver", "ControlPlane.APIServer.Path", apiPin, APIServerPathEnv, &out.apiserver); err != nil {
		return out, err
	}
	if len(need) == 0 {
		return out, nil
	}

	setupEnvtest, setupErr := SetupEnvtestDefaultBinaryAssetsDirectory()
	places := []place{
		{what: "$" + AssetsDirEnv, dir: os.Getenv(AssetsDirEnv)},
		{what: "BinaryAssetsDirectory", dir: e.BinaryAssetsDirectory},
		{what: "the `make tools` cache", dir: DefaultBinaryAssetsDirectory()},
		{what: "setup-envtest's default directory", dir: setupEnvtest},
		{what: "controller-runtime's default directory", dir: lastResortDir},
	}
	if setupErr != nil {
		places[3].problem = setupErr.Error()
	}
	for i := range places {
		p := &places[i]
		if p.dir == "" {
			continue
		}
		dir, problem := binaries.LookDir(p.dir, need, e.DownloadBinaryAssetsVersion)
		if dir == "" {
			p.problem = problem
			continue
		}
		for _, name := range need {
			switch name {
			case "etcd":
				out.etcd = filepath.Join(dir, name)
			case "kube-apiserver":
				out.apiserver = filepath.Join(dir, name)
			}
		}
		return out, nil
	}
	return out, e.missingError(need, places)
}

// missingError says where the search looked and what to do.
func (e *Environment) missingError(need []string, places []place) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s not found; searched:", ErrBinaryMissing.Error(), strings.Join(need, " and "))
	for _, p := range places {
		b.WriteString("\n  - " + p.String())
	}
	if e.DownloadBinaryAssets {
		b.WriteString("\nDownloadBinaryAssets is true, but kubeloop's envtest downloads nothing")
		if e.DownloadBinaryAssetsVersion != "" {
			b.WriteString(" (DownloadBinaryAssetsVersion " + e.DownloadBinaryAssetsVersion + " was looked for among version subfolders)")
		}
		b.WriteString(".")
	}
	fmt.Fprintf(&b, "\nTo fix: build them with `make tools` (into %s)", DefaultBinaryAssetsDirectory())
	if assets := os.Getenv(AssetsDirEnv); assets != "" {
		fmt.Fprintf(&b, ", or point $%s (now %s) at the directory `setup-envtest use -p path` prints", AssetsDirEnv, assets)
	} else {
		fmt.Fprintf(&b, ", or run `setup-envtest use -p path` and set $%s to the directory it prints", AssetsDirEnv)
	}
	fmt.Fprintf(&b, ", or point BinaryAssetsDirectory at a directory holding etcd and kube-apiserver "+
		"or setup-envtest's <version>-%s-%s subfolders.", runtime.GOOS, runtime.GOARCH)
	return &missingBinariesError{msg: b.String()}
}

// missingBinariesError is ErrBinaryMissing with the search report; its
// message starts with ErrBinaryMissing's.
type missingBinariesError struct{ msg string }

func (m *missingBinariesError) Error() string { return m.msg }
func (m *missingBinariesError) Unwrap() error { return ErrBinaryMissing }

// checkPinned checks a binary named by a field or variable.
func checkPinned(name, source, path string) error {
	if problem := binaries.Executable(path); problem != "" {
		return fmt.Errorf("%w: %s: %s %s %s", ErrBinaryMissing, name, source, path, problem)
	}
	return nil
}
