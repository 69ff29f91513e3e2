package hunks

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// replaced returns a modified file whose line n (on both sides) was replaced,
// for each n, with no context lines.
func replaced(path string, lines ...int) *File {
	f := &File{OldPath: path, NewPath: path, Status: Modified}
	for _, n := range lines {
		f.Fragments = append(f.Fragments, Fragment{OldStart: n, OldLines: 1, NewStart: n, NewLines: 1, Lines: []Line{
			{Op: Delete, Text: fmt.Sprintf("old %d", n), OldLine: n},
			{Op: Add, Text: fmt.Sprintf("new %d", n), NewLine: n},
		}})
	}
	return f
}

// added returns an added file with the given lines.
func added(path string, texts ...string) *File {
	fr := Fragment{NewStart: 1, NewLines: len(texts)}
	for i, s := range texts {
		fr.Lines = append(fr.Lines, Line{Op: Add, Text: s, NewLine: i + 1})
	}
	return &File{NewPath: path, Status: Added, Fragments: []Fragment{fr}}
}

// addedN returns an added file of n lines.
func addedN(path string, n int) *File {
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("l%02d", i+1)
	}
	return added(path, texts...)
}

// numberedSource returns a Source whose files all have n lines "s1".."sn".
func numberedSource(n int) func(string) ([]byte, error) {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "s%d\n", i)
	}
	return func(string) ([]byte, error) { return []byte(b.String()), nil }
}

func mustPrepare(t *testing.T, files []*File, opts Options) *Plan {
	t.Helper()
	p, err := Prepare(files, opts)
	if err != nil {
		t.Fatalf("Prepare error: %v", err)
	}
	return p
}

// span is a chunk's path and new-side range, for compact comparisons.
type span struct {
	Path       string
	Start, End int
}

func spans(p *Plan) []span {
	var out []span
	for _, c := range p.Chunks {
		out = append(out, span{c.Path, c.StartLine, c.EndLine})
	}
	return out
}

func ctx(from, to int) []ContextLine {
	var out []ContextLine
	for n := from; n <= to; n++ {
		out = append(out, ContextLine{Line: n, Text: fmt.Sprintf("s%d", n)})
	}
	return out
}

func TestPrepareCoalesce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file *File
		opts Options
		want []span
	}{
		{name: "gap 29 coalesces", file: replaced("a.go", 10, 40), want: []span{{"a.go", 10, 40}}},
		{name: "gap 30 does not", file: replaced("a.go", 10, 41), want: []span{{"a.go", 10, 10}, {"a.go", 41, 41}}},
		{name: "gap 31 does not", file: replaced("a.go", 10, 42), want: []span{{"a.go", 10, 10}, {"a.go", 42, 42}}},
		{name: "custom gap", file: replaced("a.go", 10, 15), opts: Options{CoalesceGap: 4}, want: []span{{"a.go", 10, 10}, {"a.go", 15, 15}}},
		{name: "adjacent", file: replaced("a.go", 10, 11, 12), want: []span{{"a.go", 10, 12}}},
		// Each hunk is "old 1x\n" + "new 1x\n": 14 bytes.
		{name: "within char cap", file: replaced("a.go", 10, 12), opts: Options{MaxChunkChars: 28}, want: []span{{"a.go", 10, 12}}},
		{name: "over char cap", file: replaced("a.go", 10, 12), opts: Options{MaxChunkChars: 27}, want: []span{{"a.go", 10, 10}, {"a.go", 12, 12}}},
		{name: "chain", file: replaced("a.go", 10, 12, 14, 16), opts: Options{MaxChunkChars: 28},
			want: []span{{"a.go", 10, 12}, {"a.go", 14, 16}}},
		{name: "gap lines from Source count", file: replaced("a.go", 10, 12), opts: Options{MaxChunkChars: 28, Source: numberedSource(20)},
			want: []span{{"a.go", 10, 10}, {"a.go", 12, 12}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := spans(mustPrepare(t, []*File{tt.file}, tt.opts))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Prepare(%s) chunks mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestPrepareGapFill(t *testing.T) {
	t.Parallel()
	f := replaced("a.go", 3, 6)
	p := mustPrepare(t, []*File{f}, Options{Source: numberedSource(10), ContextLines: 2})
	if diff := cmp.Diff(replaced("a.go", 3, 6), f); diff != "" {
		t.Errorf("Prepare modified its input (-want +got):\n%s", diff)
	}
	want := []Chunk{{
		Path: "a.go", Language: "Go", Class: Source, StartLine: 3, EndLine: 6, Added: 2, Deleted: 2, Priority: 4004,
		Why: "source, 4 changed lines",
		Lines: []Line{
			{Op: Delete, Text: "old 3", OldLine: 3}, {Op: Add, Text: "new 3", NewLine: 3},
			{Op: Context, Text: "s4", OldLine: 4, NewLine: 4}, {Op: Context, Text: "s5", OldLine: 5, NewLine: 5},
			{Op: Delete, Text: "old 6", OldLine: 6}, {Op: Add, Text: "new 6", NewLine: 6},
		},
		Before: ctx(1, 2), After: ctx(7, 8),
	}}
	if diff := cmp.Diff(want, p.Chunks); diff != "" {
		t.Errorf("Prepare(a.go changed at 3 and 6) mismatch (-want +got):\n%s", diff)
	}
}

func TestPrepareSplit(t *testing.T) {
	t.Parallel()
	// Ten lines "l01".."l10" of 4 bytes each: 3 lines fit in 12 bytes.
	p := mustPrepare(t, []*File{addedN("a.go", 10)}, Options{MaxChunkChars: 12, ContextLines: 2})
	want := []span{{"a.go", 1, 3}, {"a.go", 4, 6}, {"a.go", 7, 9}, {"a.go", 10, 10}}
	if diff := cmp.Diff(want, spans(p)); diff != "" {
		t.Fatalf("Prepare(10 lines, 12 chars) chunks mismatch (-want +got):\n%s", diff)
	}
	second := p.Chunks[1]
	wantBefore := []ContextLine{{Line: 2, Text: "l02"}, {Line: 3, Text: "l03"}}
	wantAfter := []ContextLine{{Line: 7, Text: "l07"}, {Line: 8, Text: "l08"}}
	if diff := cmp.Diff(wantBefore, second.Before); diff != "" {
		t.Errorf("chunk 4-6 Before (from the diff) mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantAfter, second.After); diff != "" {
		t.Errorf("chunk 4-6 After (from the diff) mismatch (-want +got):\n%s", diff)
	}
	if got := second.Added; got != 3 {
		t.Errorf("chunk 4-6 Added = %d, want 3", got)
	}

	// A single line longer than the cap is a chunk of its own.
	long := strings.Repeat("x", 50)
	p = mustPrepare(t, []*File{added("b.go", "a", long, "b")}, Options{MaxChunkChars: 10})
	if diff := cmp.Diff([]span{{"b.go", 1, 1}, {"b.go", 2, 2}, {"b.go", 3, 3}}, spans(p)); diff != "" {
		t.Errorf("Prepare(long line) chunks mismatch (-want +got):\n%s", diff)
	}
}

func TestPrepareDeletionsOnly(t *testing.T) {
	t.Parallel()
	del := func(oldStart, newStart int) *File {
		return &File{OldPath: "a.go", NewPath: "a.go", Status: Modified, Fragments: []Fragment{{
			OldStart: oldStart, OldLines: 2, NewStart: newStart, NewLines: 0, Lines: []Line{
				{Op: Delete, Text: "x", OldLine: oldStart}, {Op: Delete, Text: "y", OldLine: oldStart + 1},
			},
		}}}
	}
	tests := []struct {
		name               string
		file               *File
		start              int
		wantBefore, wantAf []ContextLine
	}{
		{name: "after line 4", file: del(5, 4), start: 4, wantBefore: ctx(3, 4), wantAf: ctx(5, 6)},
		{name: "at the top", file: del(1, 0), start: 1, wantBefore: nil, wantAf: ctx(1, 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mustPrepare(t, []*File{tt.file}, Options{Source: numberedSource(8), ContextLines: 2})
			if len(p.Chunks) != 1 {
				t.Fatalf("Prepare(%s) = %d chunks, want 1", tt.name, len(p.Chunks))
			}
			c := p.Chunks[0]
			if c.StartLine != tt.start || c.EndLine != tt.start || c.Deleted != 2 || c.Added != 0 {
				t.Errorf("Prepare(%s) chunk = lines %d-%d, +%d -%d, want %d-%d, +0 -2", tt.name, c.StartLine, c.EndLine, c.Added, c.Deleted, tt.start, tt.start)
			}
			if diff := cmp.Diff(tt.wantBefore, c.Before); diff != "" {
				t.Errorf("Prepare(%s) Before mismatch (-want +got):\n%s", tt.name, diff)
			}
			if diff := cmp.Diff(tt.wantAf, c.After); diff != "" {
				t.Errorf("Prepare(%s) After mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestPrepareSourceContext(t *testing.T) {
	t.Parallel()
	errSource := func(string) ([]byte, error) { return nil, errors.New("not found") }
	crlf := func(string) ([]byte, error) { return []byte("a\r\nb\r\nc\r\nd"), nil }
	tests := []struct {
		name                  string
		file                  *File
		opts                  Options
		wantBefore, wantAfter []ContextLine
	}{
		{name: "middle", file: replaced("a.go", 50), opts: Options{Source: numberedSource(100), ContextLines: 3}, wantBefore: ctx(47, 49), wantAfter: ctx(51, 53)},
		{name: "default 20", file: replaced("a.go", 50), opts: Options{Source: numberedSource(100)}, wantBefore: ctx(30, 49), wantAfter: ctx(51, 70)},
		{name: "file edges", file: replaced("a.go", 2), opts: Options{Source: numberedSource(3), ContextLines: 5}, wantBefore: ctx(1, 1), wantAfter: ctx(3, 3)},
		{name: "CRLF and no final newline", file: replaced("a.go", 2), opts: Options{Source: crlf},
			wantBefore: []ContextLine{{1, "a"}}, wantAfter: []ContextLine{{3, "c"}, {4, "d"}}},
		{name: "source error falls back to the diff", file: replaced("a.go", 50), opts: Options{Source: errSource}},
		{name: "no source", file: replaced("a.go", 50)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mustPrepare(t, []*File{tt.file}, tt.opts)
			if len(p.Chunks) != 1 {
				t.Fatalf("Prepare(%s) = %d chunks, want 1", tt.name, len(p.Chunks))
			}
			if diff := cmp.Diff(tt.wantBefore, p.Chunks[0].Before); diff != "" {
				t.Errorf("Prepare(%s) Before mismatch (-want +got):\n%s", tt.name, diff)
			}
			if diff := cmp.Diff(tt.wantAfter, p.Chunks[0].After); diff != "" {
				t.Errorf("Prepare(%s) After mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestPrepareLimits(t *testing.T) {
	t.Parallel()
	big, small, doc, huge := addedN("big.go", 10), addedN("small.go", 2), addedN("doc.md", 3), addedN("huge.go", 50)
	kb := func(string) ([]byte, error) { return make([]byte, 2000), nil }
	tests := []struct {
		name        string
		files       []*File
		opts        Options
		wantPaths   []string
		wantIgnored []Ignored
		wantLines   map[string]int // changed lines reviewed per path, when set
	}{
		{
			name:  "files: the lowest priority goes",
			files: []*File{doc, small, addedN("a_test.go", 1)}, opts: Options{MaxFiles: 2},
			wantPaths: []string{"small.go", "a_test.go"}, wantIgnored: []Ignored{{"doc.md", "limit:files", 3}},
		},
		{
			name:  "lines: everything fits",
			files: []*File{doc, small, big}, opts: Options{MaxChangedLines: 15},
			wantPaths: []string{"big.go", "small.go", "doc.md"}, wantIgnored: []Ignored{},
		},
		{
			name:  "lines: the largest file is cut to its share",
			files: []*File{doc, small, big}, opts: Options{MaxChangedLines: 12},
			// 2 + 3 + 7 = 12: the two small files whole, big.go its first 7 lines.
			wantPaths: []string{"big.go", "small.go", "doc.md"}, wantIgnored: []Ignored{{"big.go", "limit:lines:partial", 3}},
			wantLines: map[string]int{"big.go": 7, "small.go": 2, "doc.md": 3},
		},
		{
			name:  "lines: every file gets a share",
			files: []*File{doc, small, big, addedN("tiny.txt", 1)}, opts: Options{MaxChangedLines: 11},
			wantPaths:   []string{"big.go", "small.go", "doc.md", "tiny.txt"},
			wantIgnored: []Ignored{{"big.go", "limit:lines:partial", 5}},
			wantLines:   map[string]int{"big.go": 5, "small.go": 2, "doc.md": 3, "tiny.txt": 1},
		},
		{
			name:  "lines: a file over the whole budget cannot take it",
			files: []*File{doc, small, huge}, opts: Options{MaxChangedLines: 12},
			wantPaths: []string{"huge.go", "small.go", "doc.md"}, wantIgnored: []Ignored{{"huge.go", "limit:lines:partial", 43}},
			wantLines: map[string]int{"huge.go": 7, "small.go": 2, "doc.md": 3},
		},
		{
			name: "lines: a share of at least a tenth of the budget, by rank",
			// 20 files of 10 lines and a budget of 100: the fair share (5)
			// is below a tenth of the budget (10), so the first 10 by rank
			// are reviewed whole and the other 10 not at all.
			files: func() []*File {
				var fs []*File
				for i := range 20 {
					fs = append(fs, addedN(fmt.Sprintf("f%02d.go", i), 10))
				}
				return fs
			}(),
			opts:      Options{MaxChangedLines: 100},
			wantPaths: []string{"f00.go", "f01.go", "f02.go", "f03.go", "f04.go", "f05.go", "f06.go", "f07.go", "f08.go", "f09.go"},
			wantIgnored: []Ignored{{"f10.go", "limit:lines", 10}, {"f11.go", "limit:lines", 10}, {"f12.go", "limit:lines", 10},
				{"f13.go", "limit:lines", 10}, {"f14.go", "limit:lines", 10}, {"f15.go", "limit:lines", 10}, {"f16.go", "limit:lines", 10},
				{"f17.go", "limit:lines", 10}, {"f18.go", "limit:lines", 10}, {"f19.go", "limit:lines", 10}},
		},
		{
			name:  "bytes: added text",
			files: []*File{small, added("long.go", strings.Repeat("x", 60))}, opts: Options{MaxFileBytes: 50},
			wantPaths: []string{"small.go"}, wantIgnored: []Ignored{{"long.go", "limit:bytes", 1}},
		},
		{
			name:  "bytes: Source size",
			files: []*File{small}, opts: Options{MaxFileBytes: 1000, Source: kb},
			wantPaths: nil, wantIgnored: []Ignored{{"small.go", "limit:bytes", 2}},
		},
		{
			name:  "bytes: before files",
			files: []*File{big, small}, opts: Options{MaxFiles: 1, MaxFileBytes: 20},
			wantPaths: []string{"small.go"}, wantIgnored: []Ignored{{"big.go", "limit:bytes", 10}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mustPrepare(t, tt.files, tt.opts)
			var paths []string
			for _, c := range p.Chunks {
				paths = append(paths, c.Path)
			}
			if diff := cmp.Diff(tt.wantPaths, paths); diff != "" {
				t.Errorf("Prepare(%s) chunk paths mismatch (-want +got):\n%s", tt.name, diff)
			}
			if diff := cmp.Diff(tt.wantIgnored, p.Ignored); diff != "" {
				t.Errorf("Prepare(%s) Ignored mismatch (-want +got):\n%s", tt.name, diff)
			}
			if tt.wantLines != nil {
				got := map[string]int{}
				for _, c := range p.Chunks {
					got[c.Path] += c.Added + c.Deleted
				}
				if diff := cmp.Diff(tt.wantLines, got); diff != "" {
					t.Errorf("Prepare(%s) changed lines per path mismatch (-want +got):\n%s", tt.name, diff)
				}
			}
		})
	}
}

func TestPreparePriority(t *testing.T) {
	t.Parallel()
	files := []*File{
		addedN("README.md", 40),
		addedN("deploy.yaml", 40),
		addedN("pkg/util/b.go", 3),
		addedN("pkg/util/a.go", 3),
		addedN("pkg/util/large.go", 30),
		addedN("pkg/Auth/login.go", 1),
		addedN("pkg/util/a_test.go", 90),
		addedN("tests/helpers.py", 1),
		replaced("pkg/util/multi.go", 10, 100),
		addedN("pkg/util/huge.go", 900),
	}
	type ranked struct {
		Path                 string
		Start, End, Priority int
	}
	want := []ranked{
		{"pkg/Auth/login.go", 1, 1, 4501},
		{"pkg/util/huge.go", 1, 900, 4499},
		{"pkg/util/large.go", 1, 30, 4030},
		{"pkg/util/a.go", 1, 3, 4003},
		{"pkg/util/b.go", 1, 3, 4003},
		{"pkg/util/multi.go", 10, 10, 4002},
		{"pkg/util/multi.go", 100, 100, 4002},
		{"pkg/util/a_test.go", 1, 90, 3090},
		{"tests/helpers.py", 1, 1, 3001},
		{"README.md", 1, 40, 2040},
		{"deploy.yaml", 1, 40, 1040},
	}
	reversed := slices.Clone(files)
	slices.Reverse(reversed)
	for _, order := range [][]*File{files, reversed} {
		var got []ranked
		for _, c := range mustPrepare(t, order, Options{MaxChunkChars: 1 << 20}).Chunks {
			got = append(got, ranked{c.Path, c.StartLine, c.EndLine, c.Priority})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Prepare chunk order mismatch (-want +got):\n%s", diff)
		}
	}
}
