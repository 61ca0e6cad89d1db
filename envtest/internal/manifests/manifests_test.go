package manifests_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/envtest/internal/manifests"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.yaml", "a.YML", "c.json", "kustomization.txt", "sub/d.yaml"} {
		write(t, filepath.Join(dir, name), "{}")
	}
	files, err := manifests.Files(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "a.YML"), filepath.Join(dir, "b.yaml"), filepath.Join(dir, "c.json")}, files)

	one := filepath.Join(dir, "kustomization.txt")
	files, err = manifests.Files(one)
	require.NoError(t, err)
	assert.Equal(t, []string{one}, files, "a file is taken whatever its name")

	_, err = manifests.Files(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestDocuments(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	write(t, good, "kind: A\n---\n---\n# only a comment\n---\n{\"kind\": \"B\"}\n")
	docs, err := manifests.Documents(good)
	require.NoError(t, err)
	assert.Equal(t, []map[string]any{{"kind": "A"}, {"kind": "B"}}, docs)

	bad := filepath.Join(dir, "bad.yaml")
	write(t, bad, "kind: A\n---\nkind: [\n")
	_, err = manifests.Documents(bad)
	assert.ErrorContains(t, err, "envtest: "+bad+": document 1:")

	_, err = manifests.Documents(filepath.Join(dir, "missing.yaml"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}
