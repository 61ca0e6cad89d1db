package main

import (
	"go/ast"
	"go/printer"
	"go/token"
	"strings"
)

const runtimePkg = "k8s.io/apimachinery/pkg/runtime"

// webhookMethods are CustomDefaulter's and CustomValidator's methods; the
// typed forms keep the names and replace runtime.Object by T.
var webhookMethods = map[string]bool{"Default": true, "ValidateCreate": true, "ValidateUpdate": true, "ValidateDelete": true}

// rewriteWebhooks moves ctrl.NewWebhookManagedBy(mgr).For(obj) to
// webhook.ManagedBy(mgr, obj), and CustomDefaulter and CustomValidator
// implementations in this file to admission.Defaulter[T] and
// admission.Validator[T] where every method starts with the scaffold's
// `x, ok := obj.(*T); if !ok { ... }`.
func (r *fileRewriter) rewriteWebhooks() {
	builderPaths := []string{crModule, crModule + "/pkg/builder"}
	replaceExprs(r.file, func(e ast.Expr) ast.Expr {
		call, ok := e.(*ast.CallExpr)
		if !ok {
			return e
		}
		// NewWebhookManagedBy(mgr, obj), the newer form.
		if (r.isCR(call.Fun, "NewWebhookManagedBy", builderPaths...) || r.isCR(call.Fun, "WebhookManagedBy", builderPaths...)) && len(call.Args) == 2 {
			return r.managedBy(call, call.Args[0], call.Args[1])
		}
		// NewWebhookManagedBy(mgr).For(obj).
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "For" || len(call.Args) != 1 {
			return e
		}
		inner, ok := sel.X.(*ast.CallExpr)
		if !ok || len(inner.Args) != 1 || !(r.isCR(inner.Fun, "NewWebhookManagedBy", builderPaths...) || r.isCR(inner.Fun, "WebhookManagedBy", builderPaths...)) {
			return e
		}
		return r.managedBy(call, inner.Args[0], call.Args[0])
	})

	types := r.typedWebhooks()
	for _, d := range r.file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, s := range gd.Specs {
			r.rewriteAssertion(s.(*ast.ValueSpec), types)
		}
	}
}

func (r *fileRewriter) managedBy(at *ast.CallExpr, mgr, obj ast.Expr) ast.Expr {
	r.rep.count(kindWebhook, r.name)
	fun := &ast.SelectorExpr{X: r.im.qualifier(kl("webhook"), at.Pos()), Sel: &ast.Ident{Name: "ManagedBy"}}
	return &ast.CallExpr{Fun: fun, Lparen: at.Lparen, Args: []ast.Expr{mgr, obj}, Rparen: at.Rparen}
}

// typedWebhooks rewrites the webhook methods of each receiver type whose
// methods can all be converted, and returns those types' T, by receiver
// type name.
func (r *fileRewriter) typedWebhooks() map[string]ast.Expr {
	runtimeLocal := r.localOf(runtimePkg)
	if runtimeLocal == "" || len(r.cr) == 0 {
		return nil
	}
	byType := map[string][]*ast.FuncDecl{}
	for _, d := range r.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if ok && fd.Recv != nil && webhookMethods[fd.Name.Name] && fd.Body != nil && len(objectParams(fd, runtimeLocal)) > 0 {
			name := recvName(fd)
			byType[name] = append(byType[name], fd)
		}
	}
	result := map[string]ast.Expr{}
	for name, methods := range byType {
		var plans []*methodPlan
		var elem ast.Expr
		ok := true
		for _, fd := range methods {
			p := planMethod(fd, runtimeLocal)
			if p == nil || (elem != nil && p.typ != nil && exprString(elem) != exprString(p.typ)) {
				ok = false
				break
			}
			if elem == nil {
				elem = p.typ
			}
			plans = append(plans, p)
		}
		if !ok || elem == nil {
			r.note(methods[0], name+": convert to admission.Defaulter[*T] / admission.Validator[*T] by hand (methods take *T instead of runtime.Object)")
			continue
		}
		for _, p := range plans {
			p.apply(elem)
			r.rep.count(kindWebhook, r.name)
		}
		result[name] = elem
	}
	return result
}

// rewriteAssertion turns `var _ webhook.CustomDefaulter = &D{}` into
// `var _ admission.Defaulter[*T] = &D{}` for a converted D.
func (r *fileRewriter) rewriteAssertion(vs *ast.ValueSpec, types map[string]ast.Expr) {
	paths := []string{crModule + "/pkg/webhook", crModule + "/pkg/webhook/admission"}
	iface := ""
	switch {
	case r.isCR(vs.Type, "CustomDefaulter", paths...):
		iface = "Defaulter"
	case r.isCR(vs.Type, "CustomValidator", paths...):
		iface = "Validator"
	default:
		return
	}
	if len(vs.Values) != 1 {
		return
	}
	elem, ok := types[typeName(vs.Values[0])]
	if !ok {
		return // the selector pass leaves a note
	}
	pos := vs.Type.Pos()
	vs.Type = &ast.IndexExpr{
		X:      &ast.SelectorExpr{X: r.im.qualifier(kl("webhook/admission"), pos), Sel: &ast.Ident{NamePos: pos, Name: iface}},
		Lbrack: pos,
		Index:  cloneType(elem, pos), // at this line: positions order the printer's comments
		Rbrack: pos,
	}
	r.rep.count(kindWebhook, r.name)
}

// typeName is D of &D{}, D{} or (*D)(nil).
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.UnaryExpr:
		return typeName(e.X)
	case *ast.CompositeLit:
		return typeName(e.Type)
	case *ast.CallExpr:
		return typeName(e.Fun)
	case *ast.ParenExpr:
		return typeName(e.X)
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

func recvName(fd *ast.FuncDecl) string { return typeName(fd.Recv.List[0].Type) }

// objectParams returns the parameter fields of fd typed runtime.Object.
func objectParams(fd *ast.FuncDecl, runtimeLocal string) []*ast.Field {
	var out []*ast.Field
	for _, f := range fd.Type.Params.List {
		if l, n, ok := pkgSelector(f.Type); ok && l == runtimeLocal && n == "Object" {
			out = append(out, f)
		}
	}
	return out
}

func exprString(e ast.Expr) string {
	var b strings.Builder
	_ = printer.Fprint(&b, token.NewFileSet(), e)
	return b.String()
}
