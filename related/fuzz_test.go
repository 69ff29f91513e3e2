package related

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/org/warden/hunks"
)

// FuzzGather: whatever the file holds (Go that does not parse, Python with
// odd indentation, braces that never close), Gather neither panics nor
// goes over its budget, and every part is lines of a file it could read.
func FuzzGather(f *testing.F) {
	src, start := cartGo()
	f.Add(src, start, 2, ".go")
	f.Add("def a(x):\n    return b(x)\n\ndef b(y):\n  return {\n", 2, 1, ".py")
	f.Add("function f() { return g( }\nconst g = (x) => x\n", 1, 1, ".js")
	f.Add("", 1, 1, ".go")
	f.Fuzz(func(t *testing.T, text string, line, n int, ext string) {
		if line < 1 || n < 1 || n > 50 || len(ext) > 5 || strings.ContainsAny(ext, "/\x00") {
			return
		}
		p := "pkg/file" + ext
		repo := fstest.MapFS{p: {Data: []byte(text)}, "pkg/other" + ext: {Data: []byte(text)}, "go.mod": {Data: []byte("module m\n")}}
		ls := strings.Split(text, "\n")
		c := &hunks.Chunk{Path: p, StartLine: line, EndLine: line + n - 1}
		for i := line; i < line+n && i <= len(ls); i++ {
			c.Lines = append(c.Lines, hunks.Line{Op: hunks.Add, Text: ls[i-1], NewLine: i})
		}
		for _, budget := range []int{1, 500, DefaultMaxChars} {
			cx := Gather(c, Options{Source: func(string) ([]byte, error) { return []byte(text), nil }, Repo: repo, MaxChars: budget})
			if cx.Chars > budget {
				t.Fatalf("budget %d: %d chars", budget, cx.Chars)
			}
			for _, part := range cx.Parts {
				if part.StartLine < 1 || part.EndLine < part.StartLine || !strings.Contains(text+"\n", strings.TrimSuffix(part.Text, "\n")) {
					t.Fatalf("part %+v is not lines of the file", part)
				}
			}
		}
	})
}
