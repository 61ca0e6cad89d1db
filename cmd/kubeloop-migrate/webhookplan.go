package main

import (
	"go/ast"
	"go/token"
)

// methodPlan is the conversion of one webhook method from runtime.Object
// parameters to T.
type methodPlan struct {
	fd     *ast.FuncDecl
	fields []*ast.Field // parameter fields typed runtime.Object
	typ    ast.Expr     // T (*Kind), from the method's own assertion; nil when it has none
	steps  []assertion
}

// assertion is `v, ok := param.(T)` at body index i, followed by `if !ok {...}`.
type assertion struct {
	i        int
	param    *ast.Ident // the parameter's declaration
	v        *ast.Ident
	onlyHere bool // param is used nowhere else: it can take v's name
}

// planMethod returns how to convert fd, or nil when it cannot be done
// safely: a parameter asserted to another type, asserted anywhere but at
// the top of the body, or an assertion without the `if !ok` check.
func planMethod(fd *ast.FuncDecl, runtimeLocal string) *methodPlan {
	p := &methodPlan{fd: fd, fields: objectParams(fd, runtimeLocal)}
	params := map[string]*ast.Ident{}
	for _, f := range p.fields {
		for _, id := range f.Names {
			params[id.Name] = id
		}
	}
	stmts := fd.Body.List
	handled := map[ast.Node]bool{}
	for i := 0; i+1 < len(stmts); i++ {
		as, ok := stmts[i].(*ast.AssignStmt)
		if !ok || as.Tok != token.DEFINE || len(as.Lhs) != 2 || len(as.Rhs) != 1 {
			continue
		}
		ta, ok := as.Rhs[0].(*ast.TypeAssertExpr)
		if !ok || ta.Type == nil {
			continue
		}
		param, ok := ta.X.(*ast.Ident)
		if !ok || params[param.Name] == nil {
			continue
		}
		v, ok1 := as.Lhs[0].(*ast.Ident)
		okID, ok2 := as.Lhs[1].(*ast.Ident)
		if !ok1 || !ok2 || v.Name == "_" || !isNotOkCheck(stmts[i+1], okID.Name) {
			return nil
		}
		if p.typ != nil && exprString(p.typ) != exprString(ta.Type) {
			return nil
		}
		p.typ = ta.Type
		p.steps = append(p.steps, assertion{i: i, param: params[param.Name], v: v})
		handled[stmts[i]], handled[stmts[i+1]] = true, true
	}
	// Every other use of a parameter must be one a *T serves as well as a
	// runtime.Object: anything but another type assertion or switch.
	other := map[string]int{}
	unsafe := false
	for _, s := range stmts {
		if handled[s] {
			continue
		}
		ast.Inspect(s, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeAssertExpr:
				if id, ok := n.X.(*ast.Ident); ok && params[id.Name] != nil {
					unsafe = true
				}
			case *ast.Ident:
				if params[n.Name] != nil {
					other[n.Name]++
				}
			}
			return true
		})
	}
	if unsafe {
		return nil
	}
	for i := range p.steps {
		p.steps[i].onlyHere = other[p.steps[i].param.Name] == 0
	}
	return p
}

// isNotOkCheck reports whether s is `if !ok { ... }` without else.
func isNotOkCheck(s ast.Stmt, ok string) bool {
	is, isIf := s.(*ast.IfStmt)
	if !isIf || is.Init != nil || is.Else != nil {
		return false
	}
	u, isNot := is.Cond.(*ast.UnaryExpr)
	if !isNot || u.Op != token.NOT {
		return false
	}
	id, isID := u.X.(*ast.Ident)
	return isID && id.Name == ok
}

// apply rewrites the method with T = typ.
func (p *methodPlan) apply(typ ast.Expr) {
	for _, f := range p.fields {
		f.Type = cloneType(typ, f.Type.Pos())
	}
	drop := map[int]bool{}
	stmts := p.fd.Body.List
	for _, a := range p.steps {
		drop[a.i+1] = true
		if a.onlyHere {
			a.param.Name = a.v.Name
			drop[a.i] = true
			continue
		}
		stmts[a.i] = &ast.AssignStmt{Lhs: []ast.Expr{a.v}, TokPos: stmts[a.i].Pos(), Tok: token.DEFINE, Rhs: []ast.Expr{&ast.Ident{NamePos: a.param.Pos(), Name: a.param.Name}}}
	}
	var kept []ast.Stmt
	for i, s := range stmts {
		if !drop[i] {
			kept = append(kept, s)
		}
	}
	p.fd.Body.List = kept
}

// cloneType copies a type expression (*pkg.Kind or *Kind) at pos.
func cloneType(e ast.Expr, pos token.Pos) ast.Expr {
	switch e := e.(type) {
	case *ast.StarExpr:
		return &ast.StarExpr{Star: pos, X: cloneType(e.X, pos)}
	case *ast.SelectorExpr:
		return &ast.SelectorExpr{X: cloneType(e.X, pos), Sel: &ast.Ident{NamePos: pos, Name: e.Sel.Name}}
	case *ast.Ident:
		return &ast.Ident{NamePos: pos, Name: e.Name}
	}
	return e
}
