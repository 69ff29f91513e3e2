package main

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/warden/cli"
	"github.com/org/warden/internal/fakeopenai"
	"github.com/org/warden/internal/testgit"
)

// ollamaURL is the model address the help's examples show (a local
// Ollama's); the test points it at its loopback model, the one change it
// makes to an example.
const ollamaURL = "http://localhost:11434"

// TestHelpExamplesRunAsShown: every example of every command's help, and
// of the command list, is run as shown, by bash, with warden on PATH, in a
// temporary git repository laid out as the example expects (a branch off
// main three commits deep with an uncommitted change, a skill, an eval
// corpus; for the Action, a runner's environment and a pull request), and
// exits 0. A help's examples run in order, as one shell session: an export
// serves the lines after it, a file one line writes is there for the next.
// The environment is a new user's: no WARDEN_*, OPENAI_*, OTEL_* or
// GITHUB_* variable but those the examples (or, for the Action, the
// runner) set.
func TestHelpExamplesRunAsShown(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: the examples are shell lines")
	}
	model := httptest.NewServer(&fakeopenai.Script{}) // {"findings":[]} to everything
	t.Cleanup(model.Close)
	bin := t.TempDir()
	if err := os.Symlink(os.Args[0], filepath.Join(bin, "warden")); err != nil {
		t.Fatal(err)
	}
	pages := []string{""}
	for _, c := range cli.Commands {
		pages = append(pages, c.Name)
	}
	for _, page := range pages {
		t.Run("help "+page, func(t *testing.T) {
			t.Parallel()
			help := runWarden(t, t.TempDir(), nil, "", strings.Fields("help "+page)...)
			examples := helpExamples(help.stdout)
			if len(examples) == 0 {
				t.Fatalf("warden help %s shows no example:\n%s", page, help.stdout)
			}
			dir, env := exampleFixture(t, page)
			env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), asWarden+"=1")
			var exports []string
			for _, line := range examples {
				if strings.Contains(line, "| jq ") {
					if _, err := exec.LookPath("jq"); err != nil {
						t.Logf("not run, jq is not installed: %s", line)
						continue
					}
				}
				shown := strings.ReplaceAll(line, ollamaURL, model.URL)
				script := "set -euo pipefail\n" + strings.Join(exports, "\n") + "\n" + shown + "\n"
				cmd := exec.Command(bash, "-c", script)
				cmd.Dir, cmd.Env = dir, env
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Errorf("warden help %s: the example\n  %s\ndoes not run as shown: %v\n%s", page, line, err, out)
				}
				if strings.HasPrefix(line, "export ") {
					exports = append(exports, shown)
				}
			}
		})
	}
}

// helpExamples are the lines of a help's Examples section.
func helpExamples(help string) []string {
	_, rest, ok := strings.Cut(help, "\nExamples:\n")
	if !ok {
		return nil
	}
	var lines []string
	for l := range strings.Lines(rest) {
		if !strings.HasPrefix(l, "  ") {
			break
		}
		lines = append(lines, strings.TrimSpace(l))
	}
	return lines
}

// exampleFixture is the directory a help's examples run in, and the
// environment: a new user's, or for the Action a runner's with a pull
// request to review.
func exampleFixture(t *testing.T, page string) (dir string, env []string) {
	t.Helper()
	if page == "action" {
		h := newActionHarness(t, "low")
		env = newUserEnv(h.dir)
		for k, v := range h.env {
			env = append(env, k+"="+v)
		}
		return h.repo.Dir, env
	}
	r := testgit.New(t)
	r.Write("app/app.go", "package app\n\n"+numbered(20, "// app"))
	r.Write(".warden/skills/house-rules/SKILL.md", "---\nname: house-rules\ndescription: Our house rules.\n---\nReport what breaks our rules.\n")
	r.Commit("start")
	r.Git("checkout", "-q", "-b", "feature")
	for i := range 3 {
		r.Write("app/app.go", "package app\n\n"+numbered(21+i, "// app"))
		r.Commit("feature")
	}
	r.Write("app/app.go", "package app\n\n"+numbered(30, "// app")) // uncommitted
	if page == "eval" {
		if err := os.CopyFS(filepath.Join(r.Dir, "eval", "cases"), os.DirFS(filepath.Join(shippedEval, "corpus"))); err != nil {
			t.Fatal(err)
		}
		// A fault schedule that plays at once in real time: the primary's
		// key revoked, the fallback answering.
		r.Write("eval/faults/primary-key-revoked.toml", "[[routes]]\nname = \"primary\"\nfailover_on_auth = true\n[[routes.faults]]\nstatus = 401\n"+
			"[[routes]]\nname = \"fallback\"\n[[routes.faults]]\ndelay = \"0s\"\n")
	}
	return r.Dir, newUserEnv(t.TempDir())
}

// newUserEnv is the environment of a user who has set nothing for warden:
// the process's, without its warden, model, telemetry, GitHub and git
// variables, with git's configuration hermetic and HOME in home.
func newUserEnv(home string) []string {
	var env []string
	for _, kv := range testgit.Env(home) {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH", k == "CI", k == "XDG_CACHE_HOME", k == "XDG_CONFIG_HOME", k == asWarden:
		case strings.HasPrefix(k, "WARDEN_"), strings.HasPrefix(k, "OPENAI_"), strings.HasPrefix(k, "OPENROUTER_"),
			strings.HasPrefix(k, "OTEL_"), strings.HasPrefix(k, "GITHUB_"), strings.HasPrefix(k, "RUNNER_"), strings.HasPrefix(k, "INPUT_"):
		default:
			env = append(env, kv)
		}
	}
	return env
}
