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
