package main

import (
	"go/ast"
	"go/token"
	"strings"
)

// notePrefix starts every comment the tool leaves for a manual step.
const notePrefix = "// kubeloop-migrate: "

// note leaves "// kubeloop-migrate: text" on the line above the line of n,
// unless the same note is already there (a second run adds nothing).
func (r *fileRewriter) note(n ast.Node, text string) {
	tf := r.fset.File(n.Pos())
	if tf == nil {
		return
	}
	line := tf.Line(n.Pos())
	text = notePrefix + strings.ReplaceAll(text, "\n", " ")
	for _, cg := range r.file.Comments {
		for _, c := range cg.List {
			if c.Text == text {
				if l := tf.Line(c.Pos()); l == line-1 || l == line {
					return
				}
			}
		}
	}
	pos := tf.LineStart(line)
	cg := &ast.CommentGroup{List: []*ast.Comment{{Slash: pos, Text: text}}}
	r.file.Comments = insertComment(r.file.Comments, cg)
	r.rep.changedBy(r.name)
}

// insertComment keeps file.Comments sorted by position, as go/printer needs.
func insertComment(list []*ast.CommentGroup, cg *ast.CommentGroup) []*ast.CommentGroup {
	i := 0
	for i < len(list) && list[i].Pos() <= cg.Pos() {
		i++
	}
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = cg
	return list
}

// manualItems returns the notes in src, one per line, as file:line: text.
func manualItems(fset *token.FileSet, file *ast.File) []string {
	var items []string
	for _, cg := range file.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, notePrefix) {
				p := fset.Position(c.Pos())
				items = append(items, p.Filename+":"+itoa(p.Line)+": "+strings.TrimPrefix(c.Text, notePrefix))
			}
		}
	}
	return items
}
