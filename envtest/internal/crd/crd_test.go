package crd_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/envtest/internal/crd"
)

const widgets = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.dev
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.dev
`

func TestRead(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "crds.yaml"), []byte(widgets), 0o644))
	missing := filepath.Join(dir, "missing")

	got, err := crd.Read([]string{dir, missing}, true)
	require.NoError(t, err)
	assert.Equal(t, []string{"widgets.example.dev", "gadgets.example.dev"}, crd.Names(got))

	_, err = crd.Read([]string{dir, missing}, false)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorContains(t, err, "envtest: CRD path:")

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("apiVersion: v1\nkind: ConfigMap\n"), 0o644))
	_, err = crd.Read([]string{bad}, false)
	assert.EqualError(t, err, `envtest: `+bad+`: document 0 is a "ConfigMap", not a CustomResourceDefinition`)
}

func TestMergeNames(t *testing.T) {
	assert.Equal(t, []string{"a", "b", "c"}, crd.MergeNames([]string{"a", "b"}, []string{"b", "c", "a"}))
	assert.Empty(t, crd.MergeNames(nil, nil))
}
