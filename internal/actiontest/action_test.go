package actiontest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// root is the repository root, from this package's directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// inputs are action.yml's inputs with their defaults, in the order the README
// lists them. The run step passes each (but version, which the install step
// consumes) to `warden action` as INPUT_<UPPER_SNAKE>: the contract with
// cmd/warden's readInputs.
var inputs = []struct{ name, def string }{
	{"config-path", "warden.toml"},
	{"github-token", "${{ github.token }}"},
	{"github-token-login", ""},
	{"fail-on", "high"},
	{"report-on", "medium"},
	{"max-findings", "50"},
	{"incomplete-conclusion", "failure"},
	{"fail-on-incomplete", "false"},
	{"request-changes", "false"},
	{"check-name", "warden"},
	{"skills", ""},
	{"skip-drafts", "true"},
	{"skip-bots", "true"},
	{"pr-number", ""},
	{"budget", ""},
	{"trusted-authors-only", "false"},
	{"mode", "full"},
	{"report-path", ""},
	{"results-cache", "true"},
	{"results-cache-secret", ""},
	{"state-secret", ""},
	{"command-associations", "OWNER,MEMBER,COLLABORATOR"},
	{"allow-self-accept", "false"},
	{"command-workflow", ".github/workflows/warden-commands.yml"},
	{"command-workflow-name", "warden commands"},
	{"version", ""},
	{"verify-provenance", "true"},
}

// installOnly are the inputs the install step (version, verify-provenance)
// and action.yml's results-cache mapping (results-cache) consume;
// `warden action` does not see them.
var installOnly = []string{"version", "verify-provenance", "results-cache"}

var outputs = []string{"outcome", "findings-count", "high-count", "planned", "reviewed", "cached",
	"files-in-scope", "files-reviewed", "lines-in-scope", "lines-reviewed", "report-file"}

type step struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	Uses  string            `yaml:"uses"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
	Env   map[string]string `yaml:"env"`
	With  map[string]string `yaml:"with"`
	If    string            `yaml:"if"`
}

type actionFile struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Author      string `yaml:"author"`
	Branding    struct {
		Icon  string `yaml:"icon"`
		Color string `yaml:"color"`
	} `yaml:"branding"`
	Inputs map[string]struct {
		Description string  `yaml:"description"`
		Default     *string `yaml:"default"`
		Required    bool    `yaml:"required"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []step `yaml:"steps"`
	} `yaml:"runs"`
}

func readAction(t *testing.T) *actionFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root(t), "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return &a
}

func stepByID(t *testing.T, a *actionFile, id string) step {
	t.Helper()
	for _, s := range a.Runs.Steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("action.yml has no step with id %q", id)
	return step{}
}

// envName is the INPUT_ variable of a kebab-case input name.
func envName(input string) string {
	return "INPUT_" + strings.ToUpper(strings.ReplaceAll(input, "-", "_"))
}

func TestActionMetadata(t *testing.T) {
	t.Parallel()
	a := readAction(t)
	if a.Name != "warden" || a.Description == "" {
		t.Errorf("name %q, description %q: want name warden and a description", a.Name, a.Description)
	}
	if a.Branding.Icon == "" || a.Branding.Color == "" {
		t.Errorf("branding %+v: want an icon and a color", a.Branding)
	}
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using = %q, want composite", a.Runs.Using)
	}
	for _, s := range a.Runs.Steps {
		if s.Run != "" && s.Shell != "bash" {
			t.Errorf("step %q: shell %q, want bash (the same on Linux, macOS and Windows runners)", s.ID, s.Shell)
		}
		// Expressions expanded into a script are a script injection:
		// values reach run: only through env:.
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %q: run: contains an expression; pass it through env:", s.ID)
		}
	}
}

func TestActionInputsReachWarden(t *testing.T) {
	t.Parallel()
	a := readAction(t)
	var names []string
	for _, in := range inputs {
		names = append(names, in.name)
		got, ok := a.Inputs[in.name]
		switch {
		case !ok:
			t.Errorf("input %s: missing from action.yml", in.name)
			continue
		case got.Description == "":
			t.Errorf("input %s: no description", in.name)
		case got.Default == nil:
			t.Errorf("input %s: no default (want %q)", in.name, in.def)
		case *got.Default != in.def:
			t.Errorf("input %s: default %q, want %q", in.name, *got.Default, in.def)
		}
		if got.Required {
			t.Errorf("input %s: required; every input has a default", in.name)
		}
	}
	for name := range a.Inputs {
		if !slices.Contains(names, name) {
			t.Errorf("input %s: not in this test's contract; add it here and to cmd/warden's readInputs", name)
		}
	}

	run := stepByID(t, a, "run")
	for _, in := range inputs {
		want := "${{ inputs." + in.name + " }}"
		got, ok := run.Env[envName(in.name)]
		if slices.Contains(installOnly, in.name) {
			if ok {
				t.Errorf("run step env %s: the install step consumes %s", envName(in.name), in.name)
			}
			continue
		}
		if got != want {
			t.Errorf("run step env %s = %q, want %q", envName(in.name), got, want)
		}
	}
	for k := range run.Env {
		if strings.HasPrefix(k, "INPUT_") && !slices.ContainsFunc(inputs, func(in struct{ name, def string }) bool { return envName(in.name) == k }) {
			t.Errorf("run step env %s matches no input", k)
		}
	}
	if run.Env["WARDEN_BIN"] != "${{ steps.install.outputs.path }}" {
		t.Errorf("run step env WARDEN_BIN = %q, want the install step's path output", run.Env["WARDEN_BIN"])
	}
	// exec, so that the runner's SIGINT/SIGTERM on cancellation reaches
	// warden, which completes the check run as cancelled.
	if strings.TrimSpace(run.Run) != `exec "$WARDEN_BIN" action` {
		t.Errorf("run step runs %q, want exec \"$WARDEN_BIN\" action", run.Run)
	}
}

func TestActionInstallStep(t *testing.T) {
	t.Parallel()
	a := readAction(t)
	if a.Runs.Steps[0].ID != "install" {
		t.Fatalf("first step is %q, want install", a.Runs.Steps[0].ID)
	}
	install := stepByID(t, a, "install")
	if got := strings.TrimSpace(install.Run); got != `bash "$GITHUB_ACTION_PATH/scripts/install.sh"` {
		t.Errorf("install step runs %q", got)
	}
	want := map[string]string{
		"WARDEN_ACTION_REF":        "${{ github.action_ref }}",
		"WARDEN_ACTION_REPOSITORY": "${{ github.action_repository }}",
		"WARDEN_VERSION":           "${{ inputs.version }}",
		"WARDEN_VERIFY_PROVENANCE": "${{ inputs.verify-provenance }}",
	}
	for k, v := range want {
		if install.Env[k] != v {
			t.Errorf("install step env %s = %q, want %q", k, install.Env[k], v)
		}
	}
	// The installer needs no token: releases are downloaded anonymously.
	for k, v := range install.Env {
		if strings.Contains(v, "token") || strings.Contains(v, "secrets.") {
			t.Errorf("install step env %s = %q: the installer must not see a token", k, v)
		}
	}
}

func TestActionOutputsMapped(t *testing.T) {
	t.Parallel()
	a := readAction(t)
	for _, name := range outputs {
		got, ok := a.Outputs[name]
		if !ok {
			t.Errorf("output %s: missing", name)
			continue
		}
		if want := "${{ steps.run.outputs." + name + " }}"; got.Value != want {
			t.Errorf("output %s = %q, want %q", name, got.Value, want)
		}
		if got.Description == "" {
			t.Errorf("output %s: no description", name)
		}
	}
	for name := range a.Outputs {
		if !slices.Contains(outputs, name) {
			t.Errorf("output %s: not in this test's list", name)
		}
	}
}

// usesLine matches a uses: line of a workflow or action.
var usesLine = regexp.MustCompile(`^\s*(?:-\s+)?uses:\s*(\S+)\s*(#.*)?$`)

// pinned matches a third-party action pinned by full commit SHA.
var pinned = regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)

func TestActionsPinnedBySHA(t *testing.T) {
	t.Parallel()
	dir := root(t)
	files, _ := filepath.Glob(filepath.Join(dir, ".github", "workflows", "*.yml"))
	files = append(files, filepath.Join(dir, "action.yml"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, f)
		for i, line := range strings.Split(string(data), "\n") {
			m := usesLine.FindStringSubmatch(line)
			if m == nil || strings.HasPrefix(m[1], "./") || m[1] == "." {
				continue
			}
			if !pinned.MatchString(m[1]) {
				t.Errorf("%s:%d: %s is not pinned by a full commit SHA", rel, i+1, m[1])
			} else if !strings.HasPrefix(m[2], "# v") {
				t.Errorf("%s:%d: %s: add a comment naming the version (# vX.Y.Z)", rel, i+1, m[1])
			}
		}
	}
}

// TestShellcheck runs shellcheck on the scripts and on action.yml's run:
// steps. It is skipped without shellcheck, except in CI (CI=true), where a
// missing linter must not pass as a clean script.
func TestShellcheck(t *testing.T) {
	t.Parallel()
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("shellcheck is not installed, and CI=true: install it (apt-get install -y shellcheck)")
		}
		t.Skip("shellcheck is not installed")
	}
	dir := root(t)
	scripts, _ := filepath.Glob(filepath.Join(dir, "scripts", "*.sh"))
	if len(scripts) == 0 {
		t.Fatal("no scripts/*.sh")
	}
	tmp := t.TempDir()
	for _, s := range readAction(t).Runs.Steps {
		if s.Run == "" {
			continue
		}
		f := filepath.Join(tmp, "action.yml-step-"+s.ID+".sh")
		// The runner runs shell: bash as bash --noprofile --norc -eo pipefail {0}.
		if err := os.WriteFile(f, []byte("#!/usr/bin/env bash\nset -eo pipefail\n"+s.Run+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, f)
	}
	cmd := exec.Command(sc, append([]string{"--severity=style", "--external-sources"}, scripts...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}

// TestActionSavesResultsAsArtifact: the results cache crosses runs as a
// workflow artifact, which runs on any ref read back through the REST
// API, not as an Actions cache, which GitHub scopes by ref (a
// pull_request run's cache is invisible to the issue_comment run that
// resumes it). warden names the directory and the artifact; the upload
// runs whatever happened to the review (always()), keeps it 7 days, and
// replaces a re-run's.
func TestActionSavesResultsAsArtifact(t *testing.T) {
	t.Parallel()
	a := readAction(t)
	run := stepByID(t, a, "run")
	if got, want := run.Env["WARDEN_RESULTS_CACHE_DIR"], "${{ inputs.results-cache == 'true' && format('{0}/warden-results', runner.temp) || '' }}"; got != want {
		t.Errorf("run step env WARDEN_RESULTS_CACHE_DIR = %q, want %q", got, want)
	}
	var upload *step
	for i, s := range a.Runs.Steps {
		if strings.HasPrefix(s.Uses, "actions/cache") {
			t.Errorf("step %q uses %s: GitHub scopes the Actions cache by ref, so a comment's run cannot restore a pull request run's entries", s.Name, s.Uses)
		}
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && strings.Contains(s.With["name"], "results-artifact") {
			upload = &a.Runs.Steps[i]
		}
	}
	if upload == nil {
		t.Fatal("no actions/upload-artifact step saves the results")
	}
	want := map[string]string{
		"name": "${{ steps.run.outputs.results-artifact }}", "path": "${{ steps.run.outputs.results-path }}",
		"retention-days": "7", "overwrite": "true", "if-no-files-found": "ignore",
	}
	if diff := cmp.Diff(want, upload.With); diff != "" {
		t.Errorf("upload step with: (-want +got):\n%s", diff)
	}
	if upload.If != "always() && steps.run.outputs.results-artifact != ''" {
		t.Errorf("upload step if: %q, want it to run whatever the review did, when warden names an artifact", upload.If)
	}
}

// TestActionRecordsForkCommands: a review-thread command on a fork's pull
// request is recorded as an artifact (warden names it) for the follow-up
// workflow; the record must upload or the step fails, since the
// commenter's answer depends on it.
func TestActionRecordsForkCommands(t *testing.T) {
	t.Parallel()
	a := readAction(t)
	i := slices.IndexFunc(a.Runs.Steps, func(s step) bool {
		return strings.HasPrefix(s.Uses, "actions/upload-artifact@") && s.With["name"] == "${{ steps.run.outputs.command-artifact }}"
	})
	if i < 0 {
		t.Fatal("no upload step for the command record (output command-artifact)")
	}
	s := a.Runs.Steps[i]
	want := map[string]string{"name": "${{ steps.run.outputs.command-artifact }}", "path": "${{ steps.run.outputs.command-path }}", "retention-days": "1", "if-no-files-found": "error"}
	if diff := cmp.Diff(want, s.With); diff != "" {
		t.Errorf("command record step with: (-want +got):\n%s", diff)
	}
	if s.If != "always() && steps.run.outputs.command-artifact != ''" {
		t.Errorf("command record step if: %q", s.If)
	}
}
