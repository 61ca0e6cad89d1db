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

// noteUberZap is left once per file that uses go.uber.org/zap beside
// controller-runtime's zap package.
const noteUberZap = "kubeloop's log/zap takes none of go.uber.org/zap's values (zap.Option, AtomicLevel, zapcore.Core): " +
	"use zap.LevelValue(n) or zap.<X>Level for levels, and drop the rest"

// rewriteZapcore moves, in a file that imports controller-runtime's
// log/zap, the zapcore values that kubeloop's log/zap has: zapcore.XLevel
// -> zap.XLevel, zapcore.Level(n) -> zap.LevelValue(n), zapcore.XTimeEncoder
// -> zap.XTimeEncoder. Values passed to go.uber.org/zap's own functions
// (uberzap.NewAtomicLevelAt(zapcore.DebugLevel)) stay, and get a note.
// finishImports then drops the zapcore import if nothing else uses it.
func (r *fileRewriter) rewriteZapcore() {
	if r.localOfCR(crModule+"/pkg/log/zap") == "" {
		return
	}
	r.noteEncoderOptions()
	zapcore := r.localOf(zapcorePkg)
	uber := r.localOf(uberZapPkg)
	if uber != "" {
		ast.Inspect(r.file, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if l, _, ok := pkgSelector(sel); ok && l == uber {
					r.note(sel, noteUberZap) // once per file: at the first use
				}
			}
			return true
		})
	}
	if zapcore == "" {
		return
	}
	// The zapcore selectors inside calls of go.uber.org/zap are kept.
	keep := map[ast.Expr]bool{}
	ast.Inspect(r.file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if l, _, ok := pkgSelector(call.Fun); ok && l == uber {
			ast.Inspect(call, func(n ast.Node) bool {
				if e, ok := n.(ast.Expr); ok {
					keep[e] = true
				}
				return true
			})
			return false
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

// localOfCR returns the local name of the controller-runtime import p in
// this file, or "".
func (r *fileRewriter) localOfCR(p string) string {
	for local, path := range r.cr {
		if path == p && !strings.HasPrefix(local, "_") && local != "." {
			return local
		}
	}
	return ""
}

// noteEncoderOptions leaves a note at zap.JSONEncoder(opts...) and
// zap.ConsoleEncoder(opts...) calls with arguments: kubeloop's take none.
func (r *fileRewriter) noteEncoderOptions() {
	ast.Inspect(r.file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		for _, name := range []string{"JSONEncoder", "ConsoleEncoder"} {
			if r.isCR(call.Fun, name, crModule+"/pkg/log/zap") {
				local, _, _ := pkgSelector(call.Fun)
				r.note(call, local+"."+name+": "+noteZapRaw+"zapcore.EncoderConfig options do not apply; remove the arguments")
			}
		}
		return true
	})
}
