package workdiff

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/warden/internal/testgit"
)

const oneFile = `diff --git a/a.go b/a.go
--- a/a.go
+++ b/a.go
@@ -1,1 +1,2 @@
 package a
+var x = 1
`

func TestReadDiff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "change.diff"), []byte(oneFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\nvar x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, o := range []Options{
		{Dir: dir, Diff: "change.diff"},
		{Dir: dir, Diff: "-", Stdin: strings.NewReader(oneFile)},
	} {
		ch, err := Read(ctx, o)
		if err != nil {
			t.Fatalf("Read(%+v): %v", o, err)
		}
		if len(ch.Files) != 1 || ch.Files[0].Path() != "a.go" {
			t.Fatalf("Read(%+v) files = %v", o, ch.Files)
		}
		if b, err := ch.Source("a.go"); err != nil || !strings.Contains(string(b), "var x") {
			t.Errorf("Source(a.go) = %q, %v", b, err)
		}
		if _, err := ch.Source("../../etc/passwd"); err == nil {
			t.Error("Source read a path outside the repository")
		}
	}
}

func TestReadRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	tests := []struct {
		o    Options
		want string
	}{
		{Options{Dir: dir, Diff: "-", Stdin: strings.NewReader("")}, "--diff standard input: empty input, no diff to review"},
		{Options{Dir: dir, Diff: "missing.diff"}, "--diff missing.diff: no such file or directory"},
		{Options{Dir: dir, Diff: "."}, "--diff .: is a directory, not a diff file"},
		{Options{Dir: dir}, "is not inside a git repository"},
		{Options{Dir: dir, Base: "main"}, "is not inside a git repository"},
	}
	for _, tt := range tests {
		_, err := Read(ctx, tt.o)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Read(%+v) error = %v, want one containing %q", tt.o, err, tt.want)
		}
	}
	ch, err := Read(ctx, Options{Dir: dir, Diff: "-", Stdin: strings.NewReader(""), AllowEmpty: true})
	if err != nil || len(ch.Files) != 0 {
		t.Errorf("Read(empty, AllowEmpty) = %v, %v; want no files, no error", ch, err)
	}
}

func TestReadWorktree(t *testing.T) {
	t.Parallel()
	r := testgit.New(t)
	r.Write("a.go", "package a\n")
	r.Commit("first")
	r.Write("a.go", "package a\nvar x = 1\n")
	r.Write("sub/new.go", "package sub\n")
	ch, err := Read(context.Background(), Options{Dir: filepath.Join(r.Dir), Root: r.Dir})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range ch.Files {
		paths = append(paths, f.Path())
	}
	if strings.Join(paths, ",") != "a.go,sub/new.go" {
		t.Errorf("worktree change paths = %v, want the modified and the untracked file", paths)
	}
}
