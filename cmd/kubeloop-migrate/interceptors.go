package main

import "go/ast"

const interceptorPkg = crModule + "/pkg/client/interceptor"

// interceptorKeepsWatch are the interceptor.Funcs fields whose callbacks
// are left as they are: Watch's takes a client.WithWatch in kubeloop too,
// and kubeloop's Funcs has no SubResource (a field rule leaves a note).
var interceptorKeepsWatch = map[string]bool{"Watch": true, "SubResource": true}

// interceptorFuncNames returns the package-level functions file names as
// the value of an interceptor.Funcs field: interceptor.Funcs{Get: myGet}.
func interceptorFuncNames(file *ast.File) map[string]bool {
	names := map[string]bool{}
	local := ""
	for _, spec := range file.Imports {
		if importPath(spec) == interceptorPkg {
			local = localName(spec)
		}
	}
	if local == "" {
		return names
	}
	ast.Inspect(file, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		if l, name, ok := pkgSelector(lit.Type); !ok || l != local || name != "Funcs" {
			return true
		}
		for _, elt := range lit.Elts {
			kv, ok := elt.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, ok := kv.Key.(*ast.Ident)
			if !ok || interceptorKeepsWatch[key.Name] {
				continue
			}
			if id, ok := kv.Value.(*ast.Ident); ok {
				names[id.Name] = true
			}
		}
		return true
	})
	return names
}

// rewriteInterceptors changes the client.WithWatch parameters of the
// callbacks in interceptor.Funcs literals to client.Client, kubeloop's
// callback type: in function literals given as field values, and in the
// package-level functions of this package named there. A client.Client
// is all a callback that forwards the call needs (controller-runtime's
// WithWatch embeds it).
func (r *fileRewriter) rewriteInterceptors() {
	client := r.localOfCR(crModule + "/pkg/client")
	if client == "" {
		return
	}
	fix := func(ft *ast.FuncType) {
		for _, f := range ft.Params.List {
			if l, n, ok := pkgSelector(f.Type); ok && l == client && n == "WithWatch" {
				f.Type.(*ast.SelectorExpr).Sel.Name = "Client"
				r.rep.count(kindInterceptor, r.name)
			}
		}
	}
	interceptor := r.localOfCR(interceptorPkg)
	if interceptor != "" {
		ast.Inspect(r.file, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if l, name, ok := pkgSelector(lit.Type); !ok || l != interceptor || name != "Funcs" {
				return true
			}
			for _, elt := range lit.Elts {
				kv, ok := elt.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				key, ok := kv.Key.(*ast.Ident)
				if !ok || interceptorKeepsWatch[key.Name] {
					continue
				}
				if fl, ok := kv.Value.(*ast.FuncLit); ok {
					fix(fl.Type)
				}
			}
			return true
		})
	}
	for _, d := range r.file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && r.pkg.interceptorFuncs[fd.Name.Name] {
			fix(fd.Type)
		}
	}
}
