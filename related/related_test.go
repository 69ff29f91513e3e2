package related

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/hunks"
)

// cartGo is a Go file too long to give whole: many functions, and Total,
// whose changed lines call discount (same package, another file) and
// money.Round (another package of the module).
func cartGo() (string, int) {
	var b strings.Builder
	b.WriteString("package cart\n\nimport \"example.com/shop/money\"\n\n")
	for i := range 80 {
		fmt.Fprintf(&b, "// Helper%d is filler.\nfunc Helper%d(x int) int {\n\treturn x + %d\n}\n\n", i, i, i)
	}
	start := strings.Count(b.String(), "\n") + 1
	b.WriteString("// Total is the price after the discount.\nfunc Total(price, pct int) int {\n\tp := discount(price, pct)\n\treturn money.Round(p)\n}\n")
	return b.String(), start
}

const discountGo = `package cart

// discount is the amount taken off price at pct percent: not the price
// left to pay.
func discount(price, pct int) int {
	return price * pct / 100
}
`

const roundGo = `package money

// Round rounds cents to whole units.
func Round(cents int) int { return (cents + 50) / 100 * 100 }

func unexported() {}
`

func cartRepo() (fstest.MapFS, *hunks.Chunk) {
	src, start := cartGo()
	repo := fstest.MapFS{
		"go.mod":                {Data: []byte("module example.com/shop\n\ngo 1.22\n")},
		"cart/cart.go":          {Data: []byte(src)},
		"cart/discount.go":      {Data: []byte(discountGo)},
		"cart/discount_test.go": {Data: []byte("package cart\n\nfunc discount() {}\n")},
		"money/round.go":        {Data: []byte(roundGo)},
	}
	// The change: Total's two body lines (start+2, start+3) are new.
	c := &hunks.Chunk{Path: "cart/cart.go", Language: "Go", StartLine: start + 2, EndLine: start + 3, Lines: []hunks.Line{
		{Op: hunks.Add, Text: "\tp := discount(price, pct)", NewLine: start + 2},
		{Op: hunks.Add, Text: "\treturn money.Round(p)", NewLine: start + 3},
	}}
	return repo, c
}

func source(repo fstest.MapFS) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) { return repo.ReadFile(p) }
}

func names(cx *Context) []string {
	var out []string
	for _, p := range cx.Parts {
		out = append(out, fmt.Sprintf("%s %s %s:%d-%d", p.Kind, p.Name, p.Path, p.StartLine, p.EndLine))
	}
	return out
}

// TestGoCallee: a change whose bug needs the callee's definition gets it
// (same package, another file; and an exported function of another
// package of the module), after the enclosing function, under budget;
// test files are not searched for a non-test file, the builtin-free names
// only.
func TestGoCallee(t *testing.T) {
	t.Parallel()
	repo, c := cartRepo()
	_, start := cartGo()
	cx := Gather(c, Options{Source: source(repo), Repo: repo})
	want := []string{
		fmt.Sprintf("enclosing Total cart/cart.go:%d-%d", start, start+4),
		"declaration discount cart/discount.go:3-7",
		"declaration money.Round money/round.go:3-4",
	}
	if diff := cmp.Diff(want, names(cx)); diff != "" {
		t.Fatalf("Gather parts (-want +got):\n%s", diff)
	}
	if !strings.Contains(cx.Parts[1].Text, "return price * pct / 100") || cx.Chars > DefaultMaxChars || len(cx.Omitted) != 0 {
		t.Errorf("discount part %q, %d chars, omitted %q", cx.Parts[1].Text, cx.Chars, cx.Omitted)
	}
	d := cx.Describe()
	if !strings.Contains(d, "the declaration of discount (cart/discount.go:3-7)") || !strings.Contains(d, "the enclosing declaration Total") {
		t.Errorf("Describe() = %q", d)
	}
}

// TestBudget: what does not fit is left out and named, never cut.
func TestBudget(t *testing.T) {
	t.Parallel()
	repo, c := cartRepo()
	for _, budget := range []int{1, 150, 260, 400} {
		cx := Gather(c, Options{Source: source(repo), Repo: repo, MaxChars: budget})
		if cx.Chars > budget {
			t.Errorf("budget %d: %d chars", budget, cx.Chars)
		}
		sum := 0
		for _, p := range cx.Parts {
			sum += len(p.Text)
		}
		if sum != cx.Chars || len(cx.Parts)+len(cx.Omitted) != 3 {
			t.Errorf("budget %d: parts %q (%d chars, counted %d), omitted %q", budget, names(cx), sum, cx.Chars, cx.Omitted)
		}
	}
	if cx := Gather(c, Options{Source: source(repo), Repo: repo, MaxChars: 1}); !strings.Contains(cx.Describe(), "left out: Total, discount, money.Round") {
		t.Errorf("Describe() = %q", cx.Describe())
	}
}

// TestSmallFileWhole: a small file is given whole, plus what it calls in
// other files; nothing of itself twice.
func TestSmallFileWhole(t *testing.T) {
	t.Parallel()
	repo, _ := cartRepo()
	repo["cart/small.go"] = &fstest.MapFile{Data: []byte("package cart\n\nfunc Net(p int) int {\n\treturn p - discount(p, 10)\n}\n")}
	c := &hunks.Chunk{Path: "cart/small.go", StartLine: 4, EndLine: 4, Lines: []hunks.Line{{Op: hunks.Add, Text: "\treturn p - discount(p, 10)", NewLine: 4}}}
	cx := Gather(c, Options{Source: source(repo), Repo: repo})
	want := []string{"file  cart/small.go:1-5", "declaration discount cart/discount.go:3-7"}
	if diff := cmp.Diff(want, names(cx)); diff != "" {
		t.Errorf("Gather parts (-want +got):\n%s", diff)
	}
}

// TestLexicalPython: the lexical index finds a Python callee in the same
// directory (its block ends at the dedent) and the enclosing def.
func TestLexicalPython(t *testing.T) {
	t.Parallel()
	var big strings.Builder
	for i := range 200 {
		fmt.Fprintf(&big, "def filler_%d():\n    return %d\n\n", i, i)
	}
	big.WriteString("def handle(req):\n    name = req.name\n    return normalize(name)\n")
	src := big.String()
	n := strings.Count(src, "\n")
	repo := fstest.MapFS{
		"app/views.py": {Data: []byte(src)},
		"app/text.py":  {Data: []byte("import re\n\n\ndef normalize(s):\n    s = s.strip()\n    return s.lower()\n\n\nclass Other:\n    pass\n")},
		"app/notes.md": {Data: []byte("def normalize(x) is documented here\n")},
	}
	c := &hunks.Chunk{Path: "app/views.py", StartLine: n, EndLine: n, Lines: []hunks.Line{{Op: hunks.Add, Text: "    return normalize(name)", NewLine: n}}}
	cx := Gather(c, Options{Source: source(repo), Repo: repo})
	want := []string{fmt.Sprintf("enclosing handle app/views.py:%d-%d", n-2, n), "declaration normalize app/text.py:4-6"}
	if diff := cmp.Diff(want, names(cx)); diff != "" {
		t.Errorf("Gather parts (-want +got):\n%s", diff)
	}
}

// TestUnreadable: no source, a parse error, a missing repository: what
// can be read is given, nothing fails.
func TestUnreadable(t *testing.T) {
	t.Parallel()
	c := &hunks.Chunk{Path: "x.go", StartLine: 1, EndLine: 1, Lines: []hunks.Line{{Op: hunks.Add, Text: "func (", NewLine: 1}}}
	if cx := Gather(c, Options{}); len(cx.Parts) != 0 || cx.Describe() != "none beyond the lines shown" {
		t.Errorf("no source: %q", cx.Describe())
	}
	cx := Gather(c, Options{Source: func(string) ([]byte, error) { return []byte("func (\n"), nil }})
	if len(cx.Parts) != 0 { // the whole file is the chunk itself
		t.Errorf("broken Go: %q", names(cx))
	}
}
