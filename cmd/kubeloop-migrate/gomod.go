package main

import (
	"strconv"
	"strings"
)

// klGoVersion is the go directive of kubeloop's go.mod: a module that
// requires kubeloop needs at least this version.
const klGoVersion = "1.26.0"

// rewriteGoMod returns go.mod with kubeloop required at version, the go
// directive raised to klGoVersion, and controller-runtime's require line
// dropped when crUsed is false. changes says what was done. go.mod is
// edited as text, line by line, so comments and layout stay.
func rewriteGoMod(src, version string, crUsed bool) (out string, changes []string) {
	lines := strings.Split(src, "\n")
	var kept []string
	inRequire, hasKL, firstBlock := false, false, -1
	for _, line := range lines {
		fields := strings.Fields(strings.SplitN(line, "//", 2)[0])
		switch {
		case len(fields) == 2 && fields[0] == "go" && versionLess(fields[1], klGoVersion):
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
		mod := ""
		if inRequire && len(fields) >= 2 {
			mod = fields[0]
		} else if len(fields) >= 3 && fields[0] == "require" {
			mod = fields[1]
		}
		switch mod {
		case klModule:
			hasKL = true
		case crModule:
			if !crUsed {
				changes = append(changes, "dropped "+crModule+" (nothing imports it)")
				continue
			}
		}
		kept = append(kept, line)
	}
	if !hasKL {
		req := "\t" + klModule + " " + version
		if firstBlock >= 0 {
			kept = append(kept[:firstBlock+1], append([]string{req}, kept[firstBlock+1:]...)...)
		} else {
			for len(kept) > 0 && strings.TrimSpace(kept[len(kept)-1]) == "" {
				kept = kept[:len(kept)-1]
			}
			kept = append(kept, "", "require "+strings.TrimSpace(req), "")
		}
		changes = append(changes, "require "+klModule+" "+version)
	}
	return strings.Join(kept, "\n"), changes
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

// modulePath returns the module path declared in go.mod.
func modulePath(src string) string {
	for _, line := range strings.Split(src, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}
