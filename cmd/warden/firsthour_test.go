package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/org/warden/cli"
)

// A user's first hour (issue 13): configuration found from a subdirectory,
// bad input of every kind as one line and exit 2, help on stdout.

// TestConfigFoundFromSubdirectory: warden.toml and .warden/skills at the
// repository's top level apply whatever the working directory, -C
// included, and -v says which file was used.
func TestConfigFoundFromSubdirectory(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.write("warden.toml", "[filters]\nignore = [\"app/generated_by_hand.go\"]\n")
	r.write(".warden/skills/house-rules/SKILL.md", "---\nname: house-rules\ndescription: Our rules.\n---\nCheck our rules.\n")
	r.write("app/server.go", "package app\n\n"+numbered(10, "// server"))
	r.write("app/generated_by_hand.go", "package app\n\n"+numbered(10, "// gen"))
	r.write("docs/guide.md", "# Guide\n")
	r.git("add", "-A")
	r.git("commit", "-qm", "init")
	r.write("app/server.go", "package app\n\n"+numbered(12, "// server"))
	r.write("app/generated_by_hand.go", "package app\n\n"+numbered(12, "// gen"))
	r.write("app/new.go", "package app\n\n// An untracked file, listed by git relative to where it runs.\n")
	for _, sub := range []string{".", "docs", "app"} {
		t.Run(sub, func(t *testing.T) {
			t.Parallel()
			res := runWarden(t, filepath.Join(r.Dir, sub), nil, "", "review", "--dry-run", "--format", "json", "-v", "--skill", "house-rules")
			if res.code != exitOK {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			rep := decodeReport(t, res.stdout)
			if got := ignoredReasons(rep)["app/generated_by_hand.go"]; got != "ignored:app/generated_by_hand.go" {
				t.Errorf("from %s: app/generated_by_hand.go ignored as %q, want the top-level warden.toml's filter", sub, got)
			}
			if paths := plannedPaths(rep); strings.Join(paths, " ") != "app/new.go app/server.go" || rep.Items[0].Skill != "house-rules" {
				t.Errorf("from %s: items = %+v, want house-rules (the top level's .warden/skills) on app/new.go and app/server.go", sub, rep.Items)
			}
			want := "file=" + filepath.Join(r.Dir, "warden.toml")
			if !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "source=.warden/skills/house-rules/SKILL.md") {
				t.Errorf("from %s: -v does not say which files it used (%s); stderr:\n%s", sub, want, res.stderr)
			}
		})
	}
}

// TestSkillProblemElsewhereDoesNotBlock: a broken SKILL.md is skipped with
// a warning naming it, never fatal to the review (issue 23), unless it is
// asked for by name.
func TestSkillProblemElsewhereDoesNotBlock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	for p, body := range map[string]string{
		".warden/skills/good/SKILL.md":   "---\nname: good\ndescription: Good.\n---\nReview.\n",
		".warden/skills/broken/SKILL.md": "no frontmatter here\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const warning = "warning: .warden/skills/broken/SKILL.md:1: skill skipped: no YAML frontmatter"
	for _, args := range [][]string{{"--skill", "good"}, nil} {
		res := runWarden(t, dir, nil, "", append([]string{"review", "--diff", diff, "--dry-run", "--format", "json"}, args...)...)
		if res.code != exitOK || !strings.Contains(res.stderr, warning) {
			t.Errorf("%q with a broken other skill: exit %d, stderr %q; want 0 and a warning naming the broken file", args, res.code, res.stderr)
		}
	}
	res := runWarden(t, dir, nil, "", "review", "--diff", diff, "--dry-run", "--skill", "broken")
	if res.code != exitUsage || !strings.Contains(res.stderr, `skill "broken" cannot run: .warden/skills/broken/SKILL.md:1: no YAML frontmatter`) {
		t.Errorf("--skill broken: exit %d, stderr %q; want 2 naming the file", res.code, res.stderr)
	}
	res = runWarden(t, dir, nil, "", "skills", "validate")
	if res.code != exitUsage || strings.Contains(res.stderr, "CONDUCT") {
		t.Errorf("skills validate: exit %d, stderr %q", res.code, res.stderr)
	}
}

// TestSkillsValidateAtRepositoryRoot: a repository without skill
// directories has no broken skills, however many Markdown files it has.
func TestSkillsValidateAtRepositoryRoot(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.write("CONDUCT.md", "# Code of conduct\n")
	r.write("SECURITY.md", "# Security\n")
	r.write("sub/x.go", "package sub\n")
	res := runWarden(t, filepath.Join(r.Dir, "sub"), nil, "", "skills", "validate")
	if strings.Contains(res.stderr, "CONDUCT.md") || strings.Contains(res.stderr, "SECURITY.md") {
		t.Errorf("skills validate at a repository root called its docs broken skills:\n%s", res.stderr)
	}
	if res.code != exitUsage || !strings.Contains(res.stderr, "no skill found in this repository") {
		t.Errorf("skills validate with no skills: exit %d, stderr %q; want 2 and \"no skill found\"", res.code, res.stderr)
	}
}

// crlf is a diff whose every line ends in "\r\n", as a Windows tool saves it.
const crlf = "diff --git a/go.sum b/go.sum\r\nindex 1111111..2222222 100644\r\n--- a/go.sum\r\n+++ b/go.sum\r\n" +
	"@@ -1 +1 @@\r\n-a v1 h1:x\r\n+a v2 h1:y\r\n" +
	"diff --git a/main.go b/main.go\r\nindex 1111111..2222222 100644\r\n--- a/main.go\r\n+++ b/main.go\r\n" +
	"@@ -1,2 +1,2 @@\r\n package main\r\n-var x = 1\r\n+var x = 2\r\n"

func TestCRLFDiff(t *testing.T) {
	t.Parallel()
	res := runWarden(t, t.TempDir(), nil, crlf, "review", "--diff", "-", "--dry-run", "--format", "json")
	if res.code != exitOK {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	rep := decodeReport(t, res.stdout)
	if got := ignoredReasons(rep); got["go.sum"] != "lockfile" || len(got) != 1 {
		t.Errorf("CRLF diff: ignored = %q, want go.sum as a lockfile (no \\r in its path)", got)
	}
	if paths := plannedPaths(rep); len(paths) != 1 || paths[0] != "main.go" {
		t.Errorf("CRLF diff: planned paths = %q, want [main.go]", paths)
	}
}

func TestEmptyDiff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.diff")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, stdin string
		args        []string
	}{
		{"empty stdin", "", []string{"--diff", "-"}},
		{"blank stdin", " \n\r\n\t\n", []string{"--diff", "-"}},
		{"empty file", "", []string{"--diff", empty}},
	} {
		res := runWarden(t, dir, nil, tt.stdin, append([]string{"review"}, tt.args...)...)
		if res.code != exitUsage || res.stdout != "" || strings.Count(res.stderr, "\n") != 1 ||
			!strings.Contains(res.stderr, "empty input") || !strings.Contains(res.stderr, "--allow-empty") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line naming the empty input and --allow-empty", tt.name, res.code, res.stdout, res.stderr)
		}
		res = runWarden(t, dir, nil, tt.stdin, append([]string{"review", "--allow-empty", "--dry-run", "--format", "json"}, tt.args...)...)
		if res.code != exitOK || decodeReport(t, res.stdout).Summary.Planned != 0 {
			t.Errorf("%s with --allow-empty: exit %d, stderr %q; want 0 and nothing planned", tt.name, res.code, res.stderr)
		}
	}
}

// TestBadInputOneLine: every kind of bad input is one line on stderr that
// names the input and the problem, exit 2, and nothing on stdout (no
// report that could pass for a clean review).
func TestBadInputOneLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	config := func(name, content string) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	huge := filepath.Join(t.TempDir(), "huge.diff")
	if f, err := os.Create(huge); err != nil {
		t.Fatal(err)
	} else if err := f.Truncate(600 << 20); err != nil { // sparse: 600 MB on paper, nothing on disk
		t.Fatal(err)
	} else {
		f.Close()
	}
	empty := newGitRepo(t)
	repo := newGitRepo(t)
	repo.write("a.go", "package a\n")
	repo.git("add", "-A")
	repo.git("commit", "-qm", "init")
	tests := []struct {
		name    string
		dir     string
		stdin   string
		args    []string
		mention []string
	}{
		{"empty stdin", dir, "", []string{"review", "--diff", "-"}, []string{"standard input", "empty"}},
		{"text that is not a diff", dir, "hello\nworld\n", []string{"review", "--diff", "-"}, []string{"standard input", "not a unified diff"}},
		{"a directory as --diff", dir, "", []string{"review", "--diff", dir}, []string{dir, "directory"}},
		{"a 600 MB diff", dir, "", []string{"review", "--diff", huge}, []string{"huge.diff", "600 MiB", "cap"}},
		{"0s budget", dir, "", []string{"review", "--diff", diff, "--config", config("w.toml", "[review]\nbudget = \"0s\"\n")}, []string{"w.toml:2", "review.budget", "0s"}},
		{"max_concurrency 0", dir, "", []string{"review", "--diff", diff, "--config", config("w.toml", "[review]\n\nmax_concurrency = 0\n")}, []string{"w.toml:3", "review.max_concurrency"}},
		{"route max_concurrency 0", dir, "", []string{"review", "--diff", diff, "--config", config("w.toml", "[[routes]]\nname = \"a\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\nmax_concurrency = 0\n")}, []string{"w.toml:1", "routes[0].max_concurrency"}},
		{"route 0s request timeout", dir, "", []string{"review", "--diff", diff, "--config", config("w.toml", "[[routes]]\nname = \"a\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\nrequest_timeout = \"0s\"\n")}, []string{"w.toml:1", "routes[0].request_timeout"}},
		{"bad glob", dir, "", []string{"review", "--diff", diff, "--config", config("w.toml", "[filters]\nmax_files = 10\nignore = [\"a[\"]\n")}, []string{"w.toml:3", "filters.ignore", `"a["`}},
		{"report_on above fail_on", dir, "", []string{"review", "--diff", diff, "--config", config("w.toml", "[review]\nfail_on = \"high\"\nreport_on = \"critical\"\n")}, []string{"w.toml:3", "report_on", "fail_on"}},
		{"report_on above --fail-on", dir, "", []string{"review", "--diff", diff, "--fail-on", "low", "--config", config("w.toml", "[review]\nreport_on = \"medium\"\n")}, []string{"w.toml:2", "report_on"}},
		{"empty repository", empty.Dir, "", []string{"review"}, []string{"no commit yet"}},
		{"not a git repository", t.TempDir(), "", []string{"review"}, []string{"not inside a git repository", "--diff"}},
		{"unknown --base", repo.Dir, "", []string{"review", "--base", "no-such-branch"}, []string{"--base no-such-branch"}},
		{"-C a missing directory", filepath.Join(dir, "nope"), "", []string{"review"}, []string{"-C", "nope", "not a directory"}},
		{"unknown severity in warden.toml", dir, "", []string{"review", "--diff", diff, "--config", config("w.toml", "[review]\nfail_on = \"urgent\"\n")}, []string{"w.toml:2", "urgent"}},
		{"bad flag value", dir, "", []string{"review", "--format", "pdf"}, []string{"review", "pdf", "Run 'warden help review'"}},
		{"unknown flag", dir, "", []string{"review", "--frobnicate"}, []string{"review", "frobnicate", "Run 'warden help review'"}},
		{"unknown command", dir, "", []string{"reveiw"}, []string{"reveiw", "Run 'warden help'"}},
		{"skills without a subcommand", dir, "", []string{"skills"}, []string{"skills", "list or validate", "Run 'warden help skills'"}},
		{"help for an unknown command", dir, "", []string{"help", "nope"}, []string{"nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := runWarden(t, tt.dir, nil, tt.stdin, tt.args...)
			if res.code != exitUsage {
				t.Errorf("exit = %d, want %d; stderr:\n%s", res.code, exitUsage, res.stderr)
			}
			if n := strings.Count(res.stderr, "\n"); n != 1 || !strings.HasPrefix(res.stderr, "warden: ") {
				t.Errorf("stderr = %q, want exactly one line starting \"warden: \"", res.stderr)
			}
			for _, m := range tt.mention {
				if !strings.Contains(res.stderr, m) {
					t.Errorf("error %q does not mention %q", res.stderr, m)
				}
			}
			if res.stdout != "" {
				t.Errorf("stdout = %q, want nothing on an input error", res.stdout)
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	list := regexp.MustCompile(`(?m)^  review +\S.*\n  probe +\S.*\n  eval +\S.*\n  skills +\S.*\n  action +\S.*\n  version +\S.*\n  help +\S`)
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"-help"}} {
		res := runWarden(t, dir, nil, "", args...)
		if res.code != exitOK || res.stderr != "" || !list.MatchString(res.stdout) {
			t.Errorf("warden %v: exit %d, stderr %q, stdout:\n%s\nwant the command list on stdout, exit 0", args, res.code, res.stderr, res.stdout)
		}
	}
	for _, args := range [][]string{{"--version"}, {"version"}, {"-version"}} {
		res := runWarden(t, dir, nil, "", args...)
		if res.code != exitOK || res.stdout != wardenBuild().String()+"\n" {
			t.Errorf("warden %v: exit %d, stdout %q, stderr %q; want the version", args, res.code, res.stdout, res.stderr)
		}
	}
	var stdout, stderr strings.Builder
	if code := run(t.Context(), []string{"-C"}, strings.NewReader(""), &stdout, &stderr, func(string) string { return "" }); code != exitUsage ||
		stderr.String() != "warden: -C needs a directory: warden -C DIR COMMAND. Run 'warden help' for usage\n" {
		t.Errorf("warden -C: exit %d, stderr %q", code, stderr.String())
	}
	for _, c := range cli.Commands {
		for _, args := range [][]string{{"help", c.Name}, {c.Name, "-h"}, {c.Name, "--help"}} {
			res := runWarden(t, dir, nil, "", args...)
			if res.code != exitOK || res.stderr != "" || !strings.HasPrefix(res.stdout, "warden "+c.Name+": "+c.Summary+"\n") ||
				!strings.Contains(res.stdout, "\nUsage:\n  warden "+c.Name) || !strings.Contains(res.stdout, "\nExamples:\n  ") {
				t.Errorf("warden %v: exit %d, stderr %q, stdout:\n%s\nwant the summary, usage and examples on stdout", args, res.code, res.stderr, res.stdout)
			}
		}
	}
	res := runWarden(t, dir, nil, "", "help", "review")
	for _, want := range []string{"Flags:", "-fail-on SEVERITY", "(default: review.fail_on in warden.toml, else high)", "-format FORMAT", "text (the default)", "-allow-empty"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("warden help review does not say %q:\n%s", want, res.stdout)
		}
	}
}

// TestVerboseLogsAttempts: -v logs one line per model call with its route,
// model, kind, deadline, duration, class and decision.
func TestVerboseLogsAttempts(t *testing.T) {
	t.Parallel()
	m := newFakeModel(t, "low")
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	res := runWarden(t, dir, m.env("sk-test"), "", "review", "--diff", diff, "--skill", "code-review", "-v", "--format", "json")
	if res.code != exitOK {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	line := regexp.MustCompile(`(?m)^time=\S+ level=INFO msg=attempt route=env model=test-model attempt=1 kind=primary deadline=\S+ duration=\S+ class=success decision=done `)
	if got, want := len(line.FindAllString(res.stderr, -1)), m.calls(); got != want || want == 0 {
		t.Errorf("-v logged %d attempt lines for %d calls; stderr:\n%s", got, want, res.stderr)
	}
}

// TestProseModelNamed: a model that answers 200 with prose is named as
// ignoring the output contract in the headline of every format, with what
// it said; the outcome stays provider-unavailable (exit 3).
func TestProseModelNamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	noWaiting(t, dir)
	model := newFakeModel(t, "high")
	model.content = "I reviewed it and it looks fine!\n\nNo issues @octocat."
	for _, format := range []string{"text", "markdown"} {
		res := runWarden(t, dir, model.env("k"), "", "review", "--diff", diff, "--format", format, "--skill", "code-review")
		first, _, _ := strings.Cut(res.stdout, "\n")
		if res.code != exitIncomplete || !strings.Contains(strings.ToLower(first), "provider unavailable") ||
			!strings.Contains(first, "the model of route env ignores the output contract") {
			t.Errorf("%s: exit %d, headline %q; want 3 and the output contract named", format, res.code, first)
		}
		said := `it said: "I reviewed it and it looks fine! No issues @octocat."` // one line
		if format == "markdown" {
			said = `it said: "I reviewed it and it looks fine! No issues @&#8203;octocat."` // and no mention
		}
		if !strings.Contains(res.stdout, said) {
			t.Errorf("%s: the report does not show what the model said as %q:\n%s", format, said, res.stdout)
		}
	}
}

// TestNothingToReviewNeedsNoKey: with nothing to review (a clean checkout,
// an empty range) no model would be called, so no route or key is asked
// for: the review is complete, exit 0, without an empty route table. With
// a change, the missing route is still an error (exit 2).
func TestNothingToReviewNeedsNoKey(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.write("a.go", "package a\n")
	r.git("add", "-A")
	r.Commit("a")
	for _, args := range [][]string{{"review"}, {"review", "--base", "HEAD"}} {
		res := runWarden(t, r.Dir, nil, "", args...)
		if res.code != exitOK || !strings.HasPrefix(res.stdout, "warden: complete — nothing needed review") || strings.Contains(res.stdout, "Routes") {
			t.Errorf("warden %v on a clean checkout without a key: exit %d, stdout:\n%s\nstderr: %s", args, res.code, res.stdout, res.stderr)
		}
	}
	r.write("a.go", "package a\n\nfunc A() {}\n")
	if res := runWarden(t, r.Dir, nil, "", "review"); res.code != exitUsage || !strings.Contains(res.stderr, "no model route") {
		t.Errorf("warden review of a change without a key: exit %d, stderr %q; want 2 and the missing route named", res.code, res.stderr)
	}
}
