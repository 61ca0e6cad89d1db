package main

import (
	"strconv"
	"strings"
)

// klGoVersion is the go directive of kubeloop's go.mod: a module that
// requires kubeloop needs at least this version.
const klGoVersion = "1.26.0"

// raise is a requirement of the migrated module raised to kubeloop's.
type raise struct {
	module, from, to string
}

// goModEdit says what rewriteGoMod is to do.
type goModEdit struct {
	version    string // kubeloop's version to require
	crImported bool   // some file imported controller-runtime before the run
	crUsed     bool   // some file still imports it after the run
	zapRaw     bool   // some file imports kubeloop's zapraw module after the run
}

// rewriteGoMod returns go.mod edited for e, as text, line by line, so
// comments and layout stay. When no file imported controller-runtime, only
// a controller-runtime require line is dropped (a module that does not use
// controller-runtime is no business of the tool). Otherwise kubeloop is
// required at e.version, the go directive is raised to klGoVersion, the
// requirements kubeloop has at a newer version are raised to it (raised
// lists them), and controller-runtime's require line is dropped unless
// e.crUsed; with e.zapRaw, kubeloop's zapraw module is required too, at
// e.version (the two are released together). changes says what else was
// done.
func rewriteGoMod(src string, e goModEdit) (out string, changes []string, raised []raise) {
	lines := strings.Split(src, "\n")
	var kept []string
	inRequire, hasKL, hasZapraw, firstBlock := false, false, false, -1
	for _, line := range lines {
		code := strings.SplitN(line, "//", 2)[0]
		fields := strings.Fields(code)
		switch {
		case e.crImported && len(fields) == 2 && fields[0] == "go" && versionLess(fields[1], klGoVersion):
			line = "go " + klGoVersion
			changes = append(changes, "go directive "+fields[1]+" -> "+klGoVersion)
		case len(fields) >= 2 && fields[0] == "require" && fields[1] == "(":
			inRequire = true
			if firstBlock < 0 {
				firstBlock = len(kept)
			}
		case inRequire && len(fields) == 1 && fields[0] == ")":
			inRequire = false
		}
		mod, ver := "", ""
		if inRequire && len(fields) == 2 {
			mod, ver = fields[0], fields[1]
		} else if len(fields) == 3 && fields[0] == "require" {
			mod, ver = fields[1], fields[2]
		}
		switch mod {
		case "":
		case klModule:
			hasKL = true
		case zaprawModule:
			hasZapraw = true
		case crModule:
			if !e.crUsed {
				changes = append(changes, "dropped "+crModule+" (nothing imports it)")
				continue
			}
		default:
			to, ok := klRequires[mod]
			if !ok {
				to, ok = stagingVersion(mod)
			}
			if ok && e.crImported && semverCompare(ver, to) < 0 {
				i := strings.Index(line, mod) + len(mod)
				j := i + strings.Index(line[i:], ver)
				line = line[:j] + to + line[j+len(ver):]
				raised = append(raised, raise{module: mod, from: ver, to: to})
			}
		}
		kept = append(kept, line)
	}
	var add []string
	if !hasKL && e.crImported {
		add = append(add, klModule)
	}
	if !hasZapraw && e.crImported && e.zapRaw {
		add = append(add, zaprawModule)
	}
	for i, mod := range add {
		req := "\t" + mod + " " + e.version
		switch {
		case firstBlock >= 0:
			at := firstBlock + 1 + i
			kept = append(kept[:at], append([]string{req}, kept[at:]...)...)
		default:
			for len(kept) > 0 && strings.TrimSpace(kept[len(kept)-1]) == "" {
				kept = kept[:len(kept)-1]
			}
			kept = append(kept, "", "require "+strings.TrimSpace(req), "")
		}
		changes = append(changes, "require "+mod+" "+e.version)
	}
	return strings.Join(kept, "\n"), changes, raised
}

// stagingModules are the Kubernetes staging repositories other than those
// kubeloop requires: each is released with k8s.io/api, at the same v0.X.Y,
// and a version older than k8s.io/api's may import packages that k8s.io/api
// has since removed (k8s.io/kubectl v0.29's scheme imports
// k8s.io/api/scheduling/v1alpha1, gone in v0.37).
var stagingModules = map[string]bool{
	"k8s.io/apiextensions-apiserver": true, "k8s.io/apiserver": true, "k8s.io/cli-runtime": true,
	"k8s.io/cloud-provider": true, "k8s.io/cluster-bootstrap": true, "k8s.io/code-generator": true,
	"k8s.io/component-base": true, "k8s.io/component-helpers": true, "k8s.io/controller-manager": true,
	"k8s.io/cri-api": true, "k8s.io/cri-client": true, "k8s.io/csi-translation-lib": true,
	"k8s.io/dynamic-resource-allocation": true, "k8s.io/endpointslice": true, "k8s.io/externaljwt": true,
	"k8s.io/kms": true, "k8s.io/kube-aggregator": true, "k8s.io/kube-controller-manager": true,
	"k8s.io/kube-proxy": true, "k8s.io/kube-scheduler": true, "k8s.io/kubectl": true, "k8s.io/kubelet": true,
	"k8s.io/metrics": true, "k8s.io/mount-utils": true, "k8s.io/pod-security-admission": true,
	"k8s.io/sample-apiserver": true,
}

// stagingVersion is the version a staging module is raised to: k8s.io/api's
// in kubeloop's go.mod.
func stagingVersion(mod string) (string, bool) {
	if !stagingModules[mod] {
		return "", false
	}
	return klRequires["k8s.io/api"], true
}

// versionLess compares go versions such as 1.22, 1.24.3 and 1.26.0.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < 3; i++ {
		x, y := part(pa, i), part(pb, i)
		if x != y {
			return x < y
		}
	}
	return false
}

func part(p []string, i int) int {
	if i >= len(p) {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimLeft(p[i], "v"))
	return n
}

// semverCompare compares two module versions (v1.2.3, v1.2.3-rc.1,
// pseudo-versions, +incompatible) by semantic versioning's precedence:
// -1, 0 or 1. A version it cannot parse sorts first.
func semverCompare(a, b string) int {
	pa, oka := parseSemver(a)
	pb, okb := parseSemver(b)
	switch {
	case !oka && !okb:
		return strings.Compare(a, b)
	case !oka:
		return -1
	case !okb:
		return 1
	}
	for i := 0; i < 3; i++ {
		if c := compareNumeric(pa.core[i], pb.core[i]); c != 0 {
			return c
		}
	}
	switch {
	case pa.pre == "" && pb.pre == "":
		return 0
	case pa.pre == "":
		return 1 // a release is above its pre-releases
	case pb.pre == "":
		return -1
	}
	x, y := strings.Split(pa.pre, "."), strings.Split(pb.pre, ".")
	for i := 0; i < len(x) && i < len(y); i++ {
		nx, ny := isNumeric(x[i]), isNumeric(y[i])
		var c int
		switch {
		case nx && ny:
			c = compareNumeric(x[i], y[i])
		case nx:
			c = -1 // numeric identifiers sort below alphanumeric ones
		case ny:
			c = 1
		default:
			c = strings.Compare(x[i], y[i])
		}
		if c != 0 {
			return c
		}
	}
	return compareInt(len(x), len(y))
}

type semver struct {
	core [3]string
	pre  string
}

func parseSemver(v string) (semver, bool) {
	var s semver
	if !strings.HasPrefix(v, "v") {
		return s, false
	}
	v, _, _ = strings.Cut(v[1:], "+") // build metadata has no precedence
	v, s.pre, _ = strings.Cut(v, "-")
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return s, false
	}
	for i, p := range parts {
		if !isNumeric(p) {
			return s, false
		}
		s.core[i] = p
	}
	return s, true
}

func isNumeric(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// compareNumeric compares decimal strings of any length.
func compareNumeric(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if c := compareInt(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func compareInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
