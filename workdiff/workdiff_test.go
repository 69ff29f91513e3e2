package workdiff

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/gitrepo"
	"github.com/org/warden/internal/testgit"
)

const oneFile = `diff --git a/a.go b/a.go
--- a/a.go
+++ b/a.go
@@ -1,1 +1,2 @@
 package a
+var x = 1
`

// plan reads and plans the change the options name, closing it after.
func plan(t *testing.T, o Options, opts hunks.Options) (*hunks.Plan, *Change) {
	t.Helper()
	ch, err := Read(t.Context(), o)
	if err != nil {
		t.Fatalf("Read(%+v): %v", o, err)
	}
	t.Cleanup(func() { ch.Close() })
	if opts.Source == nil {
		opts.Source, opts.VerifySource = ch.Source, true
	}
	p, err := ch.Plan(opts)
	if err != nil {
		t.Fatalf("Plan(%+v): %v", o, err)
	}
	return p, ch
}

// paths are the paths of the files a plan reviews.
func paths(p *hunks.Plan) []string {
	var out []string
	for _, f := range p.Files {
		out = append(out, f.Path())
	}
	return out
}

func TestReadDiff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "change.diff"), []byte(oneFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\nvar x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{
		{Dir: dir, Diff: "change.diff"},
		{Dir: dir, Diff: "-", Stdin: strings.NewReader(oneFile)},
	} {
		p, ch := plan(t, o, hunks.Options{})
		if diff := cmp.Diff([]string{"a.go"}, paths(p)); diff != "" {
			t.Fatalf("Read(%+v) planned files (-want +got):\n%s", o, diff)
		}
		if b, err := ch.Source("a.go"); err != nil || !strings.Contains(string(b), "var x") {
			t.Errorf("Source(a.go) = %q, %v", b, err)
		}
		if _, err := ch.Source("../../etc/passwd"); err == nil {
			t.Error("Source read a path outside the repository")
		}
		if _, err := ch.Plan(hunks.Options{}); err == nil {
			t.Error("a second Plan read the diff again")
		}
	}
}

func TestReadRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A sparse file: its size is over the cap, its blocks are not written.
	huge := filepath.Join(dir, "huge.diff")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, gitrepo.MaxOutput+1); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		o    Options
		want string
	}{
		{Options{Dir: dir, Diff: "-", Stdin: strings.NewReader("")}, "--diff standard input: empty input, no diff to review"},
		{Options{Dir: dir, Diff: "missing.diff"}, "--diff missing.diff: no such file or directory"},
		{Options{Dir: dir, Diff: "."}, "--diff .: is a directory, not a diff file"},
		{Options{Dir: dir, Diff: "huge.diff"}, "--diff huge.diff: diff too large: 512 MiB, over the 512 MiB cap (review a smaller range)"},
		{Options{Dir: dir, Diff: "-", Stdin: strings.NewReader("hello\n")}, `--diff standard input: not a unified diff`},
		{Options{Dir: dir}, "is not inside a git repository"},
		{Options{Dir: dir, Base: "main"}, "is not inside a git repository"},
	}
	for _, tt := range tests {
		ch, err := Read(t.Context(), tt.o)
		if err == nil {
			_, err = ch.Plan(hunks.Options{})
			ch.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Read(%+v) and Plan: error = %v, want one containing %q", tt.o, err, tt.want)
		}
	}
	p, _ := plan(t, Options{Dir: dir, Diff: "-", Stdin: strings.NewReader(""), AllowEmpty: true}, hunks.Options{})
	if len(p.Chunks) != 0 || len(p.Ignored) != 0 {
		t.Errorf("an empty diff with AllowEmpty planned %v; want nothing to review, no error", p)
	}
}

func TestReadWorktree(t *testing.T) {
	t.Parallel()
	r := testgit.New(t)
	r.Write("a.go", "package a\n")
	r.Commit("first")
	r.Write("a.go", "package a\nvar x = 1\n")
	r.Write("sub/new.go", "package sub\n")
	p, _ := plan(t, Options{Dir: filepath.Join(r.Dir, "sub"), Root: r.Dir}, hunks.Options{})
	if diff := cmp.Diff([]string{"a.go", "sub/new.go"}, paths(p)); diff != "" {
		t.Errorf("worktree change: the modified and the untracked file (-want +got):\n%s", diff)
	}
}

// baseRepo is a repository on a branch with n changed Go files since main,
// and a working tree that has moved on from the branch's head.
func baseRepo(t *testing.T, n int) *testgit.Repo {
	t.Helper()
	r := testgit.New(t)
	head := "package pkg\n\n// A line the diff's own context does not show.\n" + strings.Repeat("\n", 5)
	for i := range n {
		r.Write(fmt.Sprintf("pkg/f%03d.go", i), fmt.Sprintf("%sfunc f%d() int {\n\treturn %d\n}\n", head, i, i))
	}
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "topic")
	for i := range n {
		r.Write(fmt.Sprintf("pkg/f%03d.go", i), fmt.Sprintf("%sfunc f%d() int {\n\treturn %d + 1\n}\n", head, i, i))
	}
	r.Commit("change every file")
	for i := range n {
		r.Write(fmt.Sprintf("pkg/f%03d.go", i), "uncommitted\n")
	}
	return r
}

// --base reads the files from the branch's head commit, not the working
// tree, and refuses a path leaving the repository.
func TestReadBase(t *testing.T) {
	t.Parallel()
	r := baseRepo(t, 3)
	p, ch := plan(t, Options{Dir: r.Dir, Base: "main"}, hunks.Options{FullContext: true})
	if diff := cmp.Diff([]string{"pkg/f000.go", "pkg/f001.go", "pkg/f002.go"}, paths(p)); diff != "" {
		t.Fatalf("--base main planned (-want +got):\n%s", diff)
	}
	want := []hunks.ContextLine{{Line: 1, Text: "package pkg"}, {Line: 2}, {Line: 3, Text: "// A line the diff's own context does not show."}, {Line: 4}, {Line: 5}, {Line: 6}}
	if diff := cmp.Diff(want, p.Chunks[len(p.Chunks)-1].Before); diff != "" {
		t.Errorf("context of pkg/f000.go, read from the commit (-want +got):\n%s", diff)
	}
	for _, path := range []string{"../outside", "/etc/passwd", "pkg/../../x"} {
		if _, err := ch.Source(path); !errors.Is(err, fs.ErrInvalid) || !strings.Contains(err.Error(), "leaves the repository") {
			t.Errorf("Source(%q) = %v, want a refusal", path, err)
		}
	}
	if b, err := ch.Source("pkg/f001.go"); err != nil || !strings.Contains(string(b), "return 1 + 1") {
		t.Errorf("Source(pkg/f001.go) after the refusals = %q, %v; want the commit's file", b, err)
	}
	if err := ch.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if _, err := ch.Source("pkg/f001.go"); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Source after Close = %v, want fs.ErrClosed", err)
	}
	if _, err := Read(t.Context(), Options{Dir: r.Dir, Base: "no-such-branch"}); err == nil || !strings.HasPrefix(err.Error(), `--base no-such-branch: no branch, tag or commit "no-such-branch"`) {
		t.Errorf("Read(--base no-such-branch) = %v, want the missing revision named", err)
	}
}

// Planning --base starts a handful of git processes whatever the number
// of files, not one per file: the checks, the commit's files (rev-parse
// and one cat-file --batch), the merge base and the diff.
func TestReadBaseStartsFewGitProcesses(t *testing.T) {
	// Not parallel: gitrepo.Started counts the test binary's processes.
	count := func(files int) int64 {
		r := baseRepo(t, files)
		before := gitrepo.Started()
		p, _ := plan(t, Options{Dir: r.Dir, Base: "main"}, hunks.Options{})
		started := gitrepo.Started() - before
		if len(p.Files) != files {
			t.Fatalf("planned %d files, want %d", len(p.Files), files)
		}
		t.Logf("--base main over %d changed files: %d git processes", files, started)
		return started
	}
	few, many := count(30), count(300)
	if few != many || many > 10 {
		t.Errorf("--base main started %d git processes over 30 changed files and %d over 300, want the same, at most 10", few, many)
	}
}

// Close stops a diff that was never planned (a configuration error after
// Read) at once; the context kills the processes, and reads say why.
func TestReadBaseLifetime(t *testing.T) {
	t.Parallel()
	r := testgit.New(t)
	r.Write("big.txt", "start\n")
	r.Commit("base")
	r.Git("branch", "base")
	r.Write("big.txt", strings.Repeat("a line that makes the diff larger than a pipe holds\n", 20_000))
	r.Commit("a 1 MB change")
	ch, err := Read(t.Context(), Options{Dir: r.Dir, Base: "base"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Close(); err != nil {
		t.Errorf("Close of an unread diff = %v", err)
	}

	ctx, cancel := context.WithCancelCause(t.Context())
	ch, err = Read(ctx, Options{Dir: r.Dir, Base: "base"})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	interrupted := errors.New("interrupted")
	cancel(interrupted)
	if _, err := ch.Plan(hunks.Options{}); err == nil {
		t.Error("Plan after the context was cancelled succeeded; want git's diff to have been stopped")
	}
	var readErr error
	for range 100 { // the kill lands asynchronously
		if _, readErr = ch.Source("big.txt"); readErr != nil {
			break
		}
	}
	if !errors.Is(readErr, interrupted) {
		t.Errorf("Source after the context was cancelled = %v, want the cause", readErr)
	}
}
