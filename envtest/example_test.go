package envtest_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubeloop/kubeloop/envtest"
)

// When no place holds the binaries, Start's error lists each place it
// searched and what was missing there. The kubebuilder scaffold's
// BinaryAssetsDirectory often does not exist on a fresh clone; it is
// passed over like any other place.
func ExampleEnvironment_binaryAssetsDirectory() {
	root, _ := os.MkdirTemp("", "envtest-example-")
	defer os.RemoveAll(root)
	restore := setenv(map[string]string{ // hide this machine's binaries
		envtest.AssetsDirEnv: "", envtest.ToolsDirEnv: filepath.Join(root, "tools"),
		"XDG_DATA_HOME": filepath.Join(root, "data"),
	})
	defer restore()

	env := &envtest.Environment{
		BinaryAssetsDirectory: filepath.Join(root, "bin", "k8s", "1.31.0-linux-amd64"),
		DownloadBinaryAssets:  true,
	}
	_, err := env.Start()
	fmt.Println(errors.Is(err, envtest.ErrBinaryMissing))
	for _, line := range strings.Split(err.Error(), "\n")[:3] {
		fmt.Println(strings.ReplaceAll(line, root, "$ROOT"))
	}
	fmt.Println(strings.Contains(err.Error(), "downloads nothing"))
	// Output:
	// true
	// envtest: control-plane binary missing: etcd and kube-apiserver not found; searched:
	//   - $KUBEBUILDER_ASSETS: not set
	//   - BinaryAssetsDirectory $ROOT/bin/k8s/1.31.0-linux-amd64: does not exist
	// true
}

// setenv sets the variables and returns a function that restores them.
func setenv(vars map[string]string) func() {
	old := map[string]*string{}
	for k, v := range vars {
		if prev, ok := os.LookupEnv(k); ok {
			old[k] = &prev
		} else {
			old[k] = nil
		}
		_ = os.Setenv(k, v)
	}
	return func() {
		for k, v := range old {
			if v == nil {
				_ = os.Unsetenv(k)
			} else {
				_ = os.Setenv(k, *v)
			}
		}
	}
}
