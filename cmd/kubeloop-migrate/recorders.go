package main

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

const (
	recordPkg = "k8s.io/client-go/tools/record"
	eventsPkg = "k8s.io/client-go/tools/events"
)

// recorderNames returns the fields and variables of a file declared with
// type record.EventRecorder.
func recorderNames(file *ast.File) map[string]bool {
	names := map[string]bool{}
	local := ""
	for _, spec := range file.Imports {
		if importPath(spec) == recordPkg {
			local = localName(spec)
		}
	}
	if local == "" {
		return names
	}
	isRecorder := func(t ast.Expr) bool {
		l, n, ok := pkgSelector(t)
		return ok && l == local && n == "EventRecorder"
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch d := n.(type) {
		case *ast.Field:
			if isRecorder(d.Type) {
				for _, id := range d.Names {
					names[id.Name] = true
				}
			}
		case *ast.ValueSpec:
			if isRecorder(d.Type) {
				for _, id := range d.Names {
					names[id.Name] = true
				}
			}
		}
		return true
	})
	return names
}

// rewriteRecorders moves core/v1 event recorders (record.EventRecorder,
// mgr.GetEventRecorderFor) to the events.k8s.io/v1 recorders kubeloop's
// manager hands out, and their Event and Eventf calls to Eventf with a
// related object (nil) and an action (the reason).
func (r *fileRewriter) rewriteRecorders() {
	recordLocal := r.localOf(recordPkg)
	replaceExprs(r.file, func(e ast.Expr) ast.Expr {
		switch e := e.(type) {
		case *ast.SelectorExpr:
			if l, n, ok := pkgSelector(e); ok && recordLocal != "" && l == recordLocal && (n == "EventRecorder" || n == "FakeRecorder" || n == "NewFakeRecorder") {
				r.rep.count(kindRecorder, r.name)
				return &ast.SelectorExpr{X: r.im.qualifier(eventsPkg, e.Pos()), Sel: &ast.Ident{NamePos: e.Sel.NamePos, Name: n}}
			}
		case *ast.CallExpr:
			r.rewriteRecorderCall(e)
		}
		return e
	})
}

func (r *fileRewriter) rewriteRecorderCall(call *ast.CallExpr) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return
	}
	if sel.Sel.Name == "GetEventRecorderFor" && len(r.cr) > 0 {
		sel.Sel.Name = "GetEventRecorder"
		r.rep.count(kindRecorder, r.name)
		return
	}
	if (sel.Sel.Name != "Event" && sel.Sel.Name != "Eventf") || !r.pkg.recorders[lastName(sel.X)] {
		return
	}
	args := call.Args
	if (sel.Sel.Name == "Event" && len(args) != 4) || (sel.Sel.Name == "Eventf" && len(args) < 4) || call.Ellipsis.IsValid() {
		r.note(call, "events.k8s.io recorders take Eventf(regarding, related, type, reason, action, note, args...): rewrite this call by hand")
		return
	}
	reason := args[2]
	if !simple(reason) {
		r.note(call, "events.k8s.io recorders take Eventf(regarding, related, type, reason, action, note, args...): add the action by hand")
		return
	}
	note := args[3:]
	if sel.Sel.Name == "Event" && !literalWithoutVerbs(args[3]) {
		note = []ast.Expr{&ast.BasicLit{ValuePos: args[3].Pos(), Kind: token.STRING, Value: `"%s"`}, args[3]}
	}
	newArgs := []ast.Expr{args[0], &ast.Ident{NamePos: args[0].End(), Name: "nil"}, args[1], reason, cloneSimple(reason)}
	call.Args = append(newArgs, note...)
	sel.Sel.Name = "Eventf"
	r.rep.count(kindRecorder, r.name)
}

// lastName is the last identifier of x (r.Recorder -> Recorder).
func lastName(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

// literalWithoutVerbs reports whether e is a string literal with no %,
// usable as a format as it is.
func literalWithoutVerbs(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	s, err := strconv.Unquote(lit.Value)
	return err == nil && !strings.Contains(s, "%")
}
