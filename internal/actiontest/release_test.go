package actiontest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func readYAML(t *testing.T, rel string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

// TestGoreleaserMatchesInstaller checks that the release publishes what
// scripts/install.sh downloads: warden_<version>_<os>_<arch>.tar.gz (.zip on
// Windows) for every platform it maps, and checksums.txt in SHA-256.
func TestGoreleaserMatchesInstaller(t *testing.T) {
	t.Parallel()
	var g struct {
		Version int `yaml:"version"`
		Builds  []struct {
			Main    string   `yaml:"main"`
			Binary  string   `yaml:"binary"`
			Env     []string `yaml:"env"`
			Goos    []string `yaml:"goos"`
			Goarch  []string `yaml:"goarch"`
			Flags   []string `yaml:"flags"`
			Ldflags []string `yaml:"ldflags"`
		} `yaml:"builds"`
		Archives []struct {
			NameTemplate    string   `yaml:"name_template"`
			Formats         []string `yaml:"formats"`
			FormatOverrides []struct {
				Goos    string   `yaml:"goos"`
				Formats []string `yaml:"formats"`
			} `yaml:"format_overrides"`
		} `yaml:"archives"`
		Checksum struct {
			NameTemplate string `yaml:"name_template"`
			Algorithm    string `yaml:"algorithm"`
		} `yaml:"checksum"`
	}
	readYAML(t, ".goreleaser.yaml", &g)
	if g.Version != 2 {
		t.Errorf("version %d, want 2", g.Version)
	}
	if len(g.Builds) != 1 || len(g.Archives) != 1 {
		t.Fatalf("%d builds, %d archives: want one of each", len(g.Builds), len(g.Archives))
	}
	b := g.Builds[0]
	if b.Main != "./cmd/warden" || b.Binary != "warden" {
		t.Errorf("build main %q binary %q", b.Main, b.Binary)
	}
	if !slices.Contains(b.Env, "CGO_ENABLED=0") || !slices.Contains(b.Flags, "-trimpath") {
		t.Errorf("build env %v flags %v: want CGO_ENABLED=0 and -trimpath", b.Env, b.Flags)
	}
	if !slices.ContainsFunc(b.Ldflags, func(s string) bool { return strings.Contains(s, "-X main.version={{.Version}}") }) {
		t.Errorf("ldflags %v do not set main.version", b.Ldflags)
	}
	for _, os := range []string{"linux", "darwin", "windows"} {
		if !slices.Contains(b.Goos, os) {
			t.Errorf("goos %v lacks %s", b.Goos, os)
		}
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if !slices.Contains(b.Goarch, arch) {
			t.Errorf("goarch %v lacks %s", b.Goarch, arch)
		}
	}
	a := g.Archives[0]
	if a.NameTemplate != "warden_{{ .Version }}_{{ .Os }}_{{ .Arch }}" {
		t.Errorf("archive name_template %q: install.sh downloads warden_<version>_<os>_<arch>", a.NameTemplate)
	}
	if !slices.Equal(a.Formats, []string{"tar.gz"}) || len(a.FormatOverrides) != 1 ||
		a.FormatOverrides[0].Goos != "windows" || !slices.Equal(a.FormatOverrides[0].Formats, []string{"zip"}) {
		t.Errorf("archive formats %v overrides %+v: want tar.gz, zip on windows", a.Formats, a.FormatOverrides)
	}
	if g.Checksum.NameTemplate != "checksums.txt" || g.Checksum.Algorithm != "sha256" {
		t.Errorf("checksum %+v: want checksums.txt in sha256", g.Checksum)
	}
}

type workflow struct {
	On          map[string]yaml.Node `yaml:"on"`
	Permissions map[string]string    `yaml:"permissions"`
	Jobs        map[string]struct {
		Steps []step `yaml:"steps"`
	} `yaml:"jobs"`
}

// TestExampleWorkflow checks the workflow users copy: the events, minimal
// permissions, a full-history checkout and the model key from a secret.
func TestExampleWorkflow(t *testing.T) {
	t.Parallel()
	var w workflow
	readYAML(t, ".github/workflows/warden.yml", &w)
	want := map[string]string{"contents": "read", "pull-requests": "write", "checks": "write", "actions": "read"}
	if len(w.Permissions) != len(want) {
		t.Errorf("permissions %v, want exactly %v", w.Permissions, want)
	}
	for k, v := range want {
		if w.Permissions[k] != v {
			t.Errorf("permissions %s: %q, want %q", k, w.Permissions[k], v)
		}
	}
	var pr struct {
		Types []string `yaml:"types"`
	}
	if n, ok := w.On["pull_request"]; !ok || n.Decode(&pr) != nil ||
		!slices.Equal(pr.Types, []string{"opened", "synchronize", "reopened", "ready_for_review"}) {
		t.Errorf("on.pull_request types %v, want opened, synchronize, reopened, ready_for_review", pr.Types)
	}
	var wd struct {
		Inputs map[string]any `yaml:"inputs"`
	}
	if n, ok := w.On["workflow_dispatch"]; !ok || n.Decode(&wd) != nil || wd.Inputs["pr-number"] == nil {
		t.Error("on.workflow_dispatch has no pr-number input")
	}
	job, ok := w.Jobs["review"]
	if !ok {
		t.Fatal("no job review")
	}
	idx := func(prefix string) int {
		return slices.IndexFunc(job.Steps, func(s step) bool { return strings.HasPrefix(s.Uses, prefix) })
	}
	checkout, setupGo, warden := idx("actions/checkout@"), idx("actions/setup-go@"), slices.IndexFunc(job.Steps, func(s step) bool { return s.Uses == "./" })
	if checkout < 0 || job.Steps[checkout].With["fetch-depth"] != "0" {
		t.Error("no actions/checkout with fetch-depth: 0")
	}
	// workflow_dispatch holds the key for any pull request, a fork's too:
	// the checkout is never the pull request's head (TestWorkflowsSafe).
	if ref, ok := job.Steps[checkout].With["ref"]; ok {
		t.Errorf("the checkout sets ref: %q; it must check out the event's own commit (the default branch on workflow_dispatch)", ref)
	}
	if warden < 0 {
		t.Fatal("no step uses: ./")
	}
	if checkout > warden {
		t.Error("uses: ./ runs before the checkout")
	}
	// A local action has no release for its ref: it builds from source.
	if setupGo < 0 || setupGo > warden {
		t.Error("uses: ./ builds warden from source: actions/setup-go must come first")
	}
	s := job.Steps[warden]
	if s.Env["OPENROUTER_API_KEY"] != "${{ secrets.OPENROUTER_API_KEY }}" {
		t.Errorf("warden step env OPENROUTER_API_KEY = %q, want the secret", s.Env["OPENROUTER_API_KEY"])
	}
	if s.With["pr-number"] != "${{ inputs.pr-number }}" {
		t.Errorf("warden step with pr-number = %q, want ${{ inputs.pr-number }}", s.With["pr-number"])
	}
}

// TestCIWorkflows checks that CI runs exactly .ci/run and that a release
// runs on version tags (TestReleaseProvenance checks its jobs).
func TestCIWorkflows(t *testing.T) {
	t.Parallel()
	var ci workflow
	readYAML(t, ".github/workflows/ci.yml", &ci)
	if _, ok := ci.On["pull_request"]; !ok {
		t.Error("ci.yml does not run on pull_request")
	}
	if _, ok := ci.On["push"]; !ok {
		t.Error("ci.yml does not run on push")
	}
	if !slices.ContainsFunc(ci.Jobs["test"].Steps, func(s step) bool { return strings.TrimSpace(s.Run) == "bash .ci/run" }) {
		t.Error("ci.yml job test does not run bash .ci/run")
	}
	var rel workflow
	readYAML(t, ".github/workflows/release.yml", &rel)
	var push struct {
		Tags []string `yaml:"tags"`
	}
	if n, ok := rel.On["push"]; !ok || n.Decode(&push) != nil || len(push.Tags) == 0 || !strings.HasPrefix(push.Tags[0], "v") {
		t.Errorf("release.yml runs on tags %v, want version tags", push.Tags)
	}
}
