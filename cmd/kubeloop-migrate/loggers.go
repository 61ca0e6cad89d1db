package main

import "go/ast"

// rewriteSetLogger turns ctrl.SetLogger(l) and log.SetLogger(l) into
// slog.SetDefault(slog.New(logr.ToSlogHandler(l))): kubeloop has no
// SetLogger; its zero Logger options and log.Default write through slog's
// default handler, so this sends them all to l, as SetLogger did.
func (r *fileRewriter) rewriteSetLogger() {
	replaceExprs(r.file, func(e ast.Expr) ast.Expr {
		call, ok := e.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 || !r.isCR(call.Fun, "SetLogger", crModule, crModule+"/pkg/log") {
			return e
		}
		r.rep.count(kindLogger, r.name)
		pos := call.Pos()
		sel := func(pkg, name string) *ast.SelectorExpr {
			return &ast.SelectorExpr{X: r.im.qualifier(pkg, pos), Sel: &ast.Ident{NamePos: pos, Name: name}}
		}
		handler := &ast.CallExpr{Fun: sel("github.com/go-logr/logr", "ToSlogHandler"), Args: call.Args}
		logger := &ast.CallExpr{Fun: sel("log/slog", "New"), Args: []ast.Expr{handler}}
		return &ast.CallExpr{Fun: sel("log/slog", "SetDefault"), Lparen: call.Lparen, Args: []ast.Expr{logger}, Rparen: call.Rparen}
	})
}
