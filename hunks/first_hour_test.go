package hunks

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/org/warden/internal/gendiff"
)

func TestRiskWord(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"internal/auth/handler.go":                 "auth",
		"pkg/OAuth2Client.go":                      "auth",
		"src/userSession.ts":                       "session",
		"db/migrations/0001_init.sql":              "migrations",
		"app/models/Payment.rb":                    "payment",
		"lib/access_token.go":                      "access token",
		"lib/refreshTokens.ts":                     "refresh tokens",
		"api/JWTToken.java":                        "jwt",
		"pkg/util/author.go":                       "",
		"web/ui/module/lezer-promql/src/tokens.js": "",
		"go/token/position.go":                     "",
		"pkg/mysqlx/bench.go":                      "",
		"internal/sessionizer/x.go":                "",
		"pkg/util/strings.go":                      "",
		"cmd/LOGIN/main.go":                        "login",
	}
	for p, want := range tests {
		if got := riskWord(p); got != want {
			t.Errorf("riskWord(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	tests := map[string][]string{
		"pkg/OAuth2Client.go":   {"pkg", "o", "auth", "client", "go"},
		"a/userID_x-y.z":        {"a", "user", "id", "x", "y", "z"},
		"JWTToken":              {"jwt", "token"},
		"":                      nil,
		"__init__.py":           {"init", "py"},
		"HTTPServer/getURLs.go": {"http", "server", "get", "ur", "ls", "go"},
	}
	for p, want := range tests {
		if diff := cmp.Diff(want, words(p)); diff != "" {
			t.Errorf("words(%q) mismatch (-want +got):\n%s", p, diff)
		}
	}
}

func TestPrepareWhy(t *testing.T) {
	t.Parallel()
	p := mustPrepare(t, []*File{addedN("pkg/auth/login.go", 3), addedN("README.md", 1), addedN("big.go", 600)}, Options{MaxChunkChars: 1 << 20})
	var got []string
	for _, c := range p.Chunks {
		got = append(got, c.Path+": "+c.Why)
	}
	want := []string{
		`pkg/auth/login.go: source, risk word "auth", 3 changed lines`,
		`big.go: source, 600 changed lines (counted as 499)`,
		`README.md: doc, 1 changed line`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Prepare chunk reasons mismatch (-want +got):\n%s", diff)
	}
}

// TestPrepareSpreadsLinesOverFiles is the Prometheus case: 1,500 files and
// 300,000 changed lines under the default limits. Ranking the largest files
// first and stopping at the first that did not fit reviewed 18 files; the
// line budget must be spread over at least 100.
func TestPrepareSpreadsLinesOverFiles(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := gendiff.WriteSkewed(&b, 1500, 300_000); err != nil {
		t.Fatal(err)
	}
	files, err := Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		for _, fr := range f.Fragments {
			for _, l := range fr.Lines {
				if l.Op != Context {
					total++
				}
			}
		}
	}
	if len(files) != 1500 || total < 280_000 {
		t.Fatalf("gendiff.WriteSkewed(1500, 300000) = %d files, %d changed lines; want 1500 and about 300,000", len(files), total)
	}
	p := mustPrepare(t, files, Options{})
	reviewed, lines, most := map[string]int{}, 0, 0
	for _, c := range p.Chunks {
		reviewed[c.Path] += c.Added + c.Deleted
		lines += c.Added + c.Deleted
	}
	for _, n := range reviewed {
		most = max(most, n)
	}
	if len(reviewed) < 100 {
		t.Errorf("Prepare(Prometheus-shaped change) reviews %d files, want at least 100", len(reviewed))
	}
	if lines > DefaultMaxChangedLines || lines < DefaultMaxChangedLines*9/10 {
		t.Errorf("Prepare(Prometheus-shaped change) reviews %d changed lines, want most of the %d budget and no more", lines, DefaultMaxChangedLines)
	}
	if most > DefaultMaxChangedLines/10 {
		t.Errorf("Prepare(Prometheus-shaped change): one file takes %d of %d lines, want at most a tenth", most, DefaultMaxChangedLines)
	}
	if top := p.Chunks[0]; strings.Contains(top.Path, "tokens.js") {
		t.Errorf("Prepare(Prometheus-shaped change) top item = %s (%s), want a risk-bearing source file, not the lexer", top.Path, top.Why)
	}
	counts := map[string]int{}
	for _, ig := range p.Ignored {
		counts[ig.Reason]++
	}
	if counts["limit:lines:partial"] == 0 || counts["limit:files"] == 0 {
		t.Errorf("Prepare(Prometheus-shaped change) ignored reasons = %v, want some limit:lines:partial and limit:files", counts)
	}
	checkPlan(t, p, files, Options{}.withDefaults())
}

const crlfDiff = "diff --git a/go.sum b/go.sum\nindex 1111111..2222222 100644\n--- a/go.sum\n+++ b/go.sum\n" +
	"@@ -1,2 +1,2 @@\n a\n-b\n+c\n" +
	"diff --git a/x.go b/x.go\nnew file mode 100644\nindex 0000000..2222222\n--- /dev/null\n+++ b/x.go\n" +
	"@@ -0,0 +1,2 @@\n+package x\n+\n\\ No newline at end of file\n"

func TestParseCRLF(t *testing.T) {
	t.Parallel()
	lf, err := Parse(strings.NewReader(crlfDiff))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(strings.NewReader(strings.ReplaceAll(crlfDiff, "\n", "\r\n")))
	if err != nil {
		t.Fatalf("Parse(CRLF diff) error: %v", err)
	}
	// The same files, paths and modes; only the lines record their "\r\n".
	for _, f := range lf {
		for i := range f.Fragments {
			for j := range f.Fragments[i].Lines {
				f.Fragments[i].Lines[j].CRLF = true
			}
		}
	}
	if diff := cmp.Diff(lf, got); diff != "" {
		t.Errorf("Parse(CRLF diff) mismatch (-LF with CRLF lines +got):\n%s", diff)
	}
	plan := mustPrepare(t, got, Options{})
	if diff := cmp.Diff([]Ignored{{"go.sum", "lockfile", 2}}, plan.Ignored); diff != "" {
		t.Errorf("Prepare(CRLF diff) Ignored mismatch (-want +got):\n%s", diff)
	}
}

func TestParseLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "big.diff")
	if err := os.WriteFile(file, []byte(crlfDiff), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func() io.Reader {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	n := int64(len(crlfDiff))
	tests := []struct {
		name  string
		r     io.Reader
		limit int64
		want  error // nil: parses
		read  bool  // the reader must have been read (the size was not known)
	}{
		{name: "file within the cap", r: open(), limit: n},
		{name: "file over the cap", r: open(), limit: n - 1, want: ErrTooLarge},
		{name: "strings.Reader over the cap", r: strings.NewReader(crlfDiff), limit: 10, want: ErrTooLarge},
		{name: "stream over the cap", r: &countingReader{r: strings.NewReader(crlfDiff)}, limit: n - 1, want: ErrTooLarge, read: true},
		{name: "stream within the cap", r: &countingReader{r: strings.NewReader(crlfDiff)}, limit: n, read: true},
		{name: "no cap", r: &countingReader{r: strings.NewReader(crlfDiff)}, read: true},
		{name: "empty", r: strings.NewReader(""), limit: n, want: ErrEmpty},
		{name: "blank", r: &countingReader{r: strings.NewReader(" \r\n\n\t\n")}, want: ErrEmpty, read: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := ParseLimit(tt.r, tt.limit)
			switch {
			case tt.want == nil && (err != nil || len(files) != 2):
				t.Errorf("ParseLimit(%s, %d) = %d files, %v; want 2 files", tt.name, tt.limit, len(files), err)
			case tt.want != nil && (!errors.Is(err, tt.want) || files != nil):
				t.Errorf("ParseLimit(%s, %d) = %d files, %v; want an error wrapping %v", tt.name, tt.limit, len(files), err, tt.want)
			}
			if c, ok := tt.r.(*countingReader); ok && (c.n > 0) != tt.read {
				t.Errorf("ParseLimit(%s) read %d bytes", tt.name, c.n)
			}
		})
	}
	if _, err := Parse(strings.NewReader("\n\n")); err != nil {
		t.Errorf("Parse(blank) error %v, want no files and no error", err)
	}
}

// countingReader hides its reader's size and counts what is read.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestParseLimitStreams refuses a stream far over the cap after reading
// about the cap, not the whole stream.
func TestParseLimitStreams(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	go func() {
		err := gendiff.Write(pw, 200_000) // about 400 MB if read to the end
		pw.CloseWithError(err)
	}()
	c := &countingReader{r: pr}
	_, err := ParseLimit(c, 1<<20)
	pr.CloseWithError(errors.New("done"))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ParseLimit(400 MB stream, 1 MiB) error = %v, want ErrTooLarge", err)
	}
	if c.n > 1<<20+128<<10 {
		t.Errorf("ParseLimit(400 MB stream, 1 MiB) read %d bytes before refusing, want about 1 MiB", c.n)
	}
}
