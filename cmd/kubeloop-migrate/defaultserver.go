package main

import (
	"go/ast"
	"go/token"
)

// rewriteServerAssertions ports the reads of controller-runtime's concrete
// webhook server, whose server is an interface and whose DefaultServer has
// a public Options field; kubeloop's *webhook.Server is concrete, with an
// Options() method:
//
//	s, ok := srv.(*webhook.DefaultServer)   ->  s, ok := srv, srv != nil
//	srv.(*webhook.DefaultServer)            ->  srv
//	s.Options.Port (s from the assertion)   ->  s.Options().Port
//	srv.(*webhook.DefaultServer).Options    ->  srv.Options()
//
// The comma-ok form is rewritten only when srv is an identifier or a
// selector chain, which may be evaluated twice.
func (r *fileRewriter) rewriteServerAssertions() {
	isAssert := func(e ast.Expr) (*ast.TypeAssertExpr, bool) {
		ta, ok := e.(*ast.TypeAssertExpr)
		if !ok {
			return nil, false
		}
		star, ok := ta.Type.(*ast.StarExpr)
		return ta, ok && r.isCR(star.X, "DefaultServer", crModule+"/pkg/webhook")
	}
	servers := map[string]bool{} // variables holding an asserted server
	ast.Inspect(r.file, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 2 || len(as.Rhs) != 1 {
			return true
		}
		ta, ok := isAssert(as.Rhs[0])
		if !ok || !simple(ta.X) {
			return true
		}
		as.Rhs = []ast.Expr{ta.X, &ast.BinaryExpr{X: cloneSimple(ta.X), OpPos: ta.End(), Op: token.NEQ, Y: ast.NewIdent("nil")}}
		if id, ok := as.Lhs[0].(*ast.Ident); ok && id.Name != "_" {
			servers[id.Name] = true
		}
		r.rep.count(kindWebhook, r.name)
		return true
	})
	calls := map[*ast.SelectorExpr]bool{}
	ast.Inspect(r.file, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Options" {
			return true
		}
		if ta, ok := isAssert(sel.X); ok {
			sel.X = ta.X
			calls[sel] = true
		} else if id, ok := sel.X.(*ast.Ident); ok && servers[id.Name] {
			calls[sel] = true
		}
		return true
	})
	replaceExprs(r.file, func(e ast.Expr) ast.Expr {
		if sel, ok := e.(*ast.SelectorExpr); ok && calls[sel] {
			r.rep.count(kindWebhook, r.name)
			return &ast.CallExpr{Fun: sel, Lparen: sel.End(), Rparen: sel.End()}
		}
		if ta, ok := isAssert(e); ok {
			r.rep.count(kindWebhook, r.name)
			return ta.X
		}
		return e
	})
}
