package main

import "go/ast"

// rewriteEnvtest adapts the two envtest calls whose types kubeloop cannot
// keep, in a file that imports controller-runtime's envtest:
//
//   - CRDs in an Environment or CRDInstallOptions literal: controller-
//     runtime's are []*apiextensionsv1.CustomResourceDefinition, kubeloop's
//     unstructured (it does not depend on k8s.io/apiextensions-apiserver),
//     so the value is wrapped with envtest.CRDsOf, which converts any
//     slice of API objects.
//   - env.AddUser(user, baseConfig), controller-runtime's two-argument
//     form returning an *AuthenticatedUser: kubeloop's AddUser takes the
//     user alone and returns a *rest.Config, so the call becomes
//     env.AddAuthenticatedUser(user, baseConfig), which has
//     controller-runtime's signature.
func (r *fileRewriter) rewriteEnvtest() {
	envtest := r.localOfCR(crModule + "/pkg/envtest")
	if envtest == "" {
		return
	}
	ast.Inspect(r.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if !r.isCR(n.Type, "Environment", crModule+"/pkg/envtest") && !r.isCR(n.Type, "CRDInstallOptions", crModule+"/pkg/envtest") {
				return true
			}
			for _, elt := range n.Elts {
				kv, ok := elt.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if key, ok := kv.Key.(*ast.Ident); !ok || key.Name != "CRDs" || r.isCRDsOf(kv.Value) {
					continue
				}
				fun := &ast.SelectorExpr{X: r.im.qualifier(kl("envtest"), kv.Value.Pos()), Sel: &ast.Ident{Name: "CRDsOf"}}
				kv.Value = &ast.CallExpr{Fun: fun, Lparen: kv.Value.Pos(), Args: []ast.Expr{kv.Value}, Rparen: kv.Value.End()}
				r.rep.count(kindEnvtest, r.name)
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "AddUser" && len(n.Args) == 2 && !n.Ellipsis.IsValid() {
				sel.Sel.Name = "AddAuthenticatedUser"
				r.rep.count(kindEnvtest, r.name)
			}
		}
		return true
	})
}

// isCRDsOf reports whether e is already a call of envtest.CRDsOf (a
// second run changes nothing).
func (r *fileRewriter) isCRDsOf(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "CRDsOf"
}
