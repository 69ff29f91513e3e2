package hunks

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	gocmp "github.com/google/go-cmp/cmp"

	"github.com/org/warden/internal/gendiff"
)

// wholeParse is the reference for the parser: go-gitdiff over the whole
// normalised input at once, as Parse worked before it parsed a file at a
// time.
func wholeParse(data []byte) ([]*File, error) {
	z := &normalizer{r: bufio.NewReader(bytes.NewReader(data))}
	var all strings.Builder
	for {
		line, _, err := z.readLine()
		if err != nil {
			break
		}
		all.Write(line)
	}
	parsed, preamble, err := gitdiff.Parse(strings.NewReader(all.String()))
	if err != nil {
		return nil, err
	}
	if len(parsed) == 0 {
		if strings.TrimSpace(preamble) == "" || isCommitHeader(preamble) {
			return nil, nil
		}
		return nil, ErrNotDiff
	}
	var files []*File
	for _, gf := range parsed {
		f, _, err := convertFile(gf, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// referencePrepare is the reference for the streaming planner: every file
// filtered, all of them ranked at once, then the limits applied in rank
// order, no file cut before the line budget is spread (as Prepare worked
// before it planned a file at a time).
func referencePrepare(files []*File, opts Options) (*Plan, error) {
	ignore, err := compile(opts.Ignore)
	if err != nil {
		return nil, err
	}
	p := &planner{opts: opts.withDefaults(), plan: &Plan{Chunks: []Chunk{}, Ignored: []Ignored{}}}
	var cands []*candidate
	for i, f := range files {
		c, reason := filter(f, tail{}, ignore, p.opts)
		switch {
		case reason != "" && c != nil && p.opts.Untrusted:
			p.plan.Conventions = append(p.plan.Conventions, Ignored{Path: c.path, Reason: reason, Lines: c.changed})
		case reason != "":
			p.dropFile(f, tail{}, reason)
			continue
		}
		c.seq = i
		cands = append(cands, c)
	}
	slices.SortStableFunc(cands, func(a, b *candidate) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.path, b.path))
	})
	for _, c := range cands {
		switch {
		case c.size > p.opts.MaxFileBytes:
			p.drop(c.path, "limit:bytes", c.changed)
		case len(p.best) >= p.opts.MaxFiles:
			p.drop(c.path, "limit:files", c.changed)
		default:
			p.best = append(p.best, c)
		}
	}
	return p.finish(), nil
}

// streamSeeds are inputs for FuzzStream: the golden diffs, a generated
// change of many files, a format-patch mail of two commits, and malformed
// input.
func streamSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, name := range goldenCases(t) {
		data, err := os.ReadFile(filepath.Join("testdata", name+".diff"))
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data, bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")))
	}
	var skewed bytes.Buffer
	if err := gendiff.WriteSkewed(&skewed, 20, 800); err != nil {
		t.Fatal(err)
	}
	mail := "From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001\nSubject: [PATCH 1/2] one\n\n---\n a.go | 1 +\n\n" +
		"diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1 +1,2 @@\n a\n+b\n-- \n2.39.5\n\n" +
		"From 2222222222222222222222222222222222222222 Mon Sep 17 00:00:00 2001\nSubject: [PATCH 2/2] two\n\n---\n" +
		"diff --git a/b.go b/b.go\nnew file mode 100644\n--- /dev/null\n+++ b/b.go\n@@ -0,0 +1 @@\n+x\n-- \n2.39.5\n"
	return append(seeds, skewed.Bytes(), []byte(mail),
		[]byte("diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n a\ndiff --git a/b b/b\n--- a/b\n+++ b/b\n@@ -1 +1 @@\n-x\n+y\n"),
		[]byte("diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n@@ -9 +9 @@\n"),
		[]byte("diff --git a/.env b/.env\n--- a/.env\n+++ b/.env\n@@ -1,3 +1,3 @@\n-A=1\n+A=2\n-B=1\n+B=2\n-C=1\n+C=2\n@@ -9 +9 @@\n-D=1\n+D=2\n"))
}

// streamOptions are the limits FuzzStream plans with: the defaults,
// limits tight enough that files are dropped and cut on the way, and an
// untrusted author's change (conventions reviewed anyway).
func streamOptions(src func(string) ([]byte, error)) []Options {
	return []Options{
		{},
		{MaxFiles: 2, MaxChangedLines: 7, MaxChunkChars: 120},
		{MaxFiles: 1, MaxChangedLines: 1},
		{MaxChangedLines: 2, CoalesceGap: 1},
		{MaxChangedLines: 3, ContextLines: 1, FullContext: true},
		{MaxChangedLines: 50, MaxFileBytes: 200, Source: src, ContextLines: 3, CoalesceGap: 5},
		{Ignore: []string{"**/*.md", "!docs/keep.md"}, MaxFiles: 5, MaxChangedLines: 30},
		{MaxFiles: 2, MaxChangedLines: 7, Untrusted: true},
		{MaxChangedLines: 50, Source: src, Untrusted: true, Ignore: []string{"vendor/keep/**"}},
	}
}

// FuzzStream checks that parsing a file at a time gives go-gitdiff's files
// of the whole input, and that planning as the diff streams gives the plan
// of ranking every file at once, under tight limits too.
func FuzzStream(f *testing.F) {
	for _, seed := range streamSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkStream(t, data)
	})
}

func checkStream(t *testing.T, data []byte) {
	t.Helper()
	want, werr := wholeParse(data)
	got, err := Parse(bytes.NewReader(data))
	if (err != nil) != (werr != nil) {
		t.Fatalf("Parse error = %v, parsing the whole input = %v", err, werr)
	}
	src := func(string) ([]byte, error) { return data, nil }
	if err != nil {
		for _, opts := range streamOptions(src) {
			if _, perr := PrepareDiff(bytes.NewReader(data), 0, opts); perr == nil {
				t.Fatalf("PrepareDiff(%+v) = no error, parsing the whole input = %v", opts, err)
			}
		}
		return
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Fatalf("Parse a file at a time differs from parsing the whole input (-whole +got):\n%s", diff)
	}
	for _, opts := range streamOptions(src) {
		want, err := referencePrepare(got, opts)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := PrepareDiff(bytes.NewReader(data), 0, opts)
		if errors.Is(err, ErrEmpty) && len(got) == 0 {
			continue
		}
		if err != nil {
			t.Fatalf("PrepareDiff(%+v): %v", opts, err)
		}
		if diff := gocmp.Diff(want, plan); diff != "" {
			t.Fatalf("PrepareDiff(%+v) differs from ranking every file at once (-want +got):\n%s", opts, diff)
		}
		if again, _ := Prepare(got, opts); gocmp.Diff(want, again) != "" {
			t.Fatalf("Prepare(%+v) differs from PrepareDiff", opts)
		}
	}
}

// The seeds alone, in the ordinary test run.
func TestStreamSeeds(t *testing.T) {
	t.Parallel()
	for i, seed := range streamSeeds(t) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			checkStream(t, seed)
		})
	}
}

// An error in a later file's part of the diff, or in a later fragment of
// a file the planner cut, names the diff's own line, not the line within
// that part.
func TestParseErrorNamesTheDiffLine(t *testing.T) {
	t.Parallel()
	good := "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n" // 6 lines
	bad := "diff --git a/c b/c\n--- a/c\n+++ b/c\n@@ -1,3 +1,3 @@\n a\n!b\n"
	long := "diff --git a/d b/d\n--- a/d\n+++ b/d\n@@ -1 +1 @@\n-x\n+y\n@@ -5 +5 @@\n-x\n+y\n@@ -9,2 +9,2 @@\n-x\n?y\n"
	for _, tt := range []struct {
		in   string
		line int
	}{
		{bad, 6},
		{good + good + bad, 18},
		{good + long, 18},
	} {
		_, err := Parse(strings.NewReader(tt.in))
		_, werr := wholeParse([]byte(tt.in))
		_, perr := PrepareDiff(strings.NewReader(tt.in), 0, Options{MaxChangedLines: 1})
		want := fmt.Sprintf("gitdiff: line %d:", tt.line)
		for _, err := range []error{err, werr, perr} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Parse(%q) = %v (whole input: %v, PrepareDiff keeping 1 changed line: %v), want an error at %q", tt.in, err, werr, perr, want)
			}
		}
	}
}

// PrepareDiff reports the reader's errors and the cap as ParseLimit does,
// and a bad glob before reading anything.
func TestPrepareDiffErrors(t *testing.T) {
	t.Parallel()
	diff := "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n"
	if _, err := PrepareDiff(strings.NewReader(diff), 10, Options{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("PrepareDiff over the cap = %v, want ErrTooLarge", err)
	}
	if _, err := PrepareDiff(io.MultiReader(strings.NewReader(diff), strings.NewReader(diff+diff)), int64(2*len(diff)), Options{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("PrepareDiff of a stream over the cap = %v, want ErrTooLarge", err)
	}
	if _, err := PrepareDiff(strings.NewReader(" \n"), 0, Options{}); !errors.Is(err, ErrEmpty) {
		t.Errorf("PrepareDiff(blank) = %v, want ErrEmpty", err)
	}
	read := 0
	r := readerFunc(func(p []byte) (int, error) { read++; return 0, io.EOF })
	if _, err := PrepareDiff(r, 0, Options{Ignore: []string{"a/[b"}}); !errors.Is(err, ErrBadGlob) || read != 0 {
		t.Errorf("PrepareDiff(bad glob) = %v after %d reads, want ErrBadGlob before any", err, read)
	}
	broken := errors.New("disk on fire")
	if _, err := PrepareDiff(io.MultiReader(strings.NewReader(diff), readerFunc(func([]byte) (int, error) { return 0, broken })), 0, Options{}); !errors.Is(err, broken) {
		t.Errorf("PrepareDiff of a failing reader = %v, want its error", err)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// A file too large to read still counts its size: Source's error says it.
func TestPrepareSourceTooLarge(t *testing.T) {
	t.Parallel()
	diff := "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n"
	src := func(string) ([]byte, error) { return nil, sizedError(5 << 20) }
	plan, err := PrepareDiff(strings.NewReader(diff), 0, Options{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]Ignored{{Path: "a.go", Reason: "limit:bytes", Lines: 2}}, plan.Ignored); diff != "" {
		t.Errorf("a 5 MiB file (-want +got):\n%s", diff)
	}
}

type sizedError int64

func (e sizedError) Error() string   { return "too large to read" }
func (e sizedError) FileSize() int64 { return int64(e) }

// VerifySource takes Source's content only when it agrees with the diff.
func TestPrepareVerifySource(t *testing.T) {
	t.Parallel()
	diff := "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -2 +2 @@\n-x\n+y\n"
	for _, tt := range []struct {
		content string
		verify  bool
		want    []ContextLine
	}{
		{"one\ny\nthree\n", true, []ContextLine{{Line: 1, Text: "one"}}},
		{"one\nmoved on\nthree\n", true, nil},
		{"one\nmoved on\nthree\n", false, []ContextLine{{Line: 1, Text: "one"}}},
	} {
		src := func(string) ([]byte, error) { return []byte(tt.content), nil }
		plan, err := PrepareDiff(strings.NewReader(diff), 0, Options{Source: src, VerifySource: tt.verify, FullContext: true})
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(tt.want, plan.Chunks[0].Before); diff != "" {
			t.Errorf("source %q, VerifySource %t: Before (-want +got):\n%s", tt.content, tt.verify, diff)
		}
	}
}

// lineBound's t is the largest t with t + Σ min(c_j, t) <= budget, as a
// search over every t finds it, for each prefix of many sets of files.
func TestLineBound(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		budget := 1 + rnd.IntN(500)
		b := lineBound{budget: budget, t: budget}
		var cs []int
		for range 1 + rnd.IntN(30) {
			c := 1 + rnd.IntN(2*budget)
			if rnd.IntN(3) == 0 {
				c = 1 + rnd.IntN(5)
			}
			cs = append(cs, c)
			b.add(c)
			want := 0
			for x := 0; x <= budget; x++ {
				sum := x
				for _, c := range cs {
					sum += min(c, x)
				}
				if sum <= budget {
					want = x
				}
			}
			if b.t != want {
				t.Fatalf("lineBound(budget %d, files %v).t = %d, want %d", budget, cs, b.t, want)
			}
		}
	}
}

// With files far larger than the line budget the planner holds a bound
// set by the limits, not the change: file i of the K kept (in rank order)
// at most budget/i changed lines after a recut, twice that between recuts
// and one file's budget, so 2·budget·(H(K)+1) in all (H the harmonic
// number); and it still plans what ranking every file at once plans.
func TestPlannerHoldsLittle(t *testing.T) {
	t.Parallel()
	var diff bytes.Buffer
	if err := gendiff.WriteSkewed(&diff, 100, 20_000); err != nil {
		t.Fatal(err)
	}
	files, err := Parse(bytes.NewReader(diff.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{{MaxFiles: 60, MaxChangedLines: 2000}, {MaxFiles: 20, MaxChangedLines: 500}, {MaxFiles: 100, MaxChangedLines: 5000}} {
		p, err := newPlanner(opts)
		if err != nil {
			t.Fatal(err)
		}
		most, total := 0, 0
		for _, f := range files {
			p.add(f, tail{})
			most = max(most, p.held)
			total += min(p.opts.MaxChangedLines, func() int { n, _ := changedLines(f); return n }())
		}
		got := p.finish()
		want, _ := referencePrepare(files, opts)
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Fatalf("%+v: the plan differs from ranking every file at once (-want +got):\n%s", opts, diff)
		}
		harmonic := 0.0
		for k := 1; k <= min(p.opts.MaxFiles, len(files)); k++ {
			harmonic += 1 / float64(k)
		}
		bound := int(2 * float64(p.opts.MaxChangedLines) * (harmonic + 1))
		t.Logf("max_files %d, max_changed_lines %d: held at most %d changed lines (bound %d; cut only to the budget: %d)",
			p.opts.MaxFiles, p.opts.MaxChangedLines, most, bound, total)
		if most > bound || most >= total {
			t.Errorf("max_files %d, max_changed_lines %d: held %d changed lines at most, want at most %d (and fewer than %d)",
				p.opts.MaxFiles, p.opts.MaxChangedLines, most, bound, total)
		}
	}
}

// A file that is a secret by its name is kept whole for review to scan,
// also when it has far more changed lines than any plan holds of a file
// (its name may hold spaces).
func TestPrepareDiffKeepsWithheldWhole(t *testing.T) {
	t.Parallel()
	for _, header := range []string{
		"diff --git a/config/.env b/config/.env\nnew file mode 100644\n--- /dev/null\n+++ b/config/.env\n",
		"diff --git a/my keys/id_rsa b/my keys/id_rsa\nnew file mode 100600\n--- /dev/null\n+++ b/my keys/id_rsa\n",
	} {
		var diff strings.Builder
		diff.WriteString(header + "@@ -0,0 +1,50 @@\n")
		for i := range 50 {
			fmt.Fprintf(&diff, "+SECRET_%d=value\n", i)
		}
		plan, err := PrepareDiff(strings.NewReader(diff.String()), 0, Options{MaxChangedLines: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Withheld) != 1 || len(plan.Withheld[0].Fragments) != 1 || len(plan.Withheld[0].Fragments[0].Lines) != 50 {
			t.Errorf("%q: Withheld = %v, want the file whole (50 lines)", header, plan.Withheld)
		}
	}
}
