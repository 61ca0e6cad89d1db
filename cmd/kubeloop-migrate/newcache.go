package main

import (
	"go/ast"
	"go/token"
)

// newCacheField is one `opts.Field = value` of a NewCache idiom.
type newCacheField struct {
	name  *ast.Ident
	value ast.Expr
	stmt  *ast.AssignStmt // the assignment in the function, for positions
}

// rewriteNewCache turns the operator-sdk idiom for a cache limited to some
// namespaces,
//
//	options.NewCache = func(config *rest.Config, opts cache.Options) (cache.Cache, error) {
//		opts.DefaultNamespaces = namespaces
//		return cache.New(config, opts)
//	}
//
// (also as a NewCache field of a manager Options literal) into the cache
// options kubeloop's manager takes: options.Cache.DefaultNamespaces =
// namespaces (or Cache: cache.Options{DefaultNamespaces: namespaces}).
// Only a function that sets fields of its options parameter, from values
// that mention neither parameter, and then returns cache.New(config,
// opts) is rewritten; any other NewCache keeps its note.
func (r *fileRewriter) rewriteNewCache() {
	cacheLocal := r.localOfCR(crModule + "/pkg/cache")
	if cacheLocal == "" {
		return
	}
	ast.Inspect(r.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BlockStmt:
			n.List = r.newCacheStmts(n.List, cacheLocal)
		case *ast.CaseClause:
			n.Body = r.newCacheStmts(n.Body, cacheLocal)
		case *ast.CommClause:
			n.Body = r.newCacheStmts(n.Body, cacheLocal)
		case *ast.CompositeLit:
			if r.isCR(n.Type, "Options", crModule, crModule+"/pkg/manager") {
				r.newCacheLiteral(n, cacheLocal)
			}
		}
		return true
	})
}

// newCacheStmts replaces each `x.NewCache = <idiom>` of list by
// `x.Cache.Field = value` statements.
func (r *fileRewriter) newCacheStmts(list []ast.Stmt, cacheLocal string) []ast.Stmt {
	var out []ast.Stmt
	for _, stmt := range list {
		as, ok := stmt.(*ast.AssignStmt)
		if !ok || as.Tok != token.ASSIGN || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			out = append(out, stmt)
			continue
		}
		sel, ok := as.Lhs[0].(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "NewCache" {
			out = append(out, stmt)
			continue
		}
		fields, ok := r.newCacheIdiom(as.Rhs[0], cacheLocal)
		if !ok {
			out = append(out, stmt)
			continue
		}
		r.joinLines(as, fields)
		for _, f := range fields {
			// The new statement takes the place of the one in the
			// function, so that the printer keeps it on one line.
			x := sel.X
			if id, ok := x.(*ast.Ident); ok {
				x = &ast.Ident{NamePos: f.stmt.Pos(), Name: id.Name, Obj: id.Obj}
			}
			cacheSel := &ast.SelectorExpr{X: x, Sel: &ast.Ident{NamePos: f.stmt.Pos(), Name: "Cache"}}
			out = append(out, &ast.AssignStmt{
				Lhs: []ast.Expr{&ast.SelectorExpr{X: cacheSel, Sel: &ast.Ident{NamePos: f.name.NamePos, Name: f.name.Name}}},
				Tok: token.ASSIGN, TokPos: f.stmt.TokPos, Rhs: []ast.Expr{f.value},
			})
		}
		r.rep.count(kindField, r.name)
	}
	return out
}

// joinLines merges the lines of as around the assignments kept from its
// function (the func header before them, the return and the closing
// brace after), so that the statements that replace as print without the
// blank lines the removed text would leave.
func (r *fileRewriter) joinLines(as *ast.AssignStmt, fields []newCacheField) {
	file := r.fset.File(as.Pos())
	if file == nil || len(fields) == 0 {
		return
	}
	start, first := file.Line(as.Pos()), file.Line(fields[0].stmt.Pos())
	for i := start; i < first; i++ {
		file.MergeLine(start)
	}
	last, end := file.Line(fields[len(fields)-1].stmt.End()), file.Line(as.End())
	for i := last; i < end; i++ {
		file.MergeLine(last)
	}
}

// newCacheLiteral replaces a NewCache: <idiom> element of a manager
// Options literal by Cache: cache.Options{...}, when the literal has no
// Cache element of its own.
func (r *fileRewriter) newCacheLiteral(lit *ast.CompositeLit, cacheLocal string) {
	at := -1
	for i, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		switch key, _ := kv.Key.(*ast.Ident); {
		case key == nil:
		case key.Name == "Cache":
			return
		case key.Name == "NewCache":
			at = i
		}
	}
	if at < 0 {
		return
	}
	kv := lit.Elts[at].(*ast.KeyValueExpr)
	fields, ok := r.newCacheIdiom(kv.Value, cacheLocal)
	if !ok {
		return
	}
	opts := &ast.CompositeLit{Type: &ast.SelectorExpr{X: ast.NewIdent(cacheLocal), Sel: ast.NewIdent("Options")}}
	for _, f := range fields {
		opts.Elts = append(opts.Elts, &ast.KeyValueExpr{Key: ast.NewIdent(f.name.Name), Value: f.value})
	}
	kv.Key = &ast.Ident{NamePos: kv.Key.Pos(), Name: "Cache"}
	kv.Value = opts
	r.rep.count(kindField, r.name)
}

// newCacheIdiom reports whether e is func(config, opts) { opts.F = v ...;
// return cache.New(config, opts) } and returns the fields set.
func (r *fileRewriter) newCacheIdiom(e ast.Expr, cacheLocal string) ([]newCacheField, bool) {
	fl, ok := e.(*ast.FuncLit)
	if !ok || fl.Type.Params == nil || len(fl.Body.List) < 2 {
		return nil, false
	}
	var params []string
	for _, f := range fl.Type.Params.List {
		for _, id := range f.Names {
			params = append(params, id.Name)
		}
	}
	if len(params) != 2 {
		return nil, false
	}
	config, opts := params[0], params[1]
	last := len(fl.Body.List) - 1
	ret, ok := fl.Body.List[last].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return nil, false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok || !r.isCR(call.Fun, "New", crModule+"/pkg/cache") || len(call.Args) != 2 || !isIdent(call.Args[0], config) || !isIdent(call.Args[1], opts) {
		return nil, false
	}
	var fields []newCacheField
	for _, stmt := range fl.Body.List[:last] {
		as, ok := stmt.(*ast.AssignStmt)
		if !ok || as.Tok != token.ASSIGN || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return nil, false
		}
		sel, ok := as.Lhs[0].(*ast.SelectorExpr)
		if !ok || !isIdent(sel.X, opts) {
			return nil, false
		}
		if mentions(as.Rhs[0], config, opts) {
			return nil, false
		}
		fields = append(fields, newCacheField{name: sel.Sel, value: as.Rhs[0], stmt: as})
	}
	return fields, true
}

// mentions reports whether an identifier named one of names appears in n.
func mentions(n ast.Node, names ...string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			for _, name := range names {
				found = found || id.Name == name
			}
		}
		return !found
	})
	return found
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
