package main

import (
	"go/ast"
	"go/token"
)

// rewriteFields applies the field rules to composite literals of
// controller-runtime types: Type{Field: value}.
func (r *fileRewriter) rewriteFields() {
	ast.Inspect(r.file, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		rules := r.fieldRules(lit.Type)
		if rules == nil {
			return true
		}
		var elts []ast.Expr
		for _, elt := range lit.Elts {
			if r.rewriteField(elt, rules) {
				elts = append(elts, elt)
			}
		}
		lit.Elts = elts
		return true
	})
}

// fieldRules returns the rules of the controller-runtime type t, or nil.
func (r *fileRewriter) fieldRules(t ast.Expr) map[string]fieldRule {
	local, name, ok := pkgSelector(t)
	if !ok {
		return nil
	}
	p, ok := r.cr[local]
	if !ok || (p == crZap && r.pkg.zapRaw) {
		return nil // zapraw's Options has every field of controller-runtime's
	}
	return fields[p+"."+name]
}

// rewriteField applies rules to one element of a literal and reports
// whether the element stays.
func (r *fileRewriter) rewriteField(elt ast.Expr, rules map[string]fieldRule) bool {
	kv, ok := elt.(*ast.KeyValueExpr)
	if !ok {
		return true
	}
	key, ok := kv.Key.(*ast.Ident)
	if !ok {
		return true
	}
	rule, ok := rules[key.Name]
	if !ok {
		return true
	}
	switch {
	case rule.rename != "":
		key.Name = rule.rename
		r.rep.count(kindField, r.name)
	case rule.drop:
		r.note(kv, rule.note)
		r.rep.count(kindField, r.name)
		return false
	case rule.deref:
		kv.Value = r.derefValue(kv.Value)
		r.rep.count(kindField, r.name)
	case rule.note != "":
		r.note(kv, key.Name+": "+rule.note)
	}
	return true
}

// rewriteFieldAssignments applies the field rules to assignments to a
// field of a variable or parameter declared with a controller-runtime
// type that has rules (options := ctrl.Options{...}; options.NewCache =
// ...; func(o *zap.Options) { o.ZapOpts = ... }): a renamed field is
// renamed, a pointer that became a value loses its & (o.LeaseDuration =
// &d is o.LeaseDuration = d, o.LeaseDuration == nil is == 0,
// *o.LeaseDuration is o.LeaseDuration) and a field
// kubeloop lacks gets its note. The variables are
// matched by name within the file, so a dropped field is only noted
// there, never removed.
func (r *fileRewriter) rewriteFieldAssignments() {
	vars := map[string]map[string]fieldRule{}
	declare := func(name *ast.Ident, typ ast.Expr) {
		if u, ok := typ.(*ast.UnaryExpr); ok && u.Op == token.AND {
			typ = u.X
		}
		if lit, ok := typ.(*ast.CompositeLit); ok {
			typ = lit.Type
		}
		if star, ok := typ.(*ast.StarExpr); ok {
			typ = star.X
		}
		if rules := r.fieldRules(typ); rules != nil && name.Name != "_" {
			vars[name.Name] = rules
		}
	}
	ast.Inspect(r.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE && len(n.Lhs) == len(n.Rhs) {
				for i, lhs := range n.Lhs {
					if id, ok := lhs.(*ast.Ident); ok {
						declare(id, n.Rhs[i])
					}
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				switch {
				case n.Type != nil:
					declare(id, n.Type)
				case i < len(n.Values):
					declare(id, n.Values[i])
				}
			}
		case *ast.Field:
			for _, id := range n.Names {
				declare(id, n.Type)
			}
		}
		return true
	})
	if len(vars) == 0 {
		return
	}
	ruleOf := func(e ast.Expr) (fieldRule, string, bool) {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return fieldRule{}, "", false
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok || vars[x.Name] == nil {
			return fieldRule{}, "", false
		}
		rule, ok := vars[x.Name][sel.Sel.Name]
		return rule, sel.Sel.Name, ok
	}
	r.dropStatements(ruleOf)
	ast.Inspect(r.file, func(n ast.Node) bool {
		if be, ok := n.(*ast.BinaryExpr); ok {
			r.derefComparison(be, ruleOf)
			return true
		}
		as, ok := n.(*ast.AssignStmt)
		if !ok || as.Tok == token.DEFINE {
			return true
		}
		for i, lhs := range as.Lhs {
			rule, field, ok := ruleOf(lhs)
			switch {
			case !ok:
			case rule.rename != "":
				lhs.(*ast.SelectorExpr).Sel.Name = rule.rename
				r.rep.count(kindField, r.name)
			case rule.deref && len(as.Lhs) == len(as.Rhs) && as.Tok == token.ASSIGN:
				as.Rhs[i] = r.derefValue(as.Rhs[i])
				r.rep.count(kindField, r.name)
			case rule.note != "":
				r.note(as, field+": "+rule.note)
			}
		}
		return true
	})
	// *x.LeaseDuration reads (or writes) the value, which the field now is.
	replaceExprs(r.file, func(e ast.Expr) ast.Expr {
		if star, ok := e.(*ast.StarExpr); ok {
			if rule, _, ok := ruleOf(star.X); ok && rule.deref {
				r.rep.count(kindField, r.name)
				return star.X
			}
		}
		return e
	})
}

// dropStatements removes, with the field's note, the statements that only
// set a field the rules drop (kubeloop has no such option and needs none):
// x.LeaderElectionResourceLock = v, and an if without else or init whose
// condition calls nothing and whose body is only such an assignment (a
// config loader's "if o.F == "" && cfg.F != "" { o.F = cfg.F }").
func (r *fileRewriter) dropStatements(ruleOf func(ast.Expr) (fieldRule, string, bool)) {
	dropped := func(st ast.Stmt) (fieldRule, string, bool) {
		as, ok := st.(*ast.AssignStmt)
		if !ok || as.Tok != token.ASSIGN || len(as.Lhs) != 1 {
			return fieldRule{}, "", false
		}
		rule, field, ok := ruleOf(as.Lhs[0])
		return rule, field, ok && rule.drop && !hasCall(as.Rhs[0])
	}
	ast.Inspect(r.file, func(n ast.Node) bool {
		blk, ok := n.(*ast.BlockStmt)
		if !ok {
			return true
		}
		keep := blk.List[:0]
		for _, st := range blk.List {
			rule, field, drop := dropped(st)
			if ifs, ok := st.(*ast.IfStmt); ok && ifs.Init == nil && ifs.Else == nil && len(ifs.Body.List) == 1 && !hasCall(ifs.Cond) {
				rule, field, drop = dropped(ifs.Body.List[0])
			}
			if !drop {
				keep = append(keep, st)
				continue
			}
			r.note(st, field+": "+rule.note)
			r.rep.count(kindField, r.name)
		}
		blk.List = keep
		return true
	})
}

// hasCall reports whether e calls a function (and so may have effects).
func hasCall(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if _, ok := n.(*ast.CallExpr); ok {
			found = true
		}
		return !found
	})
	return found
}

// derefComparison turns x.Field == nil (or !=) into x.Field == 0 for a
// field that was a pointer to a duration and is a time.Duration in
// kubeloop (the zero duration means "not set" there, as nil did).
func (r *fileRewriter) derefComparison(be *ast.BinaryExpr, ruleOf func(ast.Expr) (fieldRule, string, bool)) {
	if be.Op != token.EQL && be.Op != token.NEQ {
		return
	}
	for _, side := range []*ast.Expr{&be.X, &be.Y} {
		other := be.Y
		if side == &be.Y {
			other = be.X
		}
		if id, ok := (*side).(*ast.Ident); !ok || id.Name != "nil" {
			continue
		}
		if rule, _, ok := ruleOf(other); ok && rule.deref {
			*side = &ast.BasicLit{ValuePos: (*side).Pos(), Kind: token.INT, Value: "0"}
			r.rep.count(kindField, r.name)
		}
	}
}

// derefValue is the value for a field that took a pointer and takes the
// value in kubeloop: &x is x, nil is 0, and any other pointer p is
// ptr.Deref(p, 0), so a nil pointer still means the default, as it did.
func (r *fileRewriter) derefValue(e ast.Expr) ast.Expr {
	switch v := e.(type) {
	case *ast.UnaryExpr:
		if v.Op == token.AND {
			return v.X
		}
	case *ast.Ident:
		if v.Name == "nil" {
			return &ast.BasicLit{ValuePos: v.Pos(), Kind: token.INT, Value: "0"}
		}
	case *ast.CallExpr:
		if local, name, ok := pkgSelector(v.Fun); ok && name == "Deref" && r.localOf("k8s.io/utils/ptr") == local && len(v.Args) == 2 {
			return e // already migrated
		}
	}
	fun := &ast.SelectorExpr{X: r.im.qualifier("k8s.io/utils/ptr", e.Pos()), Sel: &ast.Ident{Name: "Deref"}}
	return &ast.CallExpr{Fun: fun, Lparen: e.End(), Args: []ast.Expr{e, &ast.BasicLit{ValuePos: e.End(), Kind: token.INT, Value: "0"}}, Rparen: e.End()}
}
