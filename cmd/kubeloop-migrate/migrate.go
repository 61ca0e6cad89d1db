package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// migration is one run over a module.
type migration struct {
	root    string
	version string
	dryRun  bool
	diff    io.Writer // where -dry-run writes the diff
	rep     *report
}

// sourceFile is one parsed Go file of the module.
type sourceFile struct {
	path string // relative to root, slash-separated
	src  []byte
	ast  *ast.File
}

func (m *migration) run() error {
	modSrc, err := os.ReadFile(filepath.Join(m.root, "go.mod"))
	if err != nil {
		return fmt.Errorf("%s is not a module root: %w", m.root, err)
	}
	dirs, err := m.packageDirs()
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	crUsed := false
	for _, dir := range dirs {
		files, err := m.parseDir(fset, dir)
		if err != nil {
			return err
		}
		info := packageInfo(files)
		for _, f := range files {
			out, err := rewriteFile(fset, f.path, f.ast, f.src, info[f.ast.Name.Name], m.rep)
			if err != nil {
				return fmt.Errorf("%s: %w", f.path, err)
			}
			final := f.src
			if out != nil {
				final = out
				if err := m.write(f.path, f.src, out); err != nil {
					return err
				}
			}
			used, items, err := inspectResult(f.path, final)
			if err != nil {
				return err
			}
			crUsed = crUsed || used
			m.rep.manual = append(m.rep.manual, items...)
		}
	}
	newMod, changes := rewriteGoMod(string(modSrc), m.version, crUsed)
	m.rep.gomod = changes
	if newMod != string(modSrc) {
		return m.write("go.mod", modSrc, []byte(newMod))
	}
	return nil
}

// write stores a changed file, or prints its diff with -dry-run.
func (m *migration) write(rel string, old, new []byte) error {
	m.rep.files = append(m.rep.files, rel)
	if m.dryRun {
		unifiedDiff(m.diff, rel, string(old), string(new))
		return nil
	}
	p := filepath.Join(m.root, filepath.FromSlash(rel))
	info, err := os.Stat(p)
	if err != nil {
		return err
	}
	return os.WriteFile(p, new, info.Mode().Perm())
}

// packageDirs lists the directories of the module holding .go files.
func (m *migration) packageDirs() ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(m.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			if strings.HasSuffix(p, ".go") && !slices.Contains(dirs, filepath.Dir(p)) {
				dirs = append(dirs, filepath.Dir(p))
			}
			return nil
		}
		name := d.Name()
		if p != m.root {
			if name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
		}
		return nil
	})
	return dirs, err
}

// parseDir parses the .go files of dir.
func (m *migration) parseDir(fset *token.FileSet, dir string) ([]sourceFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []sourceFile
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(m.root, p)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, rel, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, sourceFile{path: rel, src: src, ast: f})
	}
	return files, nil
}

// packageInfo gathers, per package name (a directory may hold x and
// x_test), the package-level names and the event recorder names.
func packageInfo(files []sourceFile) map[string]*pkgInfo {
	info := map[string]*pkgInfo{}
	for _, f := range files {
		pi := info[f.ast.Name.Name]
		if pi == nil {
			pi = &pkgInfo{names: map[string]bool{}, recorders: map[string]bool{}}
			info[f.ast.Name.Name] = pi
		}
		for name := range f.ast.Scope.Objects {
			pi.names[name] = true
		}
		for name := range recorderNames(f.ast) {
			pi.recorders[name] = true
		}
	}
	return info
}

// inspectResult parses a file as it is after the run and reports whether
// it still imports controller-runtime, and its manual items.
func inspectResult(rel string, src []byte) (crUsed bool, items []string, err error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments)
	if err != nil {
		return false, nil, fmt.Errorf("%s after rewriting: %w", rel, err)
	}
	for _, spec := range f.Imports {
		p, _ := strconv.Unquote(spec.Path.Value)
		if p == crModule || strings.HasPrefix(p, crModule+"/") {
			crUsed = true
		}
	}
	return crUsed, manualItems(fset, f), nil
}
