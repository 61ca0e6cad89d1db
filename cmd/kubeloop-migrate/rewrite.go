package main

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/token"
	"strings"
)

// pkgInfo is what the rewrites of one file need to know about the other
// files of its package.
type pkgInfo struct {
	names            map[string]bool // package-level declarations
	recorders        map[string]bool // fields and variables of type record.EventRecorder
	interceptorFuncs map[string]bool // functions named as interceptor.Funcs callbacks
	zapRaw           bool            // a file uses pkg/log/zap's go.uber.org/zap types: the package's pkg/log/zap goes to zapraw
}

// fileRewriter migrates one parsed file.
type fileRewriter struct {
	fset *token.FileSet
	file *ast.File
	pkg  *pkgInfo
	im   *imports
	rep  *report
	name string // file name for the report

	cr map[string]string // local name -> controller-runtime import path

	declNotes []declNote      // notes placed after printing
	noted     map[string]bool // the notes this file holds, by text (notePrefix included)
}

// rewriteFile migrates file and returns its new source, or nil when
// nothing changed.
func rewriteFile(fset *token.FileSet, name string, file *ast.File, src []byte, pkg *pkgInfo, rep *report) ([]byte, error) {
	r := &fileRewriter{fset: fset, file: file, pkg: pkg, rep: rep, name: name, cr: map[string]string{}}
	for _, spec := range file.Imports {
		if p := importPath(spec); p == crModule || strings.HasPrefix(p, crModule+"/") {
			r.cr[localName(spec)] = p
		}
	}
	r.im = newImports(file, pkg.names)
	before := uses(file)

	r.rewriteWebhooks()
	r.rewriteDefaultServer()
	r.rewriteServerAssertions()
	r.rewriteEnvtest()
	r.rewriteNewCache()
	r.rewriteRecorders()
	r.rewriteWatchesMetadata()
	r.rewriteFields()
	r.rewriteFieldAssignments()
	r.rewriteSetLogger()
	r.rewriteZapcore()
	r.rewriteInterceptors()
	r.rewriteSelectors()
	r.noteMethods()
	r.finishImports(before)

	var buf bytes.Buffer
	if err := format.Node(&buf, fset, file); err != nil {
		return nil, err
	}
	placed, err := placeDeclNotes(buf.Bytes(), r.declNotes)
	if err != nil {
		return nil, err
	}
	out, err := format.Source(placed) // a second pass settles moved comments
	if err != nil {
		return nil, err
	}
	if bytes.Equal(out, src) {
		return nil, nil
	}
	return out, nil
}

// finishImports names the new qualifiers, rewrites the paths of
// controller-runtime packages that moved as a whole, and deletes the
// imports the rewrites left unused.
func (r *fileRewriter) finishImports(before map[string]int) {
	for _, p := range r.im.finish() {
		r.rep.count(kindImport, r.name)
		_ = p
	}
	after := uses(r.file)
	removed := r.im.remove(func(spec *ast.ImportSpec) bool {
		n := localName(spec)
		return n != "_" && n != "." && before[n] > 0 && after[n] == 0
	})
	for i := 0; i < removed; i++ {
		r.rep.count(kindImport, r.name)
	}
	for _, spec := range r.file.Imports {
		p := importPath(spec)
		rule, ok := r.rule(p)
		if !ok || rule.to == "" {
			continue
		}
		if spec.Name == nil && defaultName(rule.to) != defaultName(p) {
			spec.Name = &ast.Ident{NamePos: spec.Pos(), Name: defaultName(p)}
		}
		spec.Path.Value = `"` + rule.to + `"`
		r.rep.count(kindImport, r.name)
	}
	r.mergeDuplicateImports()
	ast.SortImports(r.fset, r.file)
}

// mergeDuplicateImports drops an import whose path another import of the
// file has, which happens when two controller-runtime packages went to one
// kubeloop package (pkg/conversion and pkg/webhook/conversion): the uses
// of the dropped local name take the kept one.
func (r *fileRewriter) mergeDuplicateImports() {
	first := map[string]string{} // path -> local name of the import kept
	rename := map[string]string{}
	drop := map[*ast.ImportSpec]bool{}
	for _, spec := range r.file.Imports {
		n := localName(spec)
		if n == "_" || n == "." {
			continue
		}
		p := importPath(spec)
		kept, ok := first[p]
		if !ok {
			first[p] = n
			continue
		}
		drop[spec] = true
		if n != kept {
			rename[n] = kept
		}
	}
	if len(drop) == 0 {
		return
	}
	ast.Inspect(r.file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil && rename[id.Name] != "" {
				id.Name = rename[id.Name]
			}
		}
		return true
	})
	r.im.remove(func(spec *ast.ImportSpec) bool { return drop[spec] })
}

// rewriteSelectors moves every pkg.Name of a controller-runtime import to
// its kubeloop home, or leaves a note.
func (r *fileRewriter) rewriteSelectors() {
	noted := map[string]bool{}
	replaceExprs(r.file, func(e ast.Expr) ast.Expr {
		local, name, ok := pkgSelector(e)
		if !ok {
			return e
		}
		p, ok := r.cr[local]
		if !ok {
			return e
		}
		rule, _ := r.rule(p)
		t, ok := rule.members[name]
		switch {
		case ok && t.path != "":
			return r.moved(e.(*ast.SelectorExpr), t)
		case ok && t.note != "":
			r.note(e, local+"."+name+": "+t.note)
		case !ok && rule.to == "" && rule.note != "" && !noted[p]:
			noted[p] = true // once per file, at the first use
			r.note(e, p+": "+rule.note)
		case !ok && rule.to == "" && rule.note == "":
			r.note(e, local+"."+name+": no kubeloop equivalent")
		}
		return e
	})
}

// moved returns the expression for sel's name in its new home.
func (r *fileRewriter) moved(sel *ast.SelectorExpr, t target) ast.Expr {
	name := t.name
	if name == "" {
		name = sel.Sel.Name
	}
	kind := t.kind
	if kind == "" {
		kind = kindRename
	}
	r.rep.count(kind, r.name)
	var e ast.Expr = &ast.SelectorExpr{X: r.im.qualifier(t.path, sel.Pos()), Sel: &ast.Ident{NamePos: sel.Sel.NamePos, Name: name}}
	if t.ptr {
		e = &ast.StarExpr{Star: sel.Pos(), X: e}
	}
	if t.call {
		e = &ast.CallExpr{Fun: e, Lparen: sel.End(), Rparen: sel.End()}
	}
	return e
}

// noteMethods leaves a note at calls of methods that need a manual step.
func (r *fileRewriter) noteMethods() {
	ast.Inspect(r.file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
			if note, ok := methodNotes[sel.Sel.Name]; ok {
				r.note(call, note)
			}
		}
		return true
	})
}
