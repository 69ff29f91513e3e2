package hunks

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []*File
	}{
		{name: "empty", in: "", want: nil},
		{name: "blank", in: "\n \n\t\n", want: nil},
		{
			name: "commit without changes",
			in:   "commit 0123456789abcdef0123456789abcdef01234567\nAuthor: A <a@example.com>\nDate:   Tue Jan 2 03:04:05 2024 +0000\n\n    empty\n",
			want: nil,
		},
		{
			name: "traditional with timestamps",
			in: "--- greet.py\t2024-01-02 03:04:05.000000000 +0000\n" +
				"+++ greet.py\t2024-01-02 03:04:06.000000000 +0000\n" +
				"@@ -1,2 +1,2 @@\n def greet():\n-    return 1\n+    return 2\n",
			want: []*File{{
				OldPath: "greet.py", NewPath: "greet.py", Status: Modified,
				Fragments: []Fragment{{OldStart: 1, OldLines: 2, NewStart: 1, NewLines: 2, Lines: []Line{
					{Op: Context, Text: "def greet():", OldLine: 1, NewLine: 1},
					{Op: Delete, Text: "    return 1", OldLine: 2},
					{Op: Add, Text: "    return 2", NewLine: 2},
				}}},
			}},
		},
		{
			name: "traditional new file",
			in:   "--- /dev/null\n+++ b/new.go\n@@ -0,0 +1 @@\n+package x\n",
			want: []*File{{NewPath: "b/new.go", Status: Added, Fragments: []Fragment{{
				NewStart: 1, NewLines: 1, Lines: []Line{{Op: Add, Text: "package x", NewLine: 1}},
			}}}},
		},
		{
			name: "line numbers, section, CRLF and missing newlines",
			in: "diff --git a/x.c b/x.c\nindex 1111111..2222222 100644\n--- a/x.c\n+++ b/x.c\n" +
				"@@ -10,4 +10,4 @@ int main(void)\n a\r\n-b\r\n+B\r\n c\n-d\n\\ No newline at end of file\n+d\n",
			want: []*File{{
				OldPath: "x.c", NewPath: "x.c", Status: Modified, OldMode: 0o644, NewMode: 0o644,
				Fragments: []Fragment{{OldStart: 10, OldLines: 4, NewStart: 10, NewLines: 4, Section: "int main(void)", Lines: []Line{
					{Op: Context, Text: "a", OldLine: 10, NewLine: 10, CRLF: true},
					{Op: Delete, Text: "b", OldLine: 11, CRLF: true},
					{Op: Add, Text: "B", NewLine: 11, CRLF: true},
					{Op: Context, Text: "c", OldLine: 12, NewLine: 12},
					{Op: Delete, Text: "d", OldLine: 13, NoNewline: true},
					{Op: Add, Text: "d", NewLine: 13},
				}}},
			}},
		},
		{
			name: "mode-only, symlink and submodule",
			in: "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n" +
				"diff --git a/link b/link\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+target\n\\ No newline at end of file\n" +
				"diff --git a/lib b/lib\nindex 1111111..2222222 160000\n--- a/lib\n+++ b/lib\n@@ -1 +1 @@\n-Subproject commit 1111111111111111111111111111111111111111\n+Subproject commit 2222222222222222222222222222222222222222\n",
			want: []*File{
				{OldPath: "run.sh", NewPath: "run.sh", Status: Modified, OldMode: 0o644, NewMode: 0o755, ModeOnly: true, Fragments: []Fragment{}},
				{NewPath: "link", Status: Added, NewMode: fs.ModeSymlink | 0o000, Fragments: []Fragment{{
					NewStart: 1, NewLines: 1, Lines: []Line{{Op: Add, Text: "target", NewLine: 1, NoNewline: true}},
				}}},
				{OldPath: "lib", NewPath: "lib", Status: Modified, OldMode: fs.ModeDir, NewMode: fs.ModeDir, Fragments: []Fragment{{
					OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 1, Lines: []Line{
						{Op: Delete, Text: "Subproject commit 1111111111111111111111111111111111111111", OldLine: 1},
						{Op: Add, Text: "Subproject commit 2222222222222222222222222222222222222222", NewLine: 1},
					},
				}}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		notDiff bool // the error wraps ErrNotDiff
		want    string
	}{
		{name: "text", in: "hello\nworld\n", notDiff: true, want: `not a unified diff: no "diff --git" or "---/+++" header found`},
		{name: "binary garbage", in: "\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", notDiff: true, want: "not a unified diff"},
		{name: "no trailing newline", in: "just words", notDiff: true, want: "not a unified diff"},
		{name: "fragment without header", in: "@@ -1 +1 @@\n-a\n+b\n", want: "patch fragment without file header"},
		{name: "short fragment", in: "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n", want: "parse diff"},
		{name: "line number out of range", in: "--- a/x\n+++ b/x\n@@ -1 +99999999999 @@\n-a\n+b\n", want: "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse(%q) = %v, %v, want error containing %q", tt.in, got, err, tt.want)
			}
			if errors.Is(err, ErrNotDiff) != tt.notDiff {
				t.Errorf("errors.Is(Parse(%q), ErrNotDiff) = %v, want %v", tt.in, !tt.notDiff, tt.notDiff)
			}
			if got != nil {
				t.Errorf("Parse(%q) files = %v, want nil with an error", tt.in, got)
			}
		})
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   interface{ String() string }
		want string
	}{
		{Modified, "modified"}, {Added, "added"}, {Deleted, "deleted"}, {Renamed, "renamed"},
		{Copied, "copied"}, {FileStatus(0), "FileStatus(0)"},
		{Context, "context"}, {Add, "add"}, {Delete, "delete"}, {Op(9), "Op(9)"},
		{Source, "source"}, {Test, "test"}, {Doc, "doc"}, {Config, "config"}, {Class(0), "Class(0)"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}
