package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
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

	klReplaced     bool // go.mod has a replace directive for kubeloop
	zaprawReplaced bool // and one for kubeloop's zapraw module
}

// sourceFile is one parsed Go file of the module.
type sourceFile struct {
	path string // relative to root, slash-separated
	src  []byte
	ast  *ast.File
	fset *token.FileSet // the package's
}

func (m *migration) run() error {
	modSrc, err := os.ReadFile(filepath.Join(m.root, "go.mod"))
	if err != nil {
		return fmt.Errorf("%s is not a module root: %w", m.root, err)
	}
	m.klReplaced = strings.Contains(string(modSrc), klModule+" =>")
	m.zaprawReplaced = strings.Contains(string(modSrc), zaprawModule+" =>")
	pkgs, err := m.parseAll()
	if err != nil {
		return err
	}
	crImported := false
	for _, files := range pkgs {
		for _, f := range files {
			crImported = crImported || importsCR(f.ast)
		}
	}
	// Everything is rewritten in memory first: a file that fails leaves
	// the module as it was.
	var changes []fileChange
	crUsed, zapRaw := false, false
	for _, files := range pkgs {
		if !crImported {
			break // a module without controller-runtime is left alone
		}
		info := packageInfo(files)
		for _, f := range files {
			out, err := rewriteFile(f.fset, f.path, f.ast, f.src, info[f.ast.Name.Name], m.rep)
			if err != nil {
				return fmt.Errorf("%s: %w (nothing was written)", f.path, err)
			}
			final := f.src
			if out != nil {
				final = out
				changes = append(changes, fileChange{rel: f.path, old: f.src, new: out})
			}
			res, err := inspectResult(f.path, final)
			if err != nil {
				return fmt.Errorf("%w (nothing was written)", err)
			}
			crUsed, zapRaw = crUsed || res.crUsed, zapRaw || res.zapRaw
			m.rep.manual = append(m.rep.manual, res.items...)
		}
	}
	newMod, modChanges, raised := rewriteGoMod(string(modSrc), goModEdit{version: m.version, crImported: crImported, crUsed: crUsed, zapRaw: zapRaw})
	m.rep.gomod, m.rep.raised = modChanges, raised
	if newMod != string(modSrc) {
		changes = append(changes, fileChange{rel: "go.mod", old: modSrc, new: []byte(newMod)})
	}
	return m.writeAll(changes)
}

// fileChange is the new content of one file.
type fileChange struct {
	rel      string // relative to root, slash-separated
	old, new []byte
}

// writeAll stores the changed files, or prints their diffs with -dry-run.
// It writes every file to a temporary file beside it first, then renames
// them over the originals; when a step fails, the files already replaced
// get their old content back, so a run changes all or nothing.
func (m *migration) writeAll(changes []fileChange) error {
	for _, c := range changes {
		m.rep.files = append(m.rep.files, c.rel)
	}
	if m.dryRun {
		for _, c := range changes {
			unifiedDiff(m.diff, c.rel, string(c.old), string(c.new))
		}
		return nil
	}
	temps := make([]string, len(changes))
	removeTemps := func() {
		for _, t := range temps {
			if t != "" {
				_ = os.Remove(t)
			}
		}
	}
	for i, c := range changes {
		t, err := writeTemp(filepath.Join(m.root, filepath.FromSlash(c.rel)), c.new)
		if err != nil {
			removeTemps()
			return fmt.Errorf("%s: %w (nothing was written)", c.rel, err)
		}
		temps[i] = t
	}
	for i, c := range changes {
		p := filepath.Join(m.root, filepath.FromSlash(c.rel))
		if err := rename(temps[i], p); err != nil {
			removeTemps()
			var failed []string
			for _, done := range changes[:i] {
				if rerr := os.WriteFile(filepath.Join(m.root, filepath.FromSlash(done.rel)), done.old, 0o644); rerr != nil {
					failed = append(failed, done.rel)
				}
			}
			if len(failed) > 0 {
				return fmt.Errorf("%s: %w; restoring the files written before it failed for %s", c.rel, err, strings.Join(failed, ", "))
			}
			return fmt.Errorf("%s: %w (the files written before it were restored)", c.rel, err)
		}
		temps[i] = ""
	}
	return nil
}

// rename is os.Rename; tests make it fail.
var rename = os.Rename

// writeTemp writes content to a new temporary file in p's directory with
// p's permissions and returns its name.
func writeTemp(p string, content []byte) (string, error) {
	info, err := os.Stat(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	perm := fs.FileMode(0o644)
	if err == nil {
		perm = info.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".kubeloop-migrate-*")
	if err != nil {
		return "", err
	}
	_, werr := f.Write(content)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(f.Name(), perm)); err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// importsCR reports whether f imports controller-runtime.
func importsCR(f *ast.File) bool {
	for _, spec := range f.Imports {
		if p := importPath(spec); p == crModule || strings.HasPrefix(p, crModule+"/") {
			return true
		}
	}
	return false
}

// parseAll parses every package of the module and returns their files,
// by directory in walk order. It reports every file that does not parse,
// each with its position.
func (m *migration) parseAll() ([][]sourceFile, error) {
	dirs, err := m.packageDirs()
	if err != nil {
		return nil, err
	}
	var pkgs [][]sourceFile
	var errs []error
	for _, dir := range dirs {
		files, err := m.parseDir(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pkgs = append(pkgs, files)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("nothing was written: %d files do not parse:\n%w", len(errs), errors.Join(errs...))
	}
	return pkgs, nil
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

// parseDir parses the .go files of dir; the error joins every file that
// fails.
func (m *migration) parseDir(dir string) ([]sourceFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []sourceFile
	var errs []error
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		src, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rel, _ := filepath.Rel(m.root, p)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, rel, src, parser.ParseComments)
		if err != nil {
			errs = append(errs, parseErrors(err))
			continue
		}
		files = append(files, sourceFile{path: rel, src: src, ast: f, fset: fset})
	}
	return files, errors.Join(errs...)
}

// parseErrors spells out every error of a scanner.ErrorList (its Error
// method shows only the first), each as file:line:col: message.
func parseErrors(err error) error {
	var list scanner.ErrorList
	if !errors.As(err, &list) {
		return err
	}
	errs := make([]error, len(list))
	for i, e := range list {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// packageInfo gathers, per package name (a directory may hold x and
// x_test), the package-level names and the event recorder names.
func packageInfo(files []sourceFile) map[string]*pkgInfo {
	info := map[string]*pkgInfo{}
	for _, f := range files {
		pi := info[f.ast.Name.Name]
		if pi == nil {
			pi = &pkgInfo{names: map[string]bool{}, recorders: map[string]bool{}, interceptorFuncs: map[string]bool{}}
			info[f.ast.Name.Name] = pi
		}
		for name := range f.ast.Scope.Objects {
			pi.names[name] = true
		}
		for name := range recorderNames(f.ast) {
			pi.recorders[name] = true
		}
		for name := range interceptorFuncNames(f.ast) {
			pi.interceptorFuncs[name] = true
		}
		pi.zapRaw = pi.zapRaw || usesZapTypes(f.ast)
	}
	return info
}

// result is what inspectResult found in a file after the run.
type result struct {
	crUsed bool // it still imports controller-runtime
	zapRaw bool // it imports kubeloop's zapraw module
	items  []manualItem
}

// inspectResult parses a file as it is after the run and reports what go.mod
// needs for it, and its manual items.
func inspectResult(rel string, src []byte) (result, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments)
	if err != nil {
		return result{}, fmt.Errorf("%s after rewriting: %w", rel, err)
	}
	var res result
	for _, spec := range f.Imports {
		p, _ := strconv.Unquote(spec.Path.Value)
		if p == crModule || strings.HasPrefix(p, crModule+"/") {
			res.crUsed = true
		}
		res.zapRaw = res.zapRaw || p == zaprawModule
	}
	res.items = manualItems(fset, f)
	return res, nil
}
