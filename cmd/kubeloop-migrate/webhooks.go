package main

import (
	"go/ast"
	"go/token"
)

// oldFormMethods are the WebhookBuilder methods that took the untyped
// CustomDefaulter and CustomValidator before controller-runtime v0.23
// (the NewWebhookManagedBy(mgr).For(obj) form), and their names in
// kubeloop's builder, whose WithDefaulter and WithValidator are typed.
var oldFormMethods = map[string]string{"WithDefaulter": "WithCustomDefaulter", "WithValidator": "WithCustomValidator"}

// rewriteWebhooks moves ctrl.NewWebhookManagedBy(mgr).For(obj) and
// NewWebhookManagedBy(mgr, obj) to webhook.ManagedBy(mgr, obj). In the
// first form, from controller-runtime before v0.23, WithDefaulter and
// WithValidator took the untyped CustomDefaulter and CustomValidator:
// they become WithCustomDefaulter and WithCustomValidator, so the
// defaulters' and validators' methods keep their runtime.Object
// signatures (and every caller of them keeps compiling).
func (r *fileRewriter) rewriteWebhooks() {
	builderPaths := []string{crModule, crModule + "/pkg/builder"}
	isManagedBy := func(e ast.Expr) bool {
		return r.isCR(e, "NewWebhookManagedBy", builderPaths...) || r.isCR(e, "WebhookManagedBy", builderPaths...)
	}
	// oldForm reports whether call is NewWebhookManagedBy(mgr).For(obj).
	oldForm := func(call *ast.CallExpr) bool {
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "For" || len(call.Args) != 1 {
			return false
		}
		inner, ok := sel.X.(*ast.CallExpr)
		return ok && len(inner.Args) == 1 && isManagedBy(inner.Fun)
	}
	ast.Inspect(r.file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || oldFormMethods[sel.Sel.Name] == "" {
			return true
		}
		// Walk down the chain to its start.
		for x := sel.X; ; {
			c, ok := x.(*ast.CallExpr)
			if !ok {
				return true
			}
			if oldForm(c) {
				sel.Sel.Name = oldFormMethods[sel.Sel.Name]
				r.rep.count(kindWebhook, r.name)
				return true
			}
			s, ok := c.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x = s.X
		}
	})
	replaceExprs(r.file, func(e ast.Expr) ast.Expr {
		call, ok := e.(*ast.CallExpr)
		if !ok {
			return e
		}
		// NewWebhookManagedBy(mgr, obj), the newer form.
		if isManagedBy(call.Fun) && len(call.Args) == 2 {
			return r.managedBy(call, call.Args[0], call.Args[1])
		}
		if !oldForm(call) {
			return e
		}
		inner := call.Fun.(*ast.SelectorExpr).X.(*ast.CallExpr)
		return r.managedBy(call, inner.Args[0], call.Args[0])
	})
}

func (r *fileRewriter) managedBy(at *ast.CallExpr, mgr, obj ast.Expr) ast.Expr {
	r.rep.count(kindWebhook, r.name)
	fun := &ast.SelectorExpr{X: r.im.qualifier(kl("webhook"), at.Pos()), Sel: &ast.Ident{Name: "ManagedBy"}}
	return &ast.CallExpr{Fun: fun, Lparen: at.Lparen, Args: []ast.Expr{mgr, obj}, Rparen: at.Rparen}
}

// rewriteDefaultServer turns &webhook.DefaultServer{Options: o}, the
// concrete server controller-runtime's webhook.NewServer returns, into
// webhook.NewServer(o) (NewServer(webhook.Options{}) without Options). Any
// other use of the name is kubeloop's concrete webhook.Server (the member
// rule), whose options are unexported.
func (r *fileRewriter) rewriteDefaultServer() {
	replaceExprs(r.file, func(e ast.Expr) ast.Expr {
		u, ok := e.(*ast.UnaryExpr)
		if !ok || u.Op != token.AND {
			return e
		}
		lit, ok := u.X.(*ast.CompositeLit)
		if !ok || !r.isCR(lit.Type, "DefaultServer", crModule+"/pkg/webhook") {
			return e
		}
		local, _, _ := pkgSelector(lit.Type)
		var opts ast.Expr = &ast.CompositeLit{Type: &ast.SelectorExpr{X: ast.NewIdent(local), Sel: ast.NewIdent("Options")}}
		switch len(lit.Elts) {
		case 0:
		case 1:
			kv, ok := lit.Elts[0].(*ast.KeyValueExpr)
			if key, isIdent := kv.Key.(*ast.Ident); !ok || !isIdent || key.Name != "Options" {
				return e
			}
			opts = kv.Value
		default:
			return e
		}
		r.rep.count(kindWebhook, r.name)
		fun := &ast.SelectorExpr{X: ast.NewIdent(local), Sel: &ast.Ident{NamePos: lit.Pos(), Name: "NewServer"}}
		return &ast.CallExpr{Fun: fun, Lparen: lit.Lbrace, Args: []ast.Expr{opts}, Rparen: lit.Rbrace}
	})
}
