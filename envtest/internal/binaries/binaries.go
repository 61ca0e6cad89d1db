package binaries

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// Executable returns "" when path is an executable regular file, else what
// is wrong with it.
func Executable(path string) string {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "does not exist"
	case err != nil:
		return err.Error()
	case info.IsDir():
		return "is a directory"
	case info.Mode()&0o111 == 0:
		return "is not executable"
	}
	return ""
}

// LookDir returns the directory under dir that holds every binary of need
// (dir itself, else the newest setup-envtest version subfolder of dir or
// of dir/k8s, preferring prefer when it holds them), or "" and what was
// missing.
func LookDir(dir string, need []string, prefer string) (found, problem string) {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", "does not exist"
	case err != nil:
		return "", err.Error()
	case !info.IsDir():
		return "", "is not a directory"
	}
	direct := missingIn(dir, need)
	if direct == "" {
		return dir, ""
	}
	problems := []string{direct}
	anySubdir := false
	roots := []string{dir}
	if filepath.Base(filepath.Clean(dir)) != "k8s" {
		if st, err := os.Stat(filepath.Join(dir, "k8s")); err == nil && st.IsDir() {
			roots = append(roots, filepath.Join(dir, "k8s"))
		}
	}
	for _, root := range roots {
		subs := versionSubdirs(root)
		if len(subs) == 0 {
			continue
		}
		anySubdir = true
		if prefer != "" {
			for _, s := range subs {
				if s.matches(prefer) && missingIn(s.path, need) == "" {
					return s.path, ""
				}
			}
		}
		var lacking []string
		for _, s := range subs {
			m := missingIn(s.path, need)
			if m == "" {
				return s.path, ""
			}
			lacking = append(lacking, filepath.Base(s.path)+" ("+m+")")
		}
		problems = append(problems, "no version subfolder of "+root+" holds them all: "+strings.Join(lacking, ", "))
	}
	if !anySubdir {
		problems = append(problems, fmt.Sprintf("no <version>-%s-%s subfolder", runtime.GOOS, runtime.GOARCH))
	}
	return "", strings.Join(problems, "; ")
}

// missingIn returns "" when dir holds every binary of need, else which are
// missing and why ("etcd does not exist, kube-apiserver is not executable").
func missingIn(dir string, need []string) string {
	var missing []string
	for _, name := range need {
		if problem := Executable(filepath.Join(dir, name)); problem != "" {
			missing = append(missing, name+" "+problem)
		}
	}
	return strings.Join(missing, ", ")
}

// versionSubdir is one of setup-envtest's <version>-<os>-<arch> folders.
type versionSubdir struct {
	path    string
	raw     string
	version *version.Version
}

// matches reports whether s is version v ("1.31.0" or "v1.31.0").
func (s versionSubdir) matches(v string) bool {
	if strings.TrimPrefix(s.raw, "v") == strings.TrimPrefix(v, "v") {
		return true
	}
	want, err := parseVersion(v)
	return err == nil && s.version.EqualTo(want)
}

// parseVersion parses a semantic version ("1.31.0-rc.1"), else a generic
// one ("1.31").
func parseVersion(s string) (*version.Version, error) {
	if v, err := version.ParseSemantic(s); err == nil {
		return v, nil
	}
	return version.ParseGeneric(s)
}

// versionSubdirs returns root's subfolders named <version>-<GOOS>-<GOARCH>,
// newest first.
func versionSubdirs(root string) []versionSubdir {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	suffix := "-" + runtime.GOOS + "-" + runtime.GOARCH
	var out []versionSubdir
	for _, ent := range entries {
		name := ent.Name()
		raw, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		path := filepath.Join(root, name)
		if st, err := os.Stat(path); err != nil || !st.IsDir() {
			continue
		}
		v, err := parseVersion(raw)
		if err != nil {
			continue
		}
		out = append(out, versionSubdir{path: path, raw: raw, version: v})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[j].version.LessThan(out[i].version) })
	return out
}
