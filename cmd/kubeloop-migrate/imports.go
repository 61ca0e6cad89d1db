package main

import (
	"go/ast"
	"go/token"
	"path"
	"strconv"
	"strings"
)

// imports tracks a file's import specs and the qualifiers the rewrites
// need. A rewrite asks for a qualifier identifier of an import path; the
// local name is chosen once, at finish, when every use is known.
type imports struct {
	file    *ast.File
	taken   map[string]bool // names declared in the file or its package
	pending map[string][]*ast.Ident
	order   []string
}

func newImports(file *ast.File, pkgNames map[string]bool) *imports {
	taken := map[string]bool{}
	for n := range pkgNames {
		taken[n] = true
	}
	ast.Inspect(file, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Obj != nil {
			taken[id.Name] = true
		}
		return true
	})
	return &imports{file: file, taken: taken, pending: map[string][]*ast.Ident{}}
}

// importPath returns the unquoted path of spec.
func importPath(spec *ast.ImportSpec) string {
	p, _ := strconv.Unquote(spec.Path.Value)
	return p
}

// localName is the name a file uses for spec.
func localName(spec *ast.ImportSpec) string {
	if spec.Name != nil {
		return spec.Name.Name
	}
	return defaultName(importPath(spec))
}

// defaultName guesses the package name of an import path as goimports
// does: the last element, without a version suffix or a go- prefix.
func defaultName(p string) string {
	switch p {
	case crModule:
		return "controllerruntime"
	case "k8s.io/apimachinery/pkg/apis/meta/v1":
		return "metav1"
	}
	base := path.Base(p)
	if strings.HasPrefix(base, "v") && len(base) > 1 && strings.Trim(base[1:], "0123456789") == "" {
		base = path.Base(path.Dir(p))
	}
	return strings.TrimPrefix(base, "go-")
}

// eventualPath is the path an import will have once the file is migrated.
func eventualPath(p string) string {
	if r, ok := packages[p]; ok && r.to != "" {
		return r.to
	}
	return p
}

// qualifier returns an identifier to use as the package name of path. Its
// Name is set by finish.
func (im *imports) qualifier(p string, pos token.Pos) *ast.Ident {
	id := &ast.Ident{NamePos: pos, Name: defaultName(p)}
	if _, ok := im.pending[p]; !ok {
		im.order = append(im.order, p)
	}
	im.pending[p] = append(im.pending[p], id)
	return id
}

// finish names the pending qualifiers: the local name of an import that
// has (or will have) the path, else a new import under the default name,
// or under "kl"+name when the file or package declares that name.
func (im *imports) finish() (added []string) {
	for _, p := range im.order {
		name := ""
		for _, spec := range im.file.Imports {
			if eventualPath(importPath(spec)) == p {
				name = localName(spec)
				break
			}
		}
		if name == "" {
			name = defaultName(p)
			if im.taken[name] || im.nameImported(name) {
				name = "kl" + name
			}
			im.add(p, name)
			added = append(added, p)
		}
		for _, id := range im.pending[p] {
			id.Name = name
		}
	}
	return added
}

func (im *imports) nameImported(name string) bool {
	for _, spec := range im.file.Imports {
		if localName(spec) == name {
			return true
		}
	}
	return false
}

// add appends an import of p named name to the import declaration that
// holds controller-runtime's imports (or the first one).
func (im *imports) add(p, name string) {
	// The new spec goes right before the first controller-runtime import
	// (a standard library one: the first standard library import), at its
	// position, so that it lands in that group when sorted.
	group := func(q string) bool { return strings.HasPrefix(q, crModule) }
	if !strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
		group = func(q string) bool { return !strings.Contains(strings.SplitN(q, "/", 2)[0], ".") }
	}
	var decl *ast.GenDecl
	var anchor token.Pos
	at := 0
	for _, d := range im.file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT || len(gd.Specs) == 0 {
			continue
		}
		if decl == nil {
			decl, anchor, at = gd, gd.Specs[len(gd.Specs)-1].Pos(), len(gd.Specs)
		}
		for i, s := range gd.Specs {
			if group(importPath(s.(*ast.ImportSpec))) && anchor >= s.Pos() {
				decl, anchor, at = gd, s.Pos(), i
				break
			}
		}
	}
	spec := &ast.ImportSpec{Path: &ast.BasicLit{ValuePos: anchor, Kind: token.STRING, Value: strconv.Quote(p)}}
	if name != path.Base(p) { // the package name is the last element for every path the rules add
		spec.Name = &ast.Ident{NamePos: anchor, Name: name}
	}
	if decl == nil {
		decl = &ast.GenDecl{Tok: token.IMPORT}
		im.file.Decls = append([]ast.Decl{decl}, im.file.Decls...)
	}
	if !decl.Lparen.IsValid() {
		decl.Lparen, decl.Rparen = decl.Pos(), decl.End()
	}
	decl.Specs = append(decl.Specs[:at], append([]ast.Spec{spec}, decl.Specs[at:]...)...)
	im.file.Imports = append(im.file.Imports, spec)
}

// remove deletes the import specs for which drop is true.
func (im *imports) remove(drop func(*ast.ImportSpec) bool) (removed int) {
	var decls []ast.Decl
	for _, d := range im.file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			decls = append(decls, d)
			continue
		}
		var specs []ast.Spec
		for _, s := range gd.Specs {
			if drop(s.(*ast.ImportSpec)) {
				removed++
				continue
			}
			specs = append(specs, s)
		}
		gd.Specs = specs
		if len(specs) > 0 {
			decls = append(decls, gd)
		}
	}
	im.file.Decls = decls
	var kept []*ast.ImportSpec
	for _, s := range im.file.Imports {
		if !drop(s) {
			kept = append(kept, s)
		}
	}
	im.file.Imports = kept
	return removed
}
