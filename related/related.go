package related

import (
	"bytes"
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/org/warden/hunks"
)

// Bounds of the search.
const (
	// DefaultMaxChars is the context budget when Options.MaxChars is 0:
	// about 1,500 tokens, a small part of a request's deadline.
	DefaultMaxChars = 6000
	// WholeFileChars: a file at most this long (and within the budget) is
	// given whole.
	WholeFileChars = 4000
	// MaxIndexFiles and MaxIndexBytes bound the files read to find
	// declarations: per directory, and per file.
	MaxIndexFiles = 64
	MaxIndexBytes = 256 << 10
	// MaxBlockLines caps one lexical definition's block.
	MaxBlockLines = 60
)

// Options configure the search.
type Options struct {
	// Source reads a changed file's new side (the chunk's file).
	Source func(path string) ([]byte, error)
	// Repo is the repository at the reviewed revision, for the other
	// files; nil: the chunk's own file only.
	Repo fs.FS
	// MaxChars is the budget of all parts' text; 0: DefaultMaxChars.
	MaxChars int
	// Index, when set, keeps what was read and parsed for the next chunks
	// of the same review (one per review); nil: none kept.
	Index *Index
}

// Index keeps the directories read and the files parsed by Gather, so
// that the chunks of one review read and parse each file once. The zero
// value is ready; it is safe for concurrent use. It holds at most
// MaxIndexFiles files of MaxIndexBytes per directory read.
type Index struct {
	mu    sync.Mutex
	dirs  map[string][]file
	decls map[string][]goDecl
	defs  map[string][]lexDef
	asts  map[string]parsedGo
}

type parsedGo struct {
	fset *token.FileSet
	f    *ast.File
	err  error
}

// parsed is the chunk's own Go file, parsed once per path (the chunks of
// one file share it; a file's new side does not change within a review).
func (ix *Index) parsed(p string, src []byte) (*token.FileSet, *ast.File, error) {
	ix.mu.Lock()
	pg, ok := ix.asts[p]
	ix.mu.Unlock()
	if !ok {
		pg.fset = token.NewFileSet()
		pg.f, pg.err = parser.ParseFile(pg.fset, p, src, parser.ParseComments|parser.SkipObjectResolution)
		ix.mu.Lock()
		if ix.asts == nil {
			ix.asts = map[string]parsedGo{}
		}
		ix.asts[p] = pg
		ix.mu.Unlock()
	}
	return pg.fset, pg.f, pg.err
}

func (ix *Index) dir(repo fs.FS, dir, ext string) []file {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	key := dir + "\x00" + ext
	if fs, ok := ix.dirs[key]; ok {
		return fs
	}
	if ix.dirs == nil {
		ix.dirs = map[string][]file{}
	}
	fs := readDir(repo, dir, ext)
	ix.dirs[key] = fs
	return fs
}

func (ix *Index) goDeclsOf(p string, data []byte, exportedOnly bool) []goDecl {
	key := fmt.Sprintf("%s\x00%v", p, exportedOnly)
	ix.mu.Lock()
	ds, ok := ix.decls[key]
	ix.mu.Unlock()
	if ok {
		return ds
	}
	ds = parseDecls(p, data, exportedOnly)
	ix.mu.Lock()
	if ix.decls == nil {
		ix.decls = map[string][]goDecl{}
	}
	ix.decls[key] = ds
	ix.mu.Unlock()
	return ds
}

func (ix *Index) lexDefsOf(p string, data []byte) []lexDef {
	ix.mu.Lock()
	ds, ok := ix.defs[p]
	ix.mu.Unlock()
	if ok {
		return ds
	}
	ds = lexDefs(p, data)
	ix.mu.Lock()
	if ix.defs == nil {
		ix.defs = map[string][]lexDef{}
	}
	ix.defs[p] = ds
	ix.mu.Unlock()
	return ds
}

// Kind is what a part is.
type Kind string

// The kinds of part.
const (
	WholeFile   Kind = "file"        // the chunk's whole file
	Enclosing   Kind = "enclosing"   // the declaration around the chunk
	Declaration Kind = "declaration" // of an identifier the changed lines use
)

// Part is one piece of context.
type Part struct {
	Kind      Kind   `json:"kind"`
	Path      string `json:"path"`
	Name      string `json:"name,omitempty"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Text      string `json:"-"`
	Chars     int    `json:"chars"`
}

// Context is what Gather found for one chunk.
type Context struct {
	Parts []Part
	Chars int // of every part's text
	// Omitted names what was found but did not fit the budget.
	Omitted []string
}

// Describe says in one line what the context includes, for the prompt and
// the dry run: "the whole file (18 lines); Sum (stats/sum.go:4-10)".
func (c *Context) Describe() string {
	if c == nil || len(c.Parts)+len(c.Omitted) == 0 {
		return "none beyond the lines shown"
	}
	var out []string
	for _, p := range c.Parts {
		switch p.Kind {
		case WholeFile:
			out = append(out, fmt.Sprintf("the whole file %s (%d lines)", p.Path, p.EndLine))
		case Enclosing:
			out = append(out, fmt.Sprintf("the enclosing declaration %s (%s:%d-%d)", p.Name, p.Path, p.StartLine, p.EndLine))
		default:
			out = append(out, fmt.Sprintf("the declaration of %s (%s:%d-%d)", p.Name, p.Path, p.StartLine, p.EndLine))
		}
	}
	if len(c.Omitted) > 0 {
		out = append(out, "over the budget, left out: "+strings.Join(c.Omitted, ", "))
	}
	return strings.Join(out, "; ")
}

// Gather finds the context of chunk c under opts' budget. It never fails:
// what cannot be read or parsed is left out.
func Gather(c *hunks.Chunk, opts Options) *Context {
	budget := cmp.Or(opts.MaxChars, DefaultMaxChars)
	out := &Context{}
	if opts.Source == nil {
		return out
	}
	src, err := opts.Source(c.Path)
	if err != nil || len(src) == 0 {
		return out
	}
	if opts.Index == nil {
		opts.Index = &Index{}
	}
	changed := changedLines(c)
	var found []Part
	if len(src) <= min(WholeFileChars, budget) {
		found = append(found, Part{Kind: WholeFile, Path: c.Path, StartLine: 1, EndLine: lineCount(src), Text: string(src)})
	}
	if strings.HasSuffix(c.Path, ".go") {
		found = append(found, goParts(c, src, changed, opts.Repo, opts.Index, len(found) > 0)...)
	} else {
		found = append(found, lexParts(c, src, changed, opts.Repo, opts.Index, len(found) > 0)...)
	}
	seen := map[string]bool{}
	for _, p := range found {
		key := fmt.Sprintf("%s:%d-%d", p.Path, p.StartLine, p.EndLine)
		if seen[key] || covered(out.Parts, p) || (p.Path == c.Path && p.StartLine >= c.StartLine-len(c.Before) && p.EndLine <= c.EndLine+len(c.After)) {
			continue // already there, or already shown around the chunk
		}
		seen[key] = true
		p.Chars = len(p.Text)
		if out.Chars+p.Chars > budget {
			out.Omitted = append(out.Omitted, cmp.Or(p.Name, p.Path))
			continue
		}
		out.Chars += p.Chars
		out.Parts = append(out.Parts, p)
	}
	return out
}

// lineCount is the number of lines of src (a last line without a newline
// counts).
func lineCount(src []byte) int {
	n := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// covered reports whether p lies inside a part already taken.
func covered(parts []Part, p Part) bool {
	return slices.ContainsFunc(parts, func(q Part) bool {
		return q.Path == p.Path && q.StartLine <= p.StartLine && q.EndLine >= p.EndLine
	})
}

// changedLines are the new-side numbers of the chunk's added lines, and
// their text.
func changedLines(c *hunks.Chunk) map[int]string {
	m := map[int]string{}
	for _, l := range c.Lines {
		if l.Op == hunks.Add {
			m[l.NewLine] = l.Text
		}
	}
	return m
}

// linesOf returns lines from..to (1-based, inclusive) of ls, joined.
func linesOf(ls []string, from, to int) string {
	from, to = max(from, 1), min(to, len(ls))
	if from > to {
		return ""
	}
	return strings.Join(ls[from-1:to], "\n") + "\n"
}

// file is one file read for the index.
type file struct {
	path string
	data []byte
}

// siblings are the files of dir (in repo) with extension ext, other than
// skip and those keep refuses, in name order, bounded by MaxIndexFiles and
// MaxIndexBytes.
func (ix *Index) siblings(repo fs.FS, dir, ext, skip string, keep func(name string) bool) []file {
	var out []file
	for _, f := range ix.dir(repo, dir, ext) {
		if f.path != skip && (keep == nil || keep(path.Base(f.path))) {
			out = append(out, f)
		}
	}
	return out
}

// readDir reads the files of dir with extension ext, in name order: at most
// MaxIndexFiles, each at most MaxIndexBytes.
func readDir(repo fs.FS, dir, ext string) []file {
	var out []file
	if repo == nil {
		return out
	}
	entries, err := fs.ReadDir(repo, cmp.Or(dir, "."))
	if err != nil {
		return out
	}
	n := 0
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		if e.IsDir() || path.Ext(e.Name()) != ext {
			continue
		}
		if n++; n > MaxIndexFiles {
			break
		}
		if info, err := e.Info(); err != nil || info.Size() > MaxIndexBytes {
			continue
		}
		if b, err := fs.ReadFile(repo, p); err == nil {
			out = append(out, file{p, b})
		}
	}
	return out
}

var identRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
