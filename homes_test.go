package warden_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// homes are the one file each decision lives in (ARCHITECTURE.md, "Where
// each decision lives"): a check-run conclusion, a check-run title, a
// review event or a threshold default written anywhere else fails
// TestOneHomePerDecision.
var homes = map[string]string{
	"conclusion": "report/github/outcome.go",
	"title":      "report/github/outcome.go",
	"event":      "report/github/review.go",
	"threshold":  "review/thresholds.go",
}

// conclusions and events are the literal values of GitHub's vocabulary;
// titlePrefixes open the titles warden writes.
var (
	conclusions   = []string{"success", "neutral", "failure", "cancelled", "skipped", "timed_out", "action_required"}
	events        = []string{"COMMENT", "REQUEST_CHANGES", "APPROVE"}
	titlePrefixes = []string{"Skipped: ", "Error: ", "Stale: ", "Cancelled: ", "Partial: ", "Complete: ", "Accepted by @"}
)

// TestOneHomePerDecision parses every non-test Go file of the production
// packages (internal/ holds fakes of GitHub, which speak its vocabulary)
// and fails on a conclusion, review event or title literal outside its
// home, or a fail-on or max-findings default outside review's thresholds.
func TestOneHomePerDecision(t *testing.T) {
	t.Parallel()
	eachGoFile(t, []string{"internal"}, func(path string, fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			checkLiteral(t, fset, path, n)
			checkThreshold(t, fset, path, n)
			return true
		})
	})
}

// eachGoFile parses every non-test Go file of the module, but those under
// the top-level directories in skip, testdata and hidden directories, and
// calls fn with its slash path.
func eachGoFile(t *testing.T, skip []string, fn func(path string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && (slices.Contains(skip, path) || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(path), fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkLiteral flags a string literal of a conclusion that is a check-run
// conclusion (in a Conclusion field or compared with one), a review event
// or a title prefix, outside its home.
func checkLiteral(t *testing.T, fset *token.FileSet, path string, n ast.Node) {
	t.Helper()
	kv, ok := n.(*ast.KeyValueExpr)
	if ok {
		if key, isIdent := kv.Key.(*ast.Ident); isIdent && key.Name == "Conclusion" && path != homes["conclusion"] {
			if lit, isLit := kv.Value.(*ast.BasicLit); isLit && lit.Kind == token.STRING {
				t.Errorf("%s: a check-run conclusion %s written outside %s", fset.Position(lit.Pos()), lit.Value, homes["conclusion"])
			}
		}
	}
	lit, ok := n.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return
	}
	pos := fset.Position(lit.Pos())
	for _, e := range events {
		if s == e && path != homes["event"] {
			t.Errorf("%s: review event %q written outside %s", pos, s, homes["event"])
		}
	}
	for _, c := range conclusions[5:] { // the two that are no other word
		if s == c && path != homes["conclusion"] {
			t.Errorf("%s: check-run conclusion %q written outside %s", pos, s, homes["conclusion"])
		}
	}
	for _, p := range titlePrefixes {
		if strings.HasPrefix(s, p) && path != homes["title"] {
			t.Errorf("%s: check-run title %q written outside %s", pos, s, homes["title"])
		}
	}
}

// checkThreshold flags a fail-on, report-on or max-findings default: a
// constant assigned to a name of that threshold outside review's
// thresholds.
func checkThreshold(t *testing.T, fset *token.FileSet, path string, n ast.Node) {
	t.Helper()
	if path == homes["threshold"] {
		return
	}
	var pairs [][2]ast.Expr
	switch x := n.(type) {
	case *ast.AssignStmt:
		for i := range min(len(x.Lhs), len(x.Rhs)) {
			pairs = append(pairs, [2]ast.Expr{x.Lhs[i], x.Rhs[i]})
		}
	case *ast.ValueSpec:
		for i := range min(len(x.Names), len(x.Values)) {
			pairs = append(pairs, [2]ast.Expr{x.Names[i], x.Values[i]})
		}
	case *ast.KeyValueExpr:
		pairs = append(pairs, [2]ast.Expr{x.Key, x.Value})
	}
	for _, p := range pairs {
		name := strings.ToLower(exprName(p[0]))
		if !strings.HasSuffix(name, "failon") && !strings.HasSuffix(name, "reporton") && !strings.HasSuffix(name, "maxfindings") {
			continue
		}
		switch v := p[1].(type) {
		case *ast.BasicLit:
			t.Errorf("%s: threshold %s = %s written outside %s", fset.Position(v.Pos()), exprName(p[0]), v.Value, homes["threshold"])
		case *ast.SelectorExpr:
			if strings.HasPrefix(v.Sel.Name, "Severity") {
				t.Errorf("%s: threshold %s = %s written outside %s", fset.Position(v.Pos()), exprName(p[0]), v.Sel.Name, homes["threshold"])
			}
		}
	}
}

func exprName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

// TestOneOwnerOfTheDiffFormat fails when a production package other than
// hunks writes or matches diff syntax itself (a hunk header, a git file
// header, a synthesised similarity line): hunks is the only owner of the
// diff format, and everyone else imports it.
func TestOneOwnerOfTheDiffFormat(t *testing.T) {
	t.Parallel()
	syntax := []string{"@@ -", "@@ ", "diff --git", "similarity index", "+++ b/", "--- a/"}
	eachGoFile(t, []string{"internal", "hunks"}, func(_ string, fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				for _, x := range syntax {
					if strings.Contains(lit.Value, x) {
						t.Errorf("%s: %s holds diff syntax %q: parse and build diffs in hunks", fset.Position(lit.Pos()), lit.Value, x)
					}
				}
			}
			return true
		})
	})
}

// helperHomes are the one definition of each small text helper; a function
// of that name (any case) anywhere else is a copy. report.OneLine is
// review.OneLine after dropping control characters, not a copy of it.
var helperHomes = map[string][]string{
	"plural":          {"review/text.go"},
	"counted":         {"review/text.go"},
	"unwrappatherror": {"review/text.go"},
	"oneline":         {"review/text.go", "report/format.go"},
	"cmpor":           {},
	"firstnonempty":   {},
	"coalesce":        {},
	"orelse":          {},
	"fmtcount":        {},
}

// TestOneHomePerHelper fails on a second plural, oneLine or hand-written
// cmp.Or in the non-test code of the module (internal/ included).
func TestOneHomePerHelper(t *testing.T) {
	t.Parallel()
	eachGoFile(t, nil, func(path string, fset *token.FileSet, f *ast.File) {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv != nil {
				continue
			}
			homes, ok := helperHomes[strings.ToLower(fd.Name.Name)]
			if ok && !slices.Contains(homes, path) {
				t.Errorf("%s: %s is a copy: use the one in %v (or cmp.Or)", fset.Position(fd.Pos()), fd.Name.Name, homes)
			}
		}
	})
}

// Function size limits (issue 12): no function over maxFuncLines lines or
// cyclomatic complexity maxComplexity anywhere in the non-test code, and
// none in cmd/warden (the wiring) over maxWiringLines lines. Complexity is
// counted as gocyclo counts it: 1, plus one per if, for, range, non-default
// case and select case, && and ||.
const (
	maxFuncLines   = 80
	maxComplexity  = 24 // "complexity 25" is over the limit
	maxWiringLines = 60
)

// sizeExempt are the functions allowed over the limits, by file and name
// (a method as Type.Name): execution's core loop, and issue 15's newest
// functions until they are cut. Never grow this list without a reason
// written next to the entry.
var sizeExempt = map[string]string{
	"execution/run.go Engine.tryRoute": "execution's core loop",
	"execution/run.go Engine.admit":    "execution's core loop",
}

// TestFunctionSize fails on a function over the size limits that is not
// exempt, and on an exemption that no longer needs to be one.
func TestFunctionSize(t *testing.T) {
	t.Parallel()
	needed := map[string]bool{}
	eachGoFile(t, nil, func(path string, fset *token.FileSet, f *ast.File) {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := path + " " + funcName(fd)
			lines := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			cyclo := complexity(fd)
			limit := maxFuncLines
			if strings.HasPrefix(path, "cmd/warden/") {
				limit = maxWiringLines
			}
			if lines <= limit && cyclo <= maxComplexity {
				continue
			}
			if _, ok := sizeExempt[name]; ok {
				needed[name] = true
				continue
			}
			t.Errorf("%s: %s is %d lines with cyclomatic complexity %d (limits: %d lines, complexity %d): split it",
				fset.Position(fd.Pos()), funcName(fd), lines, cyclo, limit, maxComplexity)
		}
	})
	for name := range sizeExempt {
		if !needed[name] {
			t.Errorf("%s is within the size limits now (or gone): drop it from sizeExempt", name)
		}
	}
}

// funcName is a function's name, a method's as Type.Name.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	return exprName(typ) + "." + fd.Name.Name
}

// complexity is a function's cyclomatic complexity as gocyclo counts it,
// function literals inside it included.
func complexity(fd *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if x.List != nil {
				c++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}

// testHomes are the one home of each piece of test support: a file of
// another package that does the same thing by hand is a copy.
var testHomes = []struct {
	what  string
	re    *regexp.Regexp
	homes []string // path prefixes allowed to do it
	use   string
}{
	{
		what: "writes a chat-completions answer itself",
		re:   regexp.MustCompile(`"object\\?"\s*:\s*\\?"chat\.completion`),
		// the adapter's own wire tests (stream edge cases, raw bodies)
		homes: []string{"internal/fakeopenai/", "execution/openai/"},
		use:   "fakeopenai.Serve, or fakeopenai.Script",
	},
	{
		what:  "makes a git repository itself",
		re:    regexp.MustCompile(`(?:"git",\s*|\()"init"`),
		homes: []string{"internal/testgit/"},
		use:   "internal/testgit",
	},
}

// TestOneHomePerTestSupport: one scripted fake model (internal/fakeopenai)
// and one hermetic git-repository helper (internal/testgit) for all tests.
func TestOneHomePerTestSupport(t *testing.T) {
	t.Parallel()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || path == "homes_test.go":
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		path = filepath.ToSlash(path)
		for _, h := range testHomes {
			home := slices.ContainsFunc(h.homes, func(p string) bool { return strings.HasPrefix(path, p) })
			if loc := h.re.FindIndex(data); loc != nil && !home {
				line := 1 + strings.Count(string(data[:loc[0]]), "\n")
				t.Errorf("%s:%d %s: use %s", path, line, h.what, h.use)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// maxWiringTotal is issue 12's "cmd/warden is wiring: at most ~800
// non-test lines" (counted as wc -l counts them).
const maxWiringTotal = 800

// TestWiringSize fails when cmd/warden grows past maxWiringTotal lines: what
// it would add belongs in a library package (cli for the command line's
// grammar, config for warden.toml, action for the Action).
func TestWiringSize(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("cmd", "warden", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(data, []byte("\n"))
	}
	if total == 0 || total > maxWiringTotal {
		t.Errorf("cmd/warden has %d non-test lines, want 1 to %d: move what is not wiring into a library package", total, maxWiringTotal)
	}
}
