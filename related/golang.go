package related

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/org/warden/hunks"
)

// goDecl is a top-level declaration: its name and lines.
type goDecl struct {
	name, path string
	start, end int
	text       string
}

// goDecls lists the top-level declarations of a parsed file, doc comments
// included; exported only when asked.
func goDecls(fset *token.FileSet, f *ast.File, p string, src []byte, exportedOnly bool) []goDecl {
	var out []goDecl
	ls := strings.Split(string(src), "\n") // once: a file of many declarations stays linear
	add := func(name string, from, to token.Pos) {
		if name == "_" || (exportedOnly && !ast.IsExported(name)) {
			return
		}
		s, e := fset.Position(from).Line, fset.Position(to).Line
		out = append(out, goDecl{name: name, path: p, start: s, end: e, text: linesOf(ls, s, e)})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			from := d.Pos()
			if d.Doc != nil {
				from = d.Doc.Pos()
			}
			add(d.Name.Name, from, d.End())
		case *ast.GenDecl:
			from := d.Pos()
			if d.Doc != nil {
				from = d.Doc.Pos()
			}
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					add(s.Name.Name, from, d.End())
				case *ast.ValueSpec:
					for _, n := range s.Names {
						add(n.Name, from, d.End())
					}
				}
			}
		}
	}
	return out
}

// goParts is the enclosing declaration (unless the whole file is given)
// and the declarations of what the changed lines use.
func goParts(c *hunks.Chunk, src []byte, changed map[int]string, repo fs.FS, ix *Index, whole bool) []Part {
	fset, f, err := ix.parsed(c.Path, src)
	if err != nil {
		return lexParts(c, src, changed, repo, ix, whole)
	}
	var parts []Part
	own := ix.goDeclsOf(c.Path, src, false)
	if !whole {
		for _, d := range own {
			if d.start <= c.EndLine && d.end >= c.StartLine {
				parts = append(parts, Part{Kind: Enclosing, Path: c.Path, Name: d.name, StartLine: d.start, EndLine: d.end, Text: d.text})
			}
		}
	}
	// What the changed lines use, in order: plain names, and pkg.Name of
	// the file's imports.
	imports := map[string]string{} // local name → import path
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = p
	}
	type use struct{ pkg, name string }
	var uses []use
	seen := map[use]bool{}
	add := func(u use) {
		if !seen[u] {
			seen[u] = true
			uses = append(uses, u)
		}
	}
	sels := map[*ast.Ident]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			sels[n.Sel] = true
			if _, ok := changed[fset.Position(n.Sel.Pos()).Line]; !ok {
				return true
			}
			if x, ok := n.X.(*ast.Ident); ok && imports[x.Name] != "" {
				sels[x] = true
				add(use{imports[x.Name], n.Sel.Name})
			} else {
				add(use{"", n.Sel.Name}) // a method or field: by its name
			}
		case *ast.Ident:
			if _, ok := changed[fset.Position(n.Pos()).Line]; ok && !sels[n] && types.Universe.Lookup(n.Name) == nil {
				add(use{"", n.Name})
			}
		}
		return true
	})
	dir := path.Dir(c.Path)
	if dir == "." {
		dir = ""
	}
	test := strings.HasSuffix(c.Path, "_test.go")
	local := own
	for _, sf := range ix.siblings(repo, dir, ".go", c.Path, func(name string) bool { return test || !strings.HasSuffix(name, "_test.go") }) {
		local = append(local, ix.goDeclsOf(sf.path, sf.data, false)...)
	}
	module := goModule(repo)
	other := map[string][]goDecl{}
	for _, u := range uses {
		var decls []goDecl
		if u.pkg == "" {
			decls = local
		} else if rel, ok := strings.CutPrefix(u.pkg, module+"/"); ok && module != "" {
			if _, done := other[rel]; !done {
				for _, sf := range ix.siblings(repo, rel, ".go", "", func(name string) bool { return !strings.HasSuffix(name, "_test.go") }) {
					other[rel] = append(other[rel], ix.goDeclsOf(sf.path, sf.data, true)...)
				}
				if other[rel] == nil {
					other[rel] = []goDecl{} // read once
				}
			}
			decls = other[rel]
		}
		for _, d := range decls {
			if d.name == u.name {
				parts = append(parts, Part{Kind: Declaration, Path: d.path, Name: qualified(u.pkg, u.name), StartLine: d.start, EndLine: d.end, Text: d.text})
			}
		}
	}
	return parts
}

func qualified(pkg, name string) string {
	if pkg == "" {
		return name
	}
	return path.Base(pkg) + "." + name
}

// parseDecls parses one other file and returns its declarations, each
// tagged with the file's path.
func parseDecls(p string, b []byte, exportedOnly bool) []goDecl {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, b, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	return goDecls(fset, f, p, b, exportedOnly)
}

// goModule is the module path of go.mod at the repository's root; "" when
// there is none.
func goModule(repo fs.FS) string {
	if repo == nil {
		return ""
	}
	b, err := fs.ReadFile(repo, "go.mod")
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
