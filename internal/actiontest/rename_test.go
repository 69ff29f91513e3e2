package actiontest

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/org/warden/internal/testgit"
)

// The placeholders, spelled so that the rename does not rewrite this test.
var (
	placeholderOwner = "o" + "rg"
	placeholderSlug  = regexp.MustCompile(`(^|[^A-Za-z0-9_.-])` + placeholderOwner + `/warden([^A-Za-z0-9_.-]|$)`)
	placeholderPath  = regexp.MustCompile(`github\.com/` + placeholderOwner + `/`)
	placeholderAuth  = regexp.MustCompile(`(?m)^author: ` + placeholderOwner + `\s*$`)
)

// TestRenameLeavesNoPlaceholder: scripts/rename.sh, run on a copy of the
// tracked tree, leaves no placeholder owner anywhere (module path, imports,
// uses:, author:, the browser tier's module), keeps the code formatted and
// its imports resolving, is idempotent, and refuses a name GitHub would.
func TestRenameLeavesNoPlaceholder(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	src := root(t)
	ls, err := exec.Command("git", "-C", src, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	r := testgit.New(t)
	before := 0
	for _, name := range strings.Split(strings.TrimSuffix(string(ls), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(src, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if name != "scripts/rename.sh" && (placeholderSlug.Match(data) || placeholderPath.Match(data) || placeholderAuth.Match(data)) {
			before++
		}
		fi, _ := os.Lstat(filepath.Join(src, name))
		r.Write(name, string(data))
		if err := os.Chmod(filepath.Join(r.Dir, name), fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	r.Commit("copy")
	if before < 8 {
		t.Fatalf("the tree holds the placeholder in %d files; the test proves nothing", before)
	}

	run := func(args ...string) (string, error) {
		cmd := exec.Command("bash", append([]string{filepath.Join(r.Dir, "scripts", "rename.sh")}, args...)...)
		cmd.Dir = t.TempDir() // it finds the tree from its own path
		cmd.Env = testgit.Env(r.Dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("acme")
	if err != nil {
		t.Fatalf("rename.sh acme: %v\n%s", err, out)
	}
	if !strings.Contains(out, "now name github.com/acme/warden") {
		t.Errorf("rename.sh acme says:\n%s", out)
	}
	err = filepath.WalkDir(r.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.Name() == ".git" {
				return filepath.SkipDir
			}
			return err
		}
		rel, _ := filepath.Rel(r.Dir, path)
		if filepath.ToSlash(rel) == "scripts/rename.sh" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, re := range []*regexp.Regexp{placeholderSlug, placeholderPath, placeholderAuth} {
			if loc := re.FindIndex(data); loc != nil {
				line := 1 + bytes.Count(data[:loc[0]], []byte("\n"))
				t.Errorf("%s:%d still names the placeholder: %q", rel, line, data[loc[0]:loc[1]])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"go.mod":                      "module github.com/acme/warden\n",
		"action.yml":                  "\nauthor: acme\n",
		"README.md":                   "uses: acme/warden@v1",
		"internal/browsertier/go.mod": "replace github.com/acme/warden => ../..",
		"cmd/warden/run.go":           `"github.com/acme/warden/cli"`,
	} {
		data, _ := os.ReadFile(filepath.Join(r.Dir, file))
		if !strings.Contains(string(data), want) {
			t.Errorf("%s does not say %q after the rename", file, want)
		}
	}

	if out, err := exec.Command("gofmt", "-l", r.Dir).Output(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		var unformatted []string
		for l := range strings.Lines(string(out)) {
			if !strings.Contains(l, "/testdata/") {
				unformatted = append(unformatted, strings.TrimSpace(l))
			}
		}
		if err != nil || len(unformatted) > 0 {
			t.Errorf("gofmt -l after the rename: %v %q", err, unformatted)
		}
	}
	list := exec.Command("go", "list", "./...")
	list.Dir = r.Dir
	list.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if out, err := list.CombinedOutput(); err != nil || !strings.Contains(string(out), "github.com/acme/warden/cmd/warden") {
		t.Errorf("go list ./... after the rename: %v\n%s", err, out)
	}

	status := func() string { return strings.TrimSpace(r.Git("status", "--porcelain")) }
	r.Commit("renamed")
	if out, err := run("acme"); err != nil || status() != "" {
		t.Errorf("a second rename.sh acme changed the tree (%v):\n%s\n%s", err, status(), out)
	}
	for _, bad := range [][]string{{}, {"-acme"}, {"ac me"}, {"acme", "bad/repo"}, {"a--b"}} {
		out, err := run(bad...)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.HasPrefix(out, "rename.sh: ") {
			t.Errorf("rename.sh %q: %v, %q; want exit 2 and one line saying why", bad, err, out)
		}
	}
	if status() != "" {
		t.Errorf("a refused rename changed the tree:\n%s", status())
	}
}
