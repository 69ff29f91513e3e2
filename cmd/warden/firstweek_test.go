package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A user's first week (issue 24): the rough edges a new user still hit.

// TestOutputErrorsNameThePath: --output naming a directory, a path whose
// directory is missing, or one under a file is one line naming the path as
// given and the problem, exit 2, no temporary name, nothing left behind;
// for review and for eval alike.
func TestOutputErrorsNameThePath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ output, want string }{
		{"out", "warden: --output out: is a directory, not a file\n"},
		{"out/", "warden: --output out/: is a directory, not a file\n"},
		{"nope/review.md", "warden: --output nope/review.md: its directory does not exist\n"},
		{"notes.txt/review.md", "warden: --output notes.txt/review.md: a parent is a file, not a directory\n"},
	}
	for _, c := range cases {
		res := runWarden(t, dir, nil, "", "review", "--diff", diff, "--dry-run", "--output", c.output)
		if res.code != exitUsage || res.stderr != c.want || res.stdout != "" {
			t.Errorf("review --output %s: exit %d, stderr %q; want 2 and %q", c.output, res.code, res.stderr, c.want)
		}
	}
	res := runWarden(t, shippedEval, nil, "", "eval", "--config", "warden.toml", "--skills", ".", "--skill", "synthetic-bugs",
		"--replay", "recording", "--output", filepath.Join(dir, "out"), "corpus")
	if want := "warden: --output " + filepath.Join(dir, "out") + ": is a directory, not a file\n"; res.code != exitUsage || res.stderr != want {
		t.Errorf("eval --output DIR: exit %d, stderr %q; want 2 and %q", res.code, res.stderr, want)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "out"))
	all, _ := os.ReadDir(dir)
	for _, e := range all {
		if strings.HasPrefix(e.Name(), ".warden-report-") {
			t.Errorf("a temporary file was left behind: %s", e.Name())
		}
	}
	if len(entries) != 0 {
		t.Errorf("out/ holds %v; want nothing written", entries)
	}
}
