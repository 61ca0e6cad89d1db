package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRewriteGoMod(t *testing.T) {
	give := "module example.com/x\n\ngo 1.24.0\n\nrequire (\n\tk8s.io/api v0.37.2\n\tsigs.k8s.io/controller-runtime v0.25.2 // the anchor\n)\n"

	kept, changes := rewriteGoMod(give, "v1.2.3", true)
	assert.Equal(t, "module example.com/x\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/kubeloop/kubeloop v1.2.3\n\tk8s.io/api v0.37.2\n\tsigs.k8s.io/controller-runtime v0.25.2 // the anchor\n)\n", kept)
	assert.Equal(t, []string{"go directive 1.24.0 -> 1.26.0", "require github.com/kubeloop/kubeloop v1.2.3"}, changes)

	dropped, _ := rewriteGoMod(give, "v1.2.3", false)
	assert.NotContains(t, dropped, "controller-runtime")

	again, changes := rewriteGoMod(dropped, "v9.9.9", false)
	assert.Equal(t, dropped, again, "idempotent")
	assert.Empty(t, changes)

	single, _ := rewriteGoMod("module m\n\ngo 1.27\n\nrequire sigs.k8s.io/controller-runtime v0.25.2\n", "v1.0.0", false)
	assert.Equal(t, "module m\n\ngo 1.27\n\nrequire github.com/kubeloop/kubeloop v1.0.0\n", single)
}

func TestUnifiedDiff(t *testing.T) {
	a := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	b := "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\n"
	var buf bytes.Buffer
	unifiedDiff(&buf, "x.go", a, b)
	assert.Equal(t, `--- a/x.go
+++ b/x.go
@@ -1,5 +1,5 @@
 a
-b
+B
 c
 d
 e
@@ -8,3 +8,4 @@
 h
 i
 j
+k
`, buf.String())

	buf.Reset()
	unifiedDiff(&buf, "x.go", a, a)
	assert.Equal(t, "--- a/x.go\n+++ b/x.go\n", buf.String(), "no hunks for equal files")
}
