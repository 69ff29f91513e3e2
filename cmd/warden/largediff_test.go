package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/org/warden/internal/testgit"
)

// TestLargeDiffMemory runs `warden review --diff change.diff --dry-run
// --format json` with the default limits over a 300 MB diff: gendiff's
// change of 103,000 files of 40 changed lines, the shape of the 300 MB diff
// that peaked at 1.08 GB (3.6 times its size) when it was parsed whole
// before planning. It runs in a child process (TestDryRunMemoryChild) whose
// peak resident set, the Go runtime and the test binary included, must be
// at most the diff's size. Skipped under -race, which multiplies memory,
// and with -short (it writes 300 MB to a temporary directory).
func TestLargeDiffMemory(t *testing.T) {
	t.Parallel()
	memoryRun(t, "writes and plans a 300 MB diff in a child process")
	const files = 103_000
	dir := t.TempDir()
	size := float64(writeChange(t, dir, files)) / (1 << 20)
	hwm, heapSys, total, data := dryRunMemory(t, dir)
	var rep struct {
		Items   []struct{ Path string }
		Ignored []struct{ Reason string }
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	limited := 0
	for _, ig := range rep.Ignored {
		if ig.Reason == "limit:files" {
			limited++
		}
	}
	t.Logf("dry run of a %.0f MiB diff (%d files, %d changed lines): %d items, %d paths over max_files; peak RSS %.1f MiB (%.2f× the diff), heap from the OS %.1f MiB, allocated in all %.0f MiB",
		size, files, 40*files, len(rep.Items), limited, float64(hwm)/1024, float64(hwm)/1024/size, float64(heapSys)/(1<<20), float64(total)/(1<<20))
	if want := 4 * 300; len(rep.Items) != want || limited != files-300 {
		t.Errorf("dry run planned %d items with %d paths over max_files, want %d (2 skills × 2 chunks × 300 files) and %d", len(rep.Items), limited, want, files-300)
	}
	if float64(hwm)/1024 > size {
		t.Errorf("dry run of a %.0f MiB diff: peak RSS %.1f MiB, want at most the diff's size", size, float64(hwm)/1024)
	}
}

// TestBaseGitProcessesChild is the helper process of TestBaseGitProcesses:
// it runs `warden review --base main --dry-run` in the repository the
// parent names, with the git of the parent's PATH.
func TestBaseGitProcessesChild(t *testing.T) {
	dir := os.Getenv("WARDEN_TEST_GIT_DIR")
	if dir == "" {
		t.Skip("helper process of TestBaseGitProcesses")
	}
	childDryRun(t, dir, "--base", "main")
}

// TestBaseGitProcesses counts the git processes `warden review --base main`
// starts on branches that changed 30 and 300 files: a git on the child's
// PATH logs each run before running the real one. Reading the files
// through one `git cat-file --batch` process, the count does not grow with
// the files (it was one `git show` a file: 305 for 300 files).
func TestBaseGitProcesses(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the counting git is a shell script")
	}
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("needs git")
	}
	few, many := baseGitProcesses(t, realGit, 30), baseGitProcesses(t, realGit, 300)
	if few != many || many > 15 {
		t.Errorf("warden review --base main started %d git processes over 30 changed files and %d over 300, want the same, at most 15", few, many)
	}
}

// baseGitProcesses runs `warden review --base main --dry-run` in a child,
// on a branch that changed files files, and returns the git processes it
// started.
func baseGitProcesses(t *testing.T, realGit string, files int) int {
	t.Helper()
	r := testgit.New(t)
	for i := range files {
		r.Write(fmt.Sprintf("pkg/f%03d.go", i), fmt.Sprintf("package pkg\n\nfunc f%d() int {\n\treturn %d\n}\n", i, i))
	}
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "topic")
	for i := range files {
		r.Write(fmt.Sprintf("pkg/f%03d.go", i), fmt.Sprintf("package pkg\n\nfunc f%d() int {\n\treturn %d + 1\n}\n", i, i))
	}
	r.Commit("change every file")

	bin := t.TempDir()
	log := filepath.Join(t.TempDir(), "git.log")
	script := "#!/bin/sh\necho \"$*\" >> \"$WARDEN_TEST_GIT_LOG\"\nexec \"$WARDEN_TEST_REAL_GIT\" \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBaseGitProcessesChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"WARDEN_TEST_GIT_DIR="+r.Dir, "WARDEN_TEST_GIT_LOG="+log, "WARDEN_TEST_REAL_GIT="+realGit)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	calls, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(r.Dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct{ Items []struct{ Path string } }
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	n := strings.Count(string(calls), "\n")
	t.Logf("warden review --base main over %d changed files: %d items, %d git processes:\n%s", files, len(rep.Items), n, calls)
	if len(rep.Items) != 2*files {
		t.Errorf("planned %d items, want %d (2 skills × %d files)", len(rep.Items), 2*files, files)
	}
	return n
}
