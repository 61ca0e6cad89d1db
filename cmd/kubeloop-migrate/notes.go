package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
)

// notePrefix starts every comment the tool leaves for a manual step.
const notePrefix = "// kubeloop-migrate: "

// note leaves "// kubeloop-migrate: text" on the line above the line of n,
// once per file: the first use of a symbol gets the note, the others are
// only counted for the summary, and a note the file already holds (from
// an earlier run) is not added again.
func (r *fileRewriter) note(n ast.Node, text string) {
	tf := r.fset.File(n.Pos())
	if tf == nil {
		return
	}
	text = notePrefix + strings.ReplaceAll(text, "\n", " ")
	r.rep.use(r.name, text)
	if r.noted == nil {
		r.noted = map[string]bool{}
		for _, cg := range r.file.Comments {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, notePrefix) {
					r.noted[c.Text] = true
				}
			}
		}
	}
	if r.noted[text] {
		return
	}
	r.noted[text] = true
	line := tf.Line(n.Pos())
	pos := tf.LineStart(line)
	if pos == n.Pos() || r.startsDecl(pos) {
		// A line that starts at column 1 (a top-level declaration): a
		// comment at the same position would print after the first token.
		// It is inserted into the printed text instead (placeDeclNotes).
		for i, d := range r.file.Decls {
			if tf.Line(d.Pos()) == line {
				r.declNotes = append(r.declNotes, declNote{decl: i, text: text})
				r.rep.changedBy(r.name)
				return
			}
		}
	}
	cg := &ast.CommentGroup{List: []*ast.Comment{{Slash: pos, Text: text}}}
	r.file.Comments = insertComment(r.file.Comments, cg)
	r.rep.changedBy(r.name)
}

// startsDecl reports whether a top-level declaration starts at pos.
func (r *fileRewriter) startsDecl(pos token.Pos) bool {
	for _, d := range r.file.Decls {
		if d.Pos() == pos {
			return true
		}
	}
	return false
}

// declNote is a note for the line of a top-level declaration, by index.
type declNote struct {
	decl int
	text string
}

// placeDeclNotes inserts the notes on top-level declarations into src,
// the printed file, on the line above each declaration's first token,
// unless that line already holds the note.
func placeDeclNotes(src []byte, notes []declNote) ([]byte, error) {
	if len(notes) == 0 {
		return src, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(src), "\n")
	insert := map[int][]string{} // 0-based line -> notes before it
	for _, n := range notes {
		if n.decl >= len(f.Decls) {
			continue
		}
		l := fset.Position(f.Decls[n.decl].Pos()).Line - 1
		if l > 0 && strings.TrimSpace(lines[l-1]) == n.text || slices.Contains(insert[l], n.text) {
			continue
		}
		insert[l] = append(insert[l], n.text)
	}
	var out []string
	for i, line := range lines {
		out = append(out, insert[i]...)
		out = append(out, line)
	}
	return []byte(strings.Join(out, "\n")), nil
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

// manualItem is one note in a file after the run.
type manualItem struct {
	file string
	line int
	text string // without notePrefix
}

// manualItems returns the notes in file.
func manualItems(fset *token.FileSet, file *ast.File) []manualItem {
	var items []manualItem
	for _, cg := range file.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, notePrefix) {
				p := fset.Position(c.Pos())
				items = append(items, manualItem{file: p.Filename, line: p.Line, text: strings.TrimPrefix(c.Text, notePrefix)})
			}
		}
	}
	return items
}
