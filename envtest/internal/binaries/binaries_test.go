package binaries_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/envtest/internal/binaries"
)

var (
	platform = "-" + runtime.GOOS + "-" + runtime.GOARCH
	both     = []string{"etcd", "kube-apiserver"}
)

// bin writes an executable (or, with mode 0o644, a plain file) named name
// under dir.
func bin(t *testing.T, dir, name string, mode os.FileMode) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), mode))
}

func TestLookDir(t *testing.T) {
	tests := []struct {
		name        string
		layout      func(t *testing.T, root string)
		prefer      string
		want        string // relative to root; "" means not found
		wantProblem string
	}{{
		name:   "the directory itself",
		layout: func(t *testing.T, root string) { bin(t, root, "etcd", 0o755); bin(t, root, "kube-apiserver", 0o755) },
		want:   ".",
	}, {
		name: "the newest complete subfolder, versions compared as versions",
		layout: func(t *testing.T, root string) {
			for _, v := range []string{"1.31.9", "1.31.10"} {
				bin(t, filepath.Join(root, v+platform), "etcd", 0o755)
				bin(t, filepath.Join(root, v+platform), "kube-apiserver", 0o755)
			}
			bin(t, filepath.Join(root, "1.32.0"+platform), "etcd", 0o755) // incomplete
		},
		want: "1.31.10" + platform,
	}, {
		name: "the preferred version",
		layout: func(t *testing.T, root string) {
			for _, v := range []string{"1.30.0", "1.31.0"} {
				bin(t, filepath.Join(root, "k8s", v+platform), "etcd", 0o755)
				bin(t, filepath.Join(root, "k8s", v+platform), "kube-apiserver", 0o755)
			}
		},
		prefer: "v1.30.0",
		want:   filepath.Join("k8s", "1.30.0"+platform),
	}, {
		name:        "not executable",
		layout:      func(t *testing.T, root string) { bin(t, root, "etcd", 0o644); bin(t, root, "kube-apiserver", 0o755) },
		wantProblem: "etcd is not executable; no <version>" + platform + " subfolder",
	}, {
		name: "no subfolder holds both",
		layout: func(t *testing.T, root string) {
			bin(t, filepath.Join(root, "1.31.0"+platform), "kube-apiserver", 0o755)
		},
		wantProblem: "etcd does not exist, kube-apiserver does not exist; no version subfolder of {root} holds them all: 1.31.0" + platform + " (etcd does not exist)",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tt.layout(t, root)
			got, problem := binaries.LookDir(root, both, tt.prefer)
			if tt.want == "" {
				assert.Empty(t, got)
				assert.Equal(t, replaceRoot(tt.wantProblem, root), problem)
				return
			}
			assert.Empty(t, problem)
			assert.Equal(t, filepath.Join(root, tt.want), got)
		})
	}
}

func replaceRoot(s, root string) string { return strings.ReplaceAll(s, "{root}", root) }

func TestLookDirNotADirectory(t *testing.T) {
	root := t.TempDir()
	bin(t, root, "file", 0o755)
	_, problem := binaries.LookDir(filepath.Join(root, "missing"), both, "")
	assert.Equal(t, "does not exist", problem)
	_, problem = binaries.LookDir(filepath.Join(root, "file"), both, "")
	assert.Equal(t, "is not a directory", problem)
}

func TestExecutable(t *testing.T) {
	root := t.TempDir()
	bin(t, root, "x", 0o755)
	bin(t, root, "plain", 0o644)
	assert.Empty(t, binaries.Executable(filepath.Join(root, "x")))
	assert.Equal(t, "is not executable", binaries.Executable(filepath.Join(root, "plain")))
	assert.Equal(t, "is a directory", binaries.Executable(root))
	assert.Equal(t, "does not exist", binaries.Executable(filepath.Join(root, "nope")))
}
