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
	if !ok {
		return nil
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
		if u, ok := kv.Value.(*ast.UnaryExpr); ok && u.Op == token.AND {
			kv.Value = u.X
			r.rep.count(kindField, r.name)
		} else {
			r.note(kv, key.Name+": "+rule.note)
		}
	case rule.note != "":
		r.note(kv, key.Name+": "+rule.note)
	}
	return true
}

// rewriteFieldAssignments applies the field rules to assignments to a
// field of a variable or parameter declared with a controller-runtime
// type that has rules (options := ctrl.Options{...}; options.NewCache =
// ...; func(o *zap.Options) { o.ZapOpts = ... }): a renamed field is
// renamed and a field kubeloop lacks gets its note. The variables are
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
	ast.Inspect(r.file, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || as.Tok == token.DEFINE {
			return true
		}
		for _, lhs := range as.Lhs {
			sel, ok := lhs.(*ast.SelectorExpr)
			if !ok {
				continue
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok || vars[x.Name] == nil {
				continue
			}
			rule, ok := vars[x.Name][sel.Sel.Name]
			switch {
			case !ok:
			case rule.rename != "":
				sel.Sel.Name = rule.rename
				r.rep.count(kindField, r.name)
			case rule.note != "":
				r.note(as, sel.Sel.Name+": "+rule.note)
			}
		}
		return true
	})
}
