package binaries_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/kubeloop/kubeloop/envtest/internal/binaries"
)

// LookDir takes the newest of setup-envtest's version subfolders that
// holds every binary asked for.
func ExampleLookDir() {
	root, err := os.MkdirTemp("", "assets-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)
	platform := "-" + runtime.GOOS + "-" + runtime.GOARCH
	for _, v := range []string{"1.30.0", "1.31.2"} {
		dir := filepath.Join(root, "k8s", v+platform)
		_ = os.MkdirAll(dir, 0o755)
		for _, name := range []string{"etcd", "kube-apiserver"} {
			_ = os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755)
		}
	}
	found, problem := binaries.LookDir(root, []string{"etcd", "kube-apiserver"}, "")
	rel, _ := filepath.Rel(root, found)
	fmt.Printf("%s %q\n", strings.TrimSuffix(filepath.ToSlash(rel), platform), problem)
	// Output: k8s/1.31.2 ""
}
