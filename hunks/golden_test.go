package hunks

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/internal/testgit"
)

var (
	update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")
	regen  = flag.Bool("regen", false, "regenerate testdata/*.diff with real git (needs git and diff on PATH)")
)

// gitRepo is internal/testgit's hermetic repository, for generating test
// diffs with real git under a fixed identity.
type gitRepo struct {
	*testgit.Repo
	t   *testing.T
	env []string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	r := testgit.New(t)
	return &gitRepo{Repo: r, t: t, env: append(testgit.Env(r.Dir),
		"GIT_AUTHOR_NAME=Warden Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Warden Test", "GIT_COMMITTER_EMAIL=test@example.com")}
}

// run runs a command in the repository and returns its output; exit code 1
// is accepted for diff(1), which uses it for "files differ".
func (g *gitRepo) run(name string, args ...string) string {
	g.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = g.Dir, g.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && name == "diff" && ee.ExitCode() == 1 {
		err = nil
	}
	if err != nil {
		g.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func (g *gitRepo) git(args ...string) string {
	g.t.Helper()
	base := []string{"-c", "core.quotePath=true", "-c", "core.autocrlf=false", "-c", "core.fileMode=true",
		"-c", "core.safecrlf=false", "-c", "color.ui=never", "-c", "diff.algorithm=myers",
		"-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false", "-c", "diff.renames=false",
		"-c", "commit.gpgSign=false"}
	return g.run("git", append(base, args...)...)
}

func (g *gitRepo) write(path, content string) { g.t.Helper(); g.Write(path, content) }

// mv renames a tracked file, creating the target's directory.
func (g *gitRepo) mv(from, to string) {
	g.t.Helper()
	if err := os.MkdirAll(filepath.Join(g.Dir, filepath.Dir(filepath.FromSlash(to))), 0o755); err != nil {
		g.t.Fatal(err)
	}
	g.git("mv", from, to)
}

func (g *gitRepo) commit(msg string) {
	g.t.Helper()
	g.git("add", "-A")
	g.git("commit", "-q", "--allow-empty", "-m", msg)
}

// numbered returns n lines "prefix i" (1-based), each ending in "\n".
func numbered(prefix string, from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

const goSource = `package auth

import "errors"

// ErrExpired is returned for an expired token.
var ErrExpired = errors.New("token expired")

// Check validates a token.
func Check(token string, now int64) error {
	if token == "" {
		return errors.New("empty token")
	}
	return nil
}
`

// diffCases build one repository each and return the diff to store as
// testdata/<name>.diff.
var diffCases = map[string]func(g *gitRepo) string{
	"added": func(g *gitRepo) string {
		g.write("README.md", "# demo\n")
		g.commit("base")
		g.write("internal/auth/token.go", goSource)
		g.commit("add token check")
		return g.git("diff", "HEAD~1", "HEAD")
	},
	"deleted": func(g *gitRepo) string {
		g.write("legacy/old.py", "def old():\n    return 1\n")
		g.write("main.py", "print('hi')\n")
		g.commit("base")
		g.git("rm", "-q", "legacy/old.py")
		g.commit("remove legacy")
		return g.git("diff", "HEAD~1", "HEAD")
	},
	"renamed": func(g *gitRepo) string {
		g.write("util/strings.go", goSource)
		g.commit("base")
		g.mv("util/strings.go", "text/strings.go")
		g.commit("move")
		return g.git("diff", "-M", "HEAD~1", "HEAD")
	},
	"renamed_modified": func(g *gitRepo) string {
		g.write("pkg/server.go", goSource)
		g.commit("base")
		g.mv("pkg/server.go", "pkg/http/server.go")
		g.write("pkg/http/server.go", strings.Replace(goSource, `"empty token"`, `"token is empty"`, 1))
		g.commit("move and edit")
		return g.git("diff", "-M", "HEAD~1", "HEAD")
	},
	"copied": func(g *gitRepo) string {
		g.write("config/base.go", goSource)
		g.write("config/other.go", numbered("// other", 1, 12))
		g.commit("base")
		g.write("config/prod.go", goSource)
		g.write("config/staging.go", strings.Replace(numbered("// other", 1, 12), "// other 6", "// staging 6", 1))
		g.commit("copy")
		return g.git("diff", "-C", "--find-copies-harder", "HEAD~1", "HEAD")
	},
	"mode_only": func(g *gitRepo) string {
		g.write("scripts/deploy.sh", "#!/bin/sh\necho deploy\n")
		g.write("scripts/build.sh", "#!/bin/sh\necho build\n")
		g.commit("base")
		g.run("chmod", "+x", "scripts/deploy.sh", "scripts/build.sh")
		g.write("scripts/build.sh", "#!/bin/sh\nset -eu\necho build\n")
		g.commit("executable")
		return g.git("diff", "HEAD~1", "HEAD")
	},
	"binary": func(g *gitRepo) string {
		g.write("assets/logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01")
		g.write("main.go", "package main\n")
		g.commit("base")
		g.write("assets/logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x02\x00")
		g.write("assets/icon.ico", "\x00\x00\x01\x00\x01\x00")
		g.write("main.go", "package main\n\nfunc main() {}\n")
		g.commit("new logo")
		return g.git("diff", "HEAD~1", "HEAD")
	},
	"binary_patch": func(g *gitRepo) string {
		g.write("assets/logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01")
		g.commit("base")
		g.write("assets/logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x02\x00")
		g.write("assets/icon.ico", "\x00\x00\x01\x00\x01\x00")
		g.commit("new logo")
		return g.git("diff", "--binary", "HEAD~1", "HEAD")
	},
	"no_newline": func(g *gitRepo) string {
		g.write("VERSION.go", "package version\n\nconst V = \"1.0\"")
		g.write("end.py", "x = 1\ny = 2")
		g.commit("base")
		g.write("VERSION.go", "package version\n\nconst V = \"1.1\"")
		g.write("end.py", "x = 1\ny = 3\n")
		g.commit("bump")
		return g.git("diff", "HEAD~1", "HEAD")
	},
	"quoted_path": func(g *gitRepo) string {
		g.write("dir with space/été.go", "package été\n\nconst A = 1\n")
		g.commit("base")
		g.write("dir with space/été.go", "package été\n\nconst A = 2\n")
		g.write("tab\tname.txt", "tab\n")
		g.commit("edit")
		return g.git("diff", "HEAD~1", "HEAD")
	},
	"crlf": func(g *gitRepo) string {
		g.write("win/config.cs", "class A {\r\n  int x = 1;\r\n  int y = 2;\r\n}\r\n")
		g.commit("base")
		g.write("win/config.cs", "class A {\r\n  int x = 1;\r\n  int y = 3;\r\n}\r\n")
		g.commit("edit")
		return g.git("diff", "HEAD~1", "HEAD")
	},
	"empty": func(g *gitRepo) string {
		g.write("a.go", "package a\n")
		g.commit("base")
		return g.git("diff", "HEAD")
	},
	"multi_hunk": func(g *gitRepo) string {
		g.write("service/orders.go", numbered("line", 1, 200))
		g.commit("base")
		text := numbered("line", 1, 200)
		for _, n := range []int{10, 40, 150} {
			text = strings.Replace(text, fmt.Sprintf("line %d\n", n), fmt.Sprintf("changed %d\n", n), 1)
		}
		g.write("service/orders.go", text)
		g.commit("edit")
		return g.git("diff", "HEAD~1", "HEAD")
	},
	"huge_hunk": func(g *gitRepo) string {
		g.write("README.md", "# demo\n")
		g.commit("base")
		g.write("data/table.go", numbered("\tvalue = append(value, \"some generated-looking row\") //", 1, 300))
		g.commit("big")
		return g.git("diff", "HEAD~1", "HEAD")
	},
	"filtered": func(g *gitRepo) string {
		g.write("main.go", "package main\n")
		g.commit("base")
		for path, content := range map[string]string{
			"go.sum":                             "example.com/x v1.0.0 h1:abc=\n",
			"web/package-lock.json":              "{\n  \"lockfileVersion\": 3\n}\n",
			"web/yarn.lock":                      "left-pad@1.3.0:\n  version \"1.3.0\"\n",
			"vendor/example.com/x/x.go":          "package x\n",
			"web/node_modules/left-pad/index.js": "module.exports = 1;\n",
			"web/dist/app.js":                    "console.log(1);\n",
			"web/app.min.js":                     "var a=1;\n",
			"web/app.js.map":                     "{\"version\":3}\n",
			"api/v1/api.pb.go":                   "package v1\n",
			"internal/color/color_string.go":     "// Code generated by \"stringer -type=Color\"; DO NOT EDIT.\n\npackage color\n",
			"gen/schema.py":                      "# @generated by schema-gen\nSCHEMA = {}\n",
			"main.go":                            "package main\n\nfunc main() {}\n",
		} {
			g.write(path, content)
		}
		g.commit("many")
		return g.git("diff", "HEAD~1", "HEAD")
	},
	"plain_diff_u": func(g *gitRepo) string {
		g.write("greet.py.orig", "def greet(name):\n    return 'hi ' + name\n")
		g.write("greet.py", "def greet(name):\n    return f'hello {name}'\n")
		return g.run("diff", "-u", "--label", "greet.py.orig", "--label", "greet.py", "greet.py.orig", "greet.py")
	},
	"format_patch": func(g *gitRepo) string {
		g.write("lib/session.rb", "def session\n  nil\nend\n")
		g.commit("base")
		g.write("lib/session.rb", "def session\n  @session ||= Session.new\nend\n")
		g.commit("memoize session\n\nKeeps one session per request.")
		return g.git("format-patch", "-1", "--stdout", "--no-signature")
	},
	"git_show": func(g *gitRepo) string {
		g.write("db/queries.sql", "SELECT id FROM users WHERE name = 'x';\n")
		g.commit("base")
		g.write("db/queries.sql", "SELECT id FROM users WHERE name = $1;\n")
		g.commit("use a bind parameter\n\n--- not a header\n+++ not a header either")
		return g.git("show", "HEAD")
	},
	"priority": func(g *gitRepo) string {
		g.write("README.md", "# demo\n")
		g.commit("base")
		g.write("billing/payment.go", "package billing\n\nfunc Charge() {}\n")
		g.write("cmd/app/main.go", "package main\n\nfunc main() {}\n")
		g.write("cmd/app/main_test.go", "package main\n\nimport \"testing\"\n\nfunc TestMain(t *testing.T) {}\n")
		g.write("web/src/button.spec.ts", "it('works', () => {})\n")
		g.write("docs/guide.md", "# Guide\n\nUse it.\n")
		g.write(".github/workflows/ci.yml", "on: push\njobs: {}\n")
		g.write("Dockerfile", "FROM scratch\n")
		g.write("db/migrations/001_init.sql", "CREATE TABLE t (id int);\n")
		g.commit("many kinds")
		return g.git("diff", "HEAD~1", "HEAD")
	},
}

// TestRegenerateDiffs rewrites testdata/*.diff with real git when -regen is
// set; otherwise it is skipped, so the suite never needs git.
func TestRegenerateDiffs(t *testing.T) {
	if !*regen {
		t.Skip("run with -regen to regenerate testdata/*.diff")
	}
	for name, build := range diffCases {
		g := newGitRepo(t)
		if err := os.WriteFile(filepath.Join("testdata", name+".diff"), []byte(build(g)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type goldenOutput struct {
	Error string       `json:"error,omitempty"`
	Files []goldenFile `json:"files"`
	Plan  *goldenPlan  `json:"plan,omitempty"`
}

type goldenFile struct {
	OldPath   string           `json:"old_path,omitempty"`
	NewPath   string           `json:"new_path,omitempty"`
	Status    string           `json:"status"`
	OldMode   string           `json:"old_mode,omitempty"`
	NewMode   string           `json:"new_mode,omitempty"`
	ModeOnly  bool             `json:"mode_only,omitempty"`
	Binary    bool             `json:"binary,omitempty"`
	Fragments []goldenFragment `json:"fragments,omitempty"`
}

type goldenFragment struct {
	Header string   `json:"header"`
	Lines  []string `json:"lines"`
}

type goldenPlan struct {
	Chunks  []goldenChunk `json:"chunks"`
	Ignored []Ignored     `json:"ignored"`
}

type goldenChunk struct {
	Path      string   `json:"path"`
	OldPath   string   `json:"old_path,omitempty"`
	Language  string   `json:"language,omitempty"`
	Class     string   `json:"class"`
	StartLine int      `json:"start_line"`
	EndLine   int      `json:"end_line"`
	Added     int      `json:"added"`
	Deleted   int      `json:"deleted"`
	Priority  int      `json:"priority"`
	Before    []string `json:"before,omitempty"`
	Lines     []string `json:"lines"`
	After     []string `json:"after,omitempty"`
}

// lineView renders a line as "<op> <old> <new> | <text>", with markers for
// CRLF and a missing newline.
func lineView(l Line) string {
	num := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	s := fmt.Sprintf("%s %4s %4s | %s", map[Op]string{Context: " ", Add: "+", Delete: "-"}[l.Op], num(l.OldLine), num(l.NewLine), l.Text)
	if l.CRLF {
		s += " [CRLF]"
	}
	if l.NoNewline {
		s += " [no newline]"
	}
	return s
}

func contextView(cls []ContextLine) []string {
	var out []string
	for _, cl := range cls {
		out = append(out, fmt.Sprintf("%4d | %s", cl.Line, cl.Text))
	}
	return out
}

func filesView(files []*File) []goldenFile {
	out := []goldenFile{}
	for _, f := range files {
		gf := goldenFile{OldPath: f.OldPath, NewPath: f.NewPath, Status: f.Status.String(), ModeOnly: f.ModeOnly, Binary: f.Binary}
		if f.OldMode != 0 {
			gf.OldMode = f.OldMode.String()
		}
		if f.NewMode != 0 {
			gf.NewMode = f.NewMode.String()
		}
		for _, fr := range f.Fragments {
			gfr := goldenFragment{Header: strings.TrimSpace(fmt.Sprintf("@@ -%d,%d +%d,%d @@ %s", fr.OldStart, fr.OldLines, fr.NewStart, fr.NewLines, fr.Section))}
			for _, l := range fr.Lines {
				gfr.Lines = append(gfr.Lines, lineView(l))
			}
			gf.Fragments = append(gf.Fragments, gfr)
		}
		out = append(out, gf)
	}
	return out
}

func planView(p *Plan) *goldenPlan {
	out := &goldenPlan{Chunks: []goldenChunk{}, Ignored: p.Ignored}
	for _, c := range p.Chunks {
		gc := goldenChunk{Path: c.Path, OldPath: c.OldPath, Language: c.Language, Class: c.Class.String(),
			StartLine: c.StartLine, EndLine: c.EndLine, Added: c.Added, Deleted: c.Deleted, Priority: c.Priority,
			Before: contextView(c.Before), After: contextView(c.After)}
		for _, l := range c.Lines {
			gc.Lines = append(gc.Lines, lineView(l))
		}
		out.Chunks = append(out.Chunks, gc)
	}
	return out
}

// goldenCases lists the cases of testdata/*.diff.
func goldenCases(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.diff"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 15 {
		t.Fatalf("found %d testdata/*.diff, want at least 15 (run go test ./hunks -regen -update)", len(paths))
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".diff"))
	}
	return names
}

// TestGolden parses each testdata/<case>.diff, prepares it with the default
// options, and compares both with testdata/<case>.golden.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, name := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in, err := os.ReadFile(filepath.Join("testdata", name+".diff"))
			if err != nil {
				t.Fatal(err)
			}
			var got goldenOutput
			files, err := Parse(bytes.NewReader(in))
			if err != nil {
				got.Error = err.Error()
			}
			got.Files = filesView(files)
			plan, err := Prepare(files, Options{})
			if err != nil {
				t.Fatalf("Prepare(%s) error: %v", name, err)
			}
			checkPlan(t, plan, files, Options{}.withDefaults())
			got.Plan = planView(plan)
			gotJSON, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			gotJSON = append(gotJSON, '\n')
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, gotJSON, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./hunks -update)", err)
			}
			if diff := cmp.Diff(string(want), string(gotJSON)); diff != "" {
				t.Errorf("Parse+Prepare(%s) mismatch (-want +got):\n%s", name, diff)
			}
		})
	}
}
