package crd_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubeloop/kubeloop/envtest/internal/crd"
)

// Read takes the CRDs of a directory and passes over a path that does not
// exist when asked to, as CRDDirectoryPaths without ErrorIfCRDPathMissing.
func ExampleRead() {
	dir, err := os.MkdirTemp("", "crds-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "widgets.yaml"), []byte(widgets), 0o644)
	crds, err := crd.Read([]string{dir, filepath.Join(dir, "bases")}, true)
	fmt.Println(crd.Names(crds), err)
	// Output: [widgets.example.dev gadgets.example.dev] <nil>
}
