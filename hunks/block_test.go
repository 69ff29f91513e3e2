package hunks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// blockCase is a file, the 1-based lines a chunk covers (all changed), and
// the context lines the block rule should keep.
type blockCase struct {
	name       string
	lang       string
	file       string
	start, end int
	before     []int // first and last line kept before; nil: none
	after      []int // first and last line kept after; nil: none
}

const goFile = `package p

import "fmt"

// First does things.
func First(a int) int {
	if a > 0 {
		return a
	}
	return -a
}

// Second prints.
func Second(
	a int,
	b string,
) error {
	x := a * 2
	if x > 10 {
		fmt.Println(b)
	} else if x > 5 {
		fmt.Println("mid")
	} else {
		fmt.Println("low")
		fmt.Println("low2")
	}
	return nil
}

func Third() {}
`

const pyFile = `import os


class Store:
    def __init__(self, path):
        self.path = path

    def load(self, name):
        full = os.path.join(self.path, name)
        if not os.path.exists(full):
            return None
        else:
            with open(full) as f:
                return f.read()

    def save(self, name, data):
        pass


def helper():
    return 1
`

const csFile = `namespace N
{
    class C
    {
        void F(int a)
        {
            var x = a;
            Use(x);
        }
    }
}
`

func TestTrimToBlock(t *testing.T) {
	t.Parallel()
	tests := []blockCase{
		// Line 18 (x := a * 2) sits in Second, whose header spans 14-17:
		// Before starts at "func Second(", After ends at its "}".
		{name: "go: function body, multi-line signature", lang: "Go", file: goFile, start: 18, end: 18, before: []int{14, 17}, after: []int{19, 28}},
		// Line 24 is in the else branch of an if / else if / else chain.
		{name: "go: else branch follows back to its if", lang: "Go", file: goFile, start: 24, end: 24, before: []int{19, 23}, after: []int{25, 26}},
		{name: "go: nested block", lang: "Go", file: goFile, start: 8, end: 8, before: []int{7, 7}, after: []int{9, 9}},
		// A top-level chunk keeps the rest of its declaration after it.
		{name: "go: top level, rest of the declaration", lang: "Go", file: goFile, start: 5, end: 6, before: []int{1, 4}, after: []int{7, 11}},
		// ... and drops the previous declaration's body before it and the
		// next declaration after it.
		{name: "go: top level, between declarations", lang: "Go", file: goFile, start: 11, end: 11, before: nil, after: []int{12, 13}},
		// A chunk from inside First to inside Second's signature: Before
		// shows First's header, After the rest of the signature.
		{name: "go: chunk across two declarations", lang: "Go", file: goFile, start: 9, end: 15, before: []int{6, 8}, after: []int{16, 17}},
		{name: "python: method body", lang: "Python", file: pyFile, start: 9, end: 9, before: []int{8, 8}, after: []int{10, 14}},
		{name: "python: else follows back to its if", lang: "Python", file: pyFile, start: 13, end: 13, before: []int{10, 12}, after: []int{14, 14}},
		{name: "python: top level after a class", lang: "Python", file: pyFile, start: 20, end: 21, before: nil, after: nil},
		{name: "c#: Allman braces", lang: "C#", file: csFile, start: 7, end: 7, before: []int{5, 6}, after: []int{8, 9}},
		// Flat lines at the top level: no block found, nothing trimmed.
		{name: "flat lines untouched", lang: "Go", file: flatLines(40), start: 20, end: 20, before: []int{1, 19}, after: []int{21, 40}},
		{name: "unknown language untouched", lang: "YAML", file: goFile, start: 18, end: 18, before: []int{1, 17}, after: []int{19, 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lines := splitLines(tt.file)
			ch := &Chunk{Language: tt.lang}
			for n := tt.start; n <= tt.end; n++ {
				ch.Lines = append(ch.Lines, Line{Op: Add, Text: lines[n-1], NewLine: n})
			}
			for n := max(1, tt.start-40); n < tt.start; n++ {
				ch.Before = append(ch.Before, ContextLine{Line: n, Text: lines[n-1]})
			}
			for n := tt.end + 1; n <= min(len(lines), tt.end+40); n++ {
				ch.After = append(ch.After, ContextLine{Line: n, Text: lines[n-1]})
			}
			trimToBlock(ch)
			got := [2][]int{lineSpan(ch.Before), lineSpan(ch.After)}
			want := [2][]int{tt.before, tt.after}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("trimToBlock(lines %d-%d) [before, after] spans (-want +got):\n%s", tt.start, tt.end, diff)
			}
		})
	}
}

// lineSpan returns the first and last line numbers of cl; nil when empty.
func lineSpan(cl []ContextLine) []int {
	if len(cl) == 0 {
		return nil
	}
	return []int{cl[0].Line, cl[len(cl)-1].Line}
}

func flatLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "l%02d\n", i)
	}
	return b.String()
}

// TestPrepareTrimsContext checks the rule's wiring: Prepare trims by
// default and keeps ContextLines each side with FullContext.
func TestPrepareTrimsContext(t *testing.T) {
	t.Parallel()
	lines := splitLines(goFile)
	newText := strings.Replace(lines[17], "a * 2", "a * 3", 1)
	diff := fmt.Sprintf("diff --git a/p.go b/p.go\nindex 1111111..2222222 100644\n--- a/p.go\n+++ b/p.go\n@@ -18 +18 @@\n-%s\n+%s\n", lines[17], newText)
	files, err := Parse(strings.NewReader(diff))
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(goFile, "a * 2", "a * 3", 1)
	source := func(string) ([]byte, error) { return []byte(src), nil }
	tests := []struct {
		name       string
		opts       Options
		wantBefore []int
		wantAfter  []int
	}{
		{"trimmed by default", Options{Source: source}, []int{14, 17}, []int{19, 28}},
		{"full context", Options{Source: source, FullContext: true, ContextLines: 5}, []int{13, 17}, []int{19, 23}},
		{"full context, default 20", Options{Source: source, FullContext: true}, []int{1, 17}, []int{19, 30}},
	}
	for _, tt := range tests {
		p, err := Prepare(files, tt.opts)
		if err != nil || len(p.Chunks) != 1 {
			t.Fatalf("Prepare(%s) = %v, %v; want one chunk", tt.name, p, err)
		}
		c := p.Chunks[0]
		got := [2][]int{lineSpan(c.Before), lineSpan(c.After)}
		if diff := cmp.Diff([2][]int{tt.wantBefore, tt.wantAfter}, got); diff != "" {
			t.Errorf("Prepare(%s) [before, after] spans (-want +got):\n%s", tt.name, diff)
		}
	}
}
