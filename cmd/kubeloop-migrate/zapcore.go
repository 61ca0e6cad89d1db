package main

import (
	"go/ast"
	"strings"
)

const (
	zapcorePkg = "go.uber.org/zap/zapcore"
	uberZapPkg = "go.uber.org/zap"
)

// zapcoreNames are the zapcore values kubeloop's log/zap has under the
// same name: the levels (of type zap.LevelValue) and the time encoders.
var zapcoreNames = map[string]bool{
	"DebugLevel": true, "InfoLevel": true, "WarnLevel": true, "ErrorLevel": true,
	"DPanicLevel": true, "PanicLevel": true, "FatalLevel": true,
	"ISO8601TimeEncoder": true, "RFC3339TimeEncoder": true, "RFC3339NanoTimeEncoder": true,
	"EpochTimeEncoder": true, "EpochMillisTimeEncoder": true, "EpochNanosTimeEncoder": true,
}

// rewriteZapcore moves, in a file that imports controller-runtime's
// log/zap, the zapcore values that kubeloop's log/zap has: zapcore.XLevel
// -> zap.XLevel, zapcore.Level(n) -> zap.LevelValue(n), zapcore.XTimeEncoder
// -> zap.XTimeEncoder. In a package that goes to zapraw (it uses
// go.uber.org/zap, see usesZapTypes) zapcore's values stay: zapraw takes
// them. finishImports then drops the zapcore import if nothing else uses
// it.
func (r *fileRewriter) rewriteZapcore() {
	if r.localOfCR(crZap) == "" || r.pkg.zapRaw {
		return
	}
	zapcore := r.localOf(zapcorePkg)
	if zapcore == "" {
		return
	}
	// Kept: the zapcore selectors inside functions that take a
	// *zapcore.EncoderConfig (EncoderConfigOptions: their fields hold
	// zapcore's own encoders), and those assigned to an EncoderConfig's
	// Encode* field.
	keep := map[ast.Expr]bool{}
	keepAll := func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			if e, ok := n.(ast.Expr); ok {
				keep[e] = true
			}
			return true
		})
	}
	ast.Inspect(r.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			if takesEncoderConfig(n.Type, zapcore) {
				keepAll(n)
				return false
			}
		case *ast.FuncDecl:
			if takesEncoderConfig(n.Type, zapcore) {
				keepAll(n)
				return false
			}
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				if sel, ok := lhs.(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "Encode") && i < len(n.Rhs) {
					keepAll(n.Rhs[i])
				}
			}
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok && strings.HasPrefix(id.Name, "Encode") {
				keepAll(n.Value)
			}
		}
		return true
	})
	replaceExprs(r.file, func(e ast.Expr) ast.Expr {
		if keep[e] {
			return e
		}
		switch e := e.(type) {
		case *ast.SelectorExpr:
			if l, n, ok := pkgSelector(e); ok && l == zapcore && zapcoreNames[n] {
				r.rep.count(kindLogger, r.name)
				return &ast.SelectorExpr{X: r.im.qualifier(kl("log/zap"), e.Pos()), Sel: &ast.Ident{NamePos: e.Sel.NamePos, Name: n}}
			}
		case *ast.CallExpr:
			if l, n, ok := pkgSelector(e.Fun); ok && l == zapcore && n == "Level" && len(e.Args) == 1 && !e.Ellipsis.IsValid() {
				r.rep.count(kindLogger, r.name)
				fun := e.Fun.(*ast.SelectorExpr)
				e.Fun = &ast.SelectorExpr{X: r.im.qualifier(kl("log/zap"), fun.Pos()), Sel: &ast.Ident{NamePos: fun.Sel.NamePos, Name: "LevelValue"}}
			}
		}
		return e
	})
}

// takesEncoderConfig reports whether a function type has a
// *zapcore.EncoderConfig parameter (zapcore is the import's local name).
func takesEncoderConfig(ft *ast.FuncType, zapcore string) bool {
	if ft == nil || ft.Params == nil {
		return false
	}
	for _, p := range ft.Params.List {
		if star, ok := p.Type.(*ast.StarExpr); ok {
			if l, n, ok := pkgSelector(star.X); ok && l == zapcore && n == "EncoderConfig" {
				return true
			}
		}
	}
	return false
}
