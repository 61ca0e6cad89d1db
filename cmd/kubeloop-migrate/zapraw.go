package main

import "go/ast"

// zaprawModule is kubeloop's twin of controller-runtime's pkg/log/zap with
// go.uber.org/zap's types: its own module, so that kubeloop itself needs
// no go.uber.org/zap.
const zaprawModule = klModule + "/log/zap/zapraw"

const crZap = crModule + "/pkg/log/zap"

// zaprawRule sends controller-runtime's pkg/log/zap to zapraw as a whole:
// every name is there, with its zap types.
var zaprawRule = pkgRule{to: zaprawModule}

// zapTypedNames are the names of controller-runtime's pkg/log/zap that
// take or return go.uber.org/zap types, which kubeloop's log/zap (on
// log/slog) cannot offer.
var zapTypedNames = map[string]bool{
	"NewRaw": true, "RawZapOpts": true, "Encoder": true, "KubeAwareEncoder": true, "NewEncoderFunc": true,
}

// zapTypedFields are the fields of its Options that hold go.uber.org/zap
// types.
var zapTypedFields = map[string]bool{"Encoder": true, "NewEncoder": true, "ZapOpts": true}

// usesZapTypes reports whether f, which imports controller-runtime's
// pkg/log/zap, needs its go.uber.org/zap types: it uses a zap-typed name
// (zapTypedNames), sets or reads Options.ZapOpts or Options.NewEncoder
// (any x.ZapOpts, x.NewEncoder), sets Encoder in an Options literal, or
// uses go.uber.org/zap itself (a zap.Option, an AtomicLevel, a
// *zap.Logger passed around). zapcore's levels, time encoders and
// EncoderConfig callbacks alone do not count: log/zap takes those.
func usesZapTypes(f *ast.File) bool {
	local, uber := "", ""
	for _, spec := range f.Imports {
		switch importPath(spec) {
		case crZap:
			local = localName(spec)
		case uberZapPkg:
			uber = localName(spec)
		}
	}
	if local == "" || local == "_" || local == "." {
		return false
	}
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.SelectorExpr:
			pkg, name, isPkg := pkgSelector(n)
			switch {
			case isPkg && pkg == local:
				found = zapTypedNames[name]
			case isPkg && uber != "" && pkg == uber:
				found = true
			default:
				found = n.Sel.Name == "ZapOpts" || n.Sel.Name == "NewEncoder"
			}
		case *ast.CompositeLit:
			if l, name, ok := pkgSelector(n.Type); ok && l == local && name == "Options" {
				for _, elt := range n.Elts {
					if kv, ok := elt.(*ast.KeyValueExpr); ok {
						if key, ok := kv.Key.(*ast.Ident); ok && zapTypedFields[key.Name] {
							found = true
						}
					}
				}
			}
		}
		return !found
	})
	return found
}

// rule is the rule for the controller-runtime import path p in this file:
// packages[p], but zaprawRule for pkg/log/zap in a package that uses its
// zap types.
func (r *fileRewriter) rule(p string) (pkgRule, bool) {
	if p == crZap && r.pkg.zapRaw {
		return zaprawRule, true
	}
	rule, ok := packages[p]
	return rule, ok
}
