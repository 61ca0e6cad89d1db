package main

import (
	"go/ast"
	"reflect"
)

// replaceExprs walks n depth first and replaces every expression held in a
// field or slice of static type ast.Expr by f(e), children before their
// parent. f returns e itself to keep it. go/ast has no such walker (x/tools'
// astutil.Apply is not in the standard library).
func replaceExprs(n ast.Node, f func(ast.Expr) ast.Expr) {
	walkValue(reflect.ValueOf(n), f)
}

var (
	exprType    = reflect.TypeFor[ast.Expr]()
	nodeType    = reflect.TypeFor[ast.Node]()
	objectType  = reflect.TypeFor[*ast.Object]()
	scopeType   = reflect.TypeFor[*ast.Scope]()
	commentType = reflect.TypeFor[*ast.CommentGroup]()
)

func walkValue(v reflect.Value, f func(ast.Expr) ast.Expr) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			walkValue(v.Elem(), f)
		}
	case reflect.Pointer:
		if v.IsNil() || v.Type() == objectType || v.Type() == scopeType || v.Type() == commentType {
			return
		}
		if v.Elem().Kind() == reflect.Struct {
			walkStruct(v.Elem(), f)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			walkSlot(v.Index(i), f)
		}
	}
}

func walkStruct(s reflect.Value, f func(ast.Expr) ast.Expr) {
	for i := 0; i < s.NumField(); i++ {
		if s.Type().Field(i).IsExported() {
			walkSlot(s.Field(i), f)
		}
	}
}

// walkSlot walks the node held in slot and, when the slot is an ast.Expr,
// puts f's answer back into it.
func walkSlot(slot reflect.Value, f func(ast.Expr) ast.Expr) {
	t := slot.Type()
	if t.Kind() != reflect.Slice && !t.Implements(nodeType) && t != exprType {
		return
	}
	walkValue(slot, f)
	if t == exprType && !slot.IsNil() && slot.CanSet() {
		if e := f(slot.Interface().(ast.Expr)); e != nil {
			slot.Set(reflect.ValueOf(e))
		}
	}
}

// uses counts, per identifier name, the selector expressions X.Sel in n
// whose X is that unresolved identifier (a package name).
func uses(n ast.Node) map[string]int {
	m := map[string]int{}
	ast.Inspect(n, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil {
				m[id.Name]++
			}
		}
		return true
	})
	return m
}

// pkgSelector returns the package name and the selected name of e when e
// is pkg.Name with pkg an unresolved identifier.
func pkgSelector(e ast.Expr) (pkg, name string, ok bool) {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return "", "", false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok || id.Obj != nil {
		return "", "", false
	}
	return id.Name, sel.Sel.Name, true
}
