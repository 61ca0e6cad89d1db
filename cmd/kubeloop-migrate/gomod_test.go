package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRewriteGoMod(t *testing.T) {
	give := "module example.com/x\n\ngo 1.24.0\n\nrequire (\n\tk8s.io/api v0.37.2\n\tsigs.k8s.io/controller-runtime v0.25.2 // the anchor\n)\n"

	kept, changes, raised := rewriteGoMod(give, goModEdit{version: "v1.2.3", crImported: true, crUsed: true})
	assert.Equal(t, "module example.com/x\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/kubeloop/kubeloop v1.2.3\n\tk8s.io/api v0.37.2\n\tsigs.k8s.io/controller-runtime v0.25.2 // the anchor\n)\n", kept)
	assert.Equal(t, []string{"go directive 1.24.0 -> 1.26.0", "require github.com/kubeloop/kubeloop v1.2.3"}, changes)
	assert.Empty(t, raised, "k8s.io/api is at kubeloop's version already")

	dropped, _, _ := rewriteGoMod(give, goModEdit{version: "v1.2.3", crImported: true})
	assert.NotContains(t, dropped, "controller-runtime")

	again, changes, _ := rewriteGoMod(dropped, goModEdit{version: "v9.9.9", crImported: true})
	assert.Equal(t, dropped, again, "idempotent")
	assert.Empty(t, changes)

	single, _, _ := rewriteGoMod("module m\n\ngo 1.27\n\nrequire sigs.k8s.io/controller-runtime v0.25.2\n", goModEdit{version: "v1.0.0", crImported: true})
	assert.Equal(t, "module m\n\ngo 1.27\n\nrequire github.com/kubeloop/kubeloop v1.0.0\n", single)
}

func TestRewriteGoModWithoutControllerRuntime(t *testing.T) {
	for _, tc := range []struct {
		name, give, want string
		changes          []string
	}{
		{
			name: "no import, no require: nothing",
			give: "module m\n\ngo 1.22\n\nrequire (\n\tk8s.io/client-go v0.30.0\n\tgithub.com/prometheus/client_golang v1.19.0\n)\n",
			want: "module m\n\ngo 1.22\n\nrequire (\n\tk8s.io/client-go v0.30.0\n\tgithub.com/prometheus/client_golang v1.19.0\n)\n",
		},
		{
			name:    "a require without imports: only that line goes",
			give:    "module m\n\ngo 1.22\n\nrequire (\n\tk8s.io/client-go v0.30.0\n\tsigs.k8s.io/controller-runtime v0.20.0\n)\n",
			want:    "module m\n\ngo 1.22\n\nrequire (\n\tk8s.io/client-go v0.30.0\n)\n",
			changes: []string{"dropped sigs.k8s.io/controller-runtime (nothing imports it)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, changes, raised := rewriteGoMod(tc.give, goModEdit{version: "v1.0.0"})
			assert.Equal(t, tc.want, out)
			assert.Equal(t, tc.changes, changes)
			assert.Empty(t, raised)
		})
	}
}

func TestRewriteGoModRaisesKubeloopsRequirements(t *testing.T) {
	give := "module m\n\ngo 1.24.0\n\nrequire (\n" +
		"\tgithub.com/prometheus/client_golang v1.19.1\n" +
		"\tk8s.io/client-go v0.33.0\n" +
		"\tsigs.k8s.io/controller-runtime v0.21.0\n" +
		")\n\nrequire (\n" +
		"\tgithub.com/go-logr/logr v1.9.0 // indirect\n" + // newer than kubeloop's: kept
		"\tk8s.io/apimachinery v0.33.0 // indirect\n" +
		"\texample.com/other v0.1.0 // indirect\n" +
		"\tk8s.io/kubectl v0.29.0\n" + // a staging module: raised with k8s.io/api
		"\tk8s.io/kubernetes v1.29.0 // indirect\n" + // not a staging module: kept
		")\n"
	out, _, raised := rewriteGoMod(give, goModEdit{version: "v1.0.0", crImported: true})
	assert.Equal(t, []raise{
		{"github.com/prometheus/client_golang", "v1.19.1", klRequires["github.com/prometheus/client_golang"]},
		{"k8s.io/client-go", "v0.33.0", klRequires["k8s.io/client-go"]},
		{"k8s.io/apimachinery", "v0.33.0", klRequires["k8s.io/apimachinery"]},
		{"k8s.io/kubectl", "v0.29.0", klRequires["k8s.io/api"]},
	}, raised)
	assert.Contains(t, out, "\tk8s.io/kubernetes v1.29.0 // indirect\n")
	assert.Contains(t, out, "\tk8s.io/client-go "+klRequires["k8s.io/client-go"]+"\n")
	assert.Contains(t, out, "\tk8s.io/apimachinery "+klRequires["k8s.io/apimachinery"]+" // indirect\n", "the comment stays")
	assert.Contains(t, out, "\tgithub.com/go-logr/logr v1.9.0 // indirect\n")
	assert.Contains(t, out, "\texample.com/other v0.1.0 // indirect\n")

	again, changes, raisedAgain := rewriteGoMod(out, goModEdit{version: "v1.0.0", crImported: true})
	assert.Equal(t, out, again)
	assert.Empty(t, changes)
	assert.Empty(t, raisedAgain, "a second run raises nothing")

	var buf bytes.Buffer
	rep := newReport()
	rep.raised = raised
	rep.print(&buf, true)
	assert.Contains(t, buf.String(), "go.mod: raised k8s.io/client-go v0.33.0 -> "+klRequires["k8s.io/client-go"]+"\n")
	assert.Contains(t, buf.String(), "can change other APIs this module uses")
}

func TestSemverCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"v0.33.0", "v0.37.2", -1},
		{"v0.37.2", "v0.37.2", 0},
		{"v1.10.0", "v1.9.0", 1},
		{"v1.0.0-rc.1", "v1.0.0", -1},
		{"v1.0.0-alpha", "v1.0.0-alpha.1", -1},
		{"v1.0.0-alpha.2", "v1.0.0-alpha.10", -1},
		{"v1.0.0-1", "v1.0.0-alpha", -1},
		{"v0.0.0-20250101000000-abcdefabcdef", "v0.0.0-20260626114624-be93311217bd", -1},
		{"v2.0.0+incompatible", "v2.0.0", 0},
		{"junk", "v0.0.1", -1},
	} {
		assert.Equal(t, tc.want, semverCompare(tc.a, tc.b), "%s vs %s", tc.a, tc.b)
		assert.Equal(t, -tc.want, semverCompare(tc.b, tc.a), "%s vs %s", tc.b, tc.a)
	}
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
