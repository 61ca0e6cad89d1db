package main

import (
	"go/ast"
	"strings"
)

// What the rules share about names in a file: the local names of its
// imports, and expressions simple enough to repeat.

// localOf returns the file's local name for the import path p, or "".
func (r *fileRewriter) localOf(p string) string {
	for _, spec := range r.file.Imports {
		if importPath(spec) == p {
			return localName(spec)
		}
	}
	return ""
}

// isCR reports whether e is name selected from the controller-runtime
// import p (any of paths).
func (r *fileRewriter) isCR(e ast.Expr, name string, paths ...string) bool {
	local, n, ok := pkgSelector(e)
	if !ok || n != name {
		return false
	}
	for _, p := range paths {
		if r.cr[local] == p {
			return true
		}
	}
	return false
}

// localOfCR returns the local name of the controller-runtime import p in
// this file, or "".
func (r *fileRewriter) localOfCR(p string) string {
	for local, path := range r.cr {
		if path == p && !strings.HasPrefix(local, "_") && local != "." {
			return local
		}
	}
	return ""
}

// simple reports whether e can be evaluated twice without a difference:
// a literal, an identifier or a selector of one.
func simple(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit, *ast.Ident:
		return true
	case *ast.SelectorExpr:
		return simple(e.X)
	}
	return false
}

func cloneSimple(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.BasicLit:
		c := *e
		return &c
	case *ast.Ident:
		return &ast.Ident{NamePos: e.NamePos, Name: e.Name}
	case *ast.SelectorExpr:
		return &ast.SelectorExpr{X: cloneSimple(e.X), Sel: &ast.Ident{NamePos: e.Sel.NamePos, Name: e.Sel.Name}}
	}
	return e
}
