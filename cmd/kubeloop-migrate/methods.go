package main

import "go/ast"

// rewriteWatchesMetadata turns the builder's WatchesMetadata(obj, h,
// opts...) into Watches(obj, h, builder.OnlyMetadata, opts...): kubeloop's
// builder has one Watches verb and takes metadata-only watching as an
// option, with the same meaning (the cache holds
// metav1.PartialObjectMetadata, events carry it). Only files that import
// controller-runtime are looked at, as the method name is the builder's.
func (r *fileRewriter) rewriteWatchesMetadata() {
	if len(r.cr) == 0 {
		return
	}
	ast.Inspect(r.file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) < 2 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "WatchesMetadata" {
			return true
		}
		sel.Sel.Name = "Watches"
		only := &ast.SelectorExpr{X: r.im.qualifier(kl("controller/builder"), call.Args[1].End()), Sel: &ast.Ident{Name: "OnlyMetadata"}}
		args := append([]ast.Expr{call.Args[0], call.Args[1], only}, call.Args[2:]...)
		call.Args = args
		r.rep.count(kindRename, r.name)
		return true
	})
}
