// Package testgit is the one hermetic git-repository helper of the tests: a
// repository in t.TempDir() whose git reads no system or user
// configuration, commits with a fixed identity and never signs; and a
// loopback server of repositories over git's smart HTTP protocol, with
// GitHub's rule for an access token (Serve).
//
// It is for tests only and imports no package of this module.
package testgit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Repo is a git repository in a test's temporary directory.
type Repo struct {
	t   testing.TB
	Dir string
}

// New makes an empty repository on branch main.
func New(t testing.TB) *Repo {
	t.Helper()
	r := &Repo{t: t, Dir: t.TempDir()}
	r.Git("init", "-q", "-b", "main")
	r.Git("config", "user.email", "test@example.com")
	r.Git("config", "user.name", "Test")
	r.Git("config", "commit.gpgsign", "false")
	r.Git("config", "tag.gpgsign", "false")
	return r
}

// T is the test the repository belongs to.
func (r *Repo) T() testing.TB { return r.t }

// Env is the environment every git command of a test runs with: the
// process's without its GIT_* variables, no system or global
// configuration, HOME in the repository, fixed dates.
func Env(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "HOME="+dir, "LC_ALL=C", "TZ=UTC",
		"GIT_AUTHOR_DATE=2024-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2024-01-02T03:04:05Z")
}

// Git runs git in the repository and returns its output; a failure fails
// the test.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.Dir}, args...)...)
	cmd.Env = Env(r.Dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Write writes a file of the working tree, making its directories.
func (r *Repo) Write(path, content string) {
	r.t.Helper()
	full := filepath.Join(r.Dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// Commit stages everything and commits it; it returns the commit id.
func (r *Repo) Commit(msg string) string {
	r.t.Helper()
	r.Git("add", "-A")
	r.Git("commit", "-qm", msg)
	out := r.Git("rev-parse", "HEAD")
	return out[:len(out)-1]
}

// Bare clones the repository into a bare one in a new temporary
// directory, as a server holds it, and returns its path.
func (r *Repo) Bare() string {
	r.t.Helper()
	dir := filepath.Join(r.t.TempDir(), "upstream.git")
	cmd := exec.Command("git", "clone", "--quiet", "--bare", r.Dir, dir)
	cmd.Env = Env(r.Dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("git clone --bare: %v\n%s", err, out)
	}
	return dir
}

// InsteadOf is the environment of a git child that reaches each URL of
// redirect at the local repository it maps to, through git's own
// url.<path>.insteadOf in a configuration file of the child's
// (GIT_CONFIG_GLOBAL), after Env's: nothing outside the test changes.
// extra is more configuration, appended as it is.
func InsteadOf(t testing.TB, redirect map[string]string, extra string) []string {
	t.Helper()
	var b strings.Builder
	for url, path := range redirect {
		fmt.Fprintf(&b, "[url %q]\n\tinsteadOf = %s\n", path, url)
	}
	b.WriteString(extra)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return append(Env(dir), "GIT_CONFIG_GLOBAL="+cfg)
}
