package hunks

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary input to Parse and then Prepare (without and
// with a Source) and checks that nothing panics and the plan's invariants
// hold. It is seeded from testdata/*.diff.
func FuzzParse(f *testing.F) {
	for _, name := range goldenCases(f) {
		data, err := os.ReadFile(filepath.Join("testdata", name+".diff"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))) // as a CRLF tool saves it
	}
	f.Add([]byte("--- a\n+++ b\n@@ -1,3 +1,2 @@\n a\n-b\n c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := Parse(bytes.NewReader(data))
		if err != nil {
			if files != nil {
				t.Fatalf("Parse = %d files and error %v, want no files with an error", len(files), err)
			}
			return
		}
		for _, file := range files {
			if strings.HasSuffix(file.OldPath, "\r") || strings.HasSuffix(file.NewPath, "\r") || strings.ContainsRune(file.OldPath+file.NewPath, '\n') {
				t.Errorf("paths %q, %q hold a line ending", file.OldPath, file.NewPath)
			}
			for _, fr := range file.Fragments {
				for _, l := range fr.Lines {
					if strings.HasSuffix(l.Text, "\n") {
						t.Errorf("%s: line %+v: Text ends in a newline", file.Path(), l)
					}
					if (l.Op == Add) != (l.OldLine == 0) || (l.Op == Delete) != (l.NewLine == 0) {
						t.Errorf("%s: line %+v: line numbers do not fit the op", file.Path(), l)
					}
				}
			}
		}
		src := func(string) ([]byte, error) { return data, nil }
		for _, opts := range []Options{{}, {Source: src, MaxChunkChars: 200, ContextLines: 3}} {
			plan, err := Prepare(files, opts)
			if err != nil {
				t.Fatalf("Prepare error: %v", err)
			}
			checkPlan(t, plan, files, opts.withDefaults())
		}
	})
}

// checkPlan checks the invariants of a plan made from files with opts: every
// file is reviewed or ignored; chunks are sorted, within their limits, count
// their lines right, and hold only lines of their file's diff (or, with a
// Source, context lines filled in from it).
func checkPlan(t *testing.T, plan *Plan, files []*File, opts Options) {
	t.Helper()
	type fileLine struct {
		path string
		line Line
	}
	inDiff := map[fileLine]bool{}
	for _, file := range files {
		for _, fr := range file.Fragments {
			for _, l := range fr.Lines {
				inDiff[fileLine{file.Path(), l}] = true
			}
		}
	}
	accounted := map[string]bool{}
	for _, ig := range plan.Ignored {
		accounted[ig.Path] = true
	}
	for i, c := range plan.Chunks {
		accounted[c.Path] = true
		if c.StartLine < 1 || c.StartLine > c.EndLine {
			t.Errorf("chunk %s: lines %d-%d, want 1 <= start <= end", c.Path, c.StartLine, c.EndLine)
		}
		if len(c.Lines) == 0 {
			t.Errorf("chunk %s:%d has no lines", c.Path, c.StartLine)
		}
		size, added, deleted := 0, 0, 0
		for _, l := range c.Lines {
			size += lineSize(l)
			switch l.Op {
			case Add:
				added++
			case Delete:
				deleted++
			}
			if l.Op != Delete && (l.NewLine < c.StartLine || l.NewLine > c.EndLine) {
				t.Errorf("chunk %s:%d-%d holds new line %d", c.Path, c.StartLine, c.EndLine, l.NewLine)
			}
			if !inDiff[fileLine{c.Path, l}] && (opts.Source == nil || l.Op != Context) {
				t.Errorf("chunk %s: line %+v is not in the file's diff", c.Path, l)
			}
		}
		if added != c.Added || deleted != c.Deleted {
			t.Errorf("chunk %s:%d: counts +%d -%d, want +%d -%d", c.Path, c.StartLine, c.Added, c.Deleted, added, deleted)
		}
		if size > opts.MaxChunkChars && len(c.Lines) > 1 {
			t.Errorf("chunk %s:%d: %d bytes in %d lines, want at most %d", c.Path, c.StartLine, size, len(c.Lines), opts.MaxChunkChars)
		}
		if len(c.Before) > opts.ContextLines || len(c.After) > opts.ContextLines {
			t.Errorf("chunk %s:%d: %d lines before and %d after, want at most %d", c.Path, c.StartLine, len(c.Before), len(c.After), opts.ContextLines)
		}
		if i > 0 {
			p := plan.Chunks[i-1]
			if p.Priority < c.Priority || p.Priority == c.Priority && (p.Path > c.Path || p.Path == c.Path && p.StartLine > c.StartLine) {
				t.Errorf("chunk %s:%d (priority %d) sorted after %s:%d (priority %d)", c.Path, c.StartLine, c.Priority, p.Path, p.StartLine, p.Priority)
			}
		}
	}
	for _, file := range files {
		if !accounted[file.Path()] {
			t.Errorf("file %s is neither reviewed nor ignored", file.Path())
		}
	}
	if len(plan.Ignored) > len(files) {
		t.Errorf("%d ignored paths for %d files", len(plan.Ignored), len(files))
	}
	if !slices.IsSortedFunc(plan.Ignored, func(a, b Ignored) int { return strings.Compare(a.Path, b.Path) }) {
		t.Errorf("Ignored is not sorted by path")
	}
}
