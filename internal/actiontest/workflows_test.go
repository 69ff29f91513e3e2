package actiontest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The workflow-security rules (issue 20). A privileged job (one that can
// run on an event whose workflow holds the base repository's secrets and a
// write token: anything but pull_request and pull_request_review, which
// GitHub runs without secrets and with a read-only token for forks) must
// not check out a pull request's head and then run anything: not a
// local action (uses: ./), not a run: step. The head is read as git
// objects (git fetch without a checkout), as warden does. Besides that,
// every workflow declares its permissions (never write-all, and contents:
// write only for a release), checks out with persist-credentials: false,
// pins every third-party action by commit SHA (goreleaser's own version
// too), has a concurrency group with the event's data (one per pull
// request for a review; one per comment for a command workflow with
// cancel-in-progress: false, since GitHub keeps one running and one
// pending run in a group and cancels the rest, which would drop a burst's
// commands between the first and the last unanswered), and a
// comment-triggered job starts only for trusted commenters
// (author_association in its if:), so a stranger's comments start nothing
// and get no reply.

// unprivileged are the events GitHub runs without the base repository's
// secrets and with a read-only token for a fork's pull request.
var unprivileged = map[string]bool{"pull_request": true, "pull_request_review": true}

// prEvents are the events about one pull request, which need a
// concurrency group.
var prEvents = map[string]bool{"pull_request": true, "pull_request_target": true, "issue_comment": true,
	"pull_request_review_comment": true, "pull_request_review": true, "workflow_run": true}

// commentEvents are triggered by whoever may comment.
var commentEvents = map[string]bool{"issue_comment": true, "pull_request_review_comment": true, "discussion_comment": true}

type auditStep struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

type auditJob struct {
	If          string      `yaml:"if"`
	Permissions yaml.Node   `yaml:"permissions"`
	Concurrency yaml.Node   `yaml:"concurrency"`
	Steps       []auditStep `yaml:"steps"`
	Uses        string      `yaml:"uses"` // a reusable workflow
}

type auditWorkflow struct {
	On          yaml.Node           `yaml:"on"`
	Permissions yaml.Node           `yaml:"permissions"`
	Concurrency yaml.Node           `yaml:"concurrency"`
	Jobs        map[string]auditJob `yaml:"jobs"`
}

// events are the workflow's triggers, whatever form on: takes.
func (w auditWorkflow) events() []string {
	var out []string
	switch w.On.Kind {
	case yaml.ScalarNode:
		out = append(out, w.On.Value)
	case yaml.SequenceNode:
		for _, n := range w.On.Content {
			out = append(out, n.Value)
		}
	case yaml.MappingNode:
		for i := 0; i < len(w.On.Content); i += 2 {
			out = append(out, w.On.Content[i].Value)
		}
	}
	return out
}

// permissions are a permissions: node's scopes ("*": write-all or
// read-all); nil when it is not declared.
func permissions(n yaml.Node) map[string]string {
	switch n.Kind {
	case yaml.ScalarNode:
		return map[string]string{"*": n.Value}
	case yaml.MappingNode:
		m := map[string]string{}
		for i := 0; i < len(n.Content); i += 2 {
			m[n.Content[i].Value] = n.Content[i+1].Value
		}
		return m
	}
	return nil
}

// yamlText is a node as the YAML it was written as.
func yamlText(n yaml.Node) string {
	if n.Kind == 0 {
		return ""
	}
	b, _ := yaml.Marshal(&n)
	return string(b)
}

var (
	// pinnedUses is a third-party action or reusable workflow pinned by a
	// full commit SHA.
	pinnedUses = regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)
	// headRef is a ref or repository expression that names a pull
	// request's head or merge commit, or a ref a dispatch input chooses.
	headRef = regexp.MustCompile(`(?i)head|refs/pull|pull/|merge|inputs\.|github\.event\.inputs`)
	// headCheckoutRun is a shell command that checks out something other
	// than the base: a pull request's head, or what a fetch of one left.
	headCheckoutRun = regexp.MustCompile(`(?i)gh\s+pr\s+checkout|git\s+(?:checkout|switch|reset\s+--hard|merge|worktree\s+add|pull)\b[^\n]*(?:head|pull/|FETCH_HEAD|merge)`)
	// exactVersion is a tool version pinned exactly (v2.12.7).
	exactVersion = regexp.MustCompile(`^v?\d+\.\d+\.\d+$`)
)

// audit returns the rules the workflow in data breaks, each naming the job
// and step. firstParty is a uses: prefix that is this project's own
// action in the README's examples (org/warden@v1), not a third party's.
func audit(name string, data []byte, firstParty string) []string {
	var w auditWorkflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		return []string{fmt.Sprintf("%s: not YAML: %v", name, err)}
	}
	var out []string
	bad := func(format string, args ...any) { out = append(out, name+": "+fmt.Sprintf(format, args...)) }
	events := w.events()
	privileged, aboutPR, comments := false, false, false
	for _, e := range events {
		privileged = privileged || !unprivileged[e]
		aboutPR = aboutPR || prEvents[e]
		comments = comments || commentEvents[e]
	}
	wperms := permissions(w.Permissions)
	for _, jn := range sortedKeys(w.Jobs) {
		job := w.Jobs[jn]
		perms := permissions(job.Permissions)
		if perms == nil {
			perms = wperms
		}
		write := perms == nil // GitHub's default token may write
		switch {
		case perms == nil:
			bad("job %s: no permissions: declared (the default token may write); declare the least it needs", jn)
		case perms["*"] == "write-all":
			bad("job %s: permissions: write-all", jn)
		}
		for scope, level := range perms {
			write = write || level == "write" || level == "write-all"
			if scope == "contents" && level == "write" && aboutPR {
				bad("job %s: contents: write on pull request events; read is enough to review", jn)
			}
		}
		secret := strings.Contains(yamlText(w.Jobs[jn].Permissions)+jobText(job), "secrets.")
		if aboutPR && yamlText(job.Concurrency) == "" && yamlText(w.Concurrency) == "" {
			bad("job %s: no concurrency: group per pull request", jn)
		} else if aboutPR && !strings.Contains(yamlText(job.Concurrency)+yamlText(w.Concurrency), "${{") {
			bad("job %s: the concurrency group is one constant, not one per pull request", jn)
		}
		if conc := yamlText(job.Concurrency) + yamlText(w.Concurrency); comments && conc != "" &&
			!strings.Contains(conc, "cancel-in-progress: true") && !strings.Contains(conc, "comment.id") {
			bad("job %s: the concurrency group is not one per comment: GitHub's pending-job rule cancels the pending runs of a burst of comments but the last, unanswered", jn)
		}
		if comments && !strings.Contains(job.If, "author_association") {
			bad("job %s: runs for any commenter: gate its if: on github.event.comment.author_association", jn)
		}
		if job.Uses != "" && !strings.HasPrefix(job.Uses, "./") && !pinnedUses.MatchString(job.Uses) {
			bad("job %s: reusable workflow %s is not pinned by a full commit SHA", jn, job.Uses)
		}
		head := -1
		for i, s := range job.Steps {
			where := fmt.Sprintf("job %s step %d (%s)", jn, i+1, stepName(s))
			switch {
			case s.Uses == "" || strings.HasPrefix(s.Uses, "./") || s.Uses == ".":
			case strings.HasPrefix(s.Uses, "docker://"):
				if !strings.Contains(s.Uses, "@sha256:") {
					bad("%s: %s is not pinned by digest", where, s.Uses)
				}
			case firstParty != "" && strings.HasPrefix(s.Uses, firstParty):
			case !pinnedUses.MatchString(s.Uses):
				bad("%s: %s is not pinned by a full commit SHA", where, s.Uses)
			}
			if strings.HasPrefix(s.Uses, "actions/checkout@") {
				if s.With["persist-credentials"] != "false" {
					bad("%s: actions/checkout without persist-credentials: false (later steps could push with the token)", where)
				}
				if headRef.MatchString(s.With["ref"]) || headRef.MatchString(s.With["repository"]) {
					head = i
				}
			}
			if strings.HasPrefix(s.Uses, "goreleaser/goreleaser-action@") && !exactVersion.MatchString(s.With["version"]) {
				bad("%s: goreleaser version %q is not one exact version", where, s.With["version"])
			}
			if head >= 0 && i > head && (privileged && (write || secret)) && (s.Run != "" || strings.HasPrefix(s.Uses, "./") || s.Uses == ".") {
				bad("%s: runs code of the pull request's head (checked out by step %d) in a job with %s", where, head+1, holds(write, secret))
			}
			if headCheckoutRun.MatchString(s.Run) && head < 0 {
				head = i
			}
		}
	}
	return out
}

func holds(write, secret bool) string {
	switch {
	case write && secret:
		return "secrets and a write token"
	case secret:
		return "secrets"
	}
	return "a write token"
}

func stepName(s auditStep) string {
	switch {
	case s.Name != "":
		return s.Name
	case s.Uses != "":
		return s.Uses
	}
	return strings.SplitN(strings.TrimSpace(s.Run), "\n", 2)[0]
}

// jobText is the job's steps as YAML, to find the secrets it names.
func jobText(j auditJob) string {
	b, _ := yaml.Marshal(j.Steps)
	return string(b) + j.If
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// readmeWorkflows are the README's YAML blocks that are workflows (they
// have jobs:), by "README.md:<line>".
func readmeWorkflows(t *testing.T) map[string][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```yaml" {
			continue
		}
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		block := strings.Join(lines[start:i], "\n") + "\n"
		if regexp.MustCompile(`(?m)^jobs:`).MatchString(block) {
			out[fmt.Sprintf("README.md:%d", start)] = []byte(block)
		}
	}
	return out
}

// workflows are the repository's workflows and the README's, by name.
func workflows(t *testing.T) map[string][]byte {
	t.Helper()
	out := readmeWorkflows(t)
	files, _ := filepath.Glob(filepath.Join(root(t), ".github", "workflows", "*.y*ml"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[".github/workflows/"+filepath.Base(f)] = data
	}
	return out
}

// TestWorkflowsSafe holds every workflow of the repository and every one
// the README offers to copy to the rules above.
func TestWorkflowsSafe(t *testing.T) {
	t.Parallel()
	all := workflows(t)
	readme := 0
	for name := range all {
		if strings.HasPrefix(name, "README.md") {
			readme++
		}
	}
	if readme < 4 || len(all)-readme < 3 {
		t.Fatalf("%d README workflows and %d files: the audit would prove little", readme, len(all)-readme)
	}
	for _, name := range sortedKeys(all) {
		for _, v := range audit(name, all[name], "org/warden@") {
			t.Error(v)
		}
	}
}

// TestWorkflowAuditFailsOnBadWorkflows plants one bad workflow per rule:
// the audit must name each.
func TestWorkflowAuditFailsOnBadWorkflows(t *testing.T) {
	t.Parallel()
	const pin = "08c6903cd8c0fde910a37f88322edcfb5dd907a8"
	for _, tc := range []struct{ name, yaml, want string }{
		{"the issue's dispatch: head checkout, then uses: ./ with the key", `
on: {workflow_dispatch: {inputs: {pr-number: {}}}}
permissions: {contents: read, pull-requests: write}
jobs:
  review:
    steps:
      - uses: actions/checkout@` + pin + `
        with: {persist-credentials: "false", ref: "${{ format('refs/pull/{0}/head', inputs.pr-number) }}"}
      - uses: ./
        env: {KEY: "${{ secrets.KEY }}"}
`, "step 2 (./): runs code of the pull request's head (checked out by step 1) in a job with secrets and a write token"},
		{"pull_request_target builds the head", `
on: pull_request_target
permissions: {contents: read}
concurrency: {group: "x-${{ github.event.pull_request.number }}"}
jobs:
  test:
    steps:
      - uses: actions/checkout@` + pin + `
        with: {persist-credentials: "false", ref: "${{ github.event.pull_request.head.sha }}"}
      - run: make test
        env: {TOKEN: "${{ secrets.NPM_TOKEN }}"}
`, "step 2 (make test): runs code of the pull request's head (checked out by step 1) in a job with secrets"},
		{"a fetch, then a checkout of FETCH_HEAD", `
on: issue_comment
permissions: {contents: read, pull-requests: write}
concurrency: {group: "x-${{ github.event.issue.number }}"}
jobs:
  cmd:
    if: github.event.comment.author_association == 'OWNER'
    steps:
      - run: git fetch origin pull/1/head && git checkout FETCH_HEAD
      - run: ./build.sh
`, "step 2 (./build.sh): runs code of the pull request's head (checked out by step 1) in a job with a write token"},
		{"comments from anyone", `
on: issue_comment
permissions: {contents: read}
concurrency: {group: "x-${{ github.event.issue.number }}"}
jobs:
  cmd:
    steps: [{run: echo}]
`, "job cmd: runs for any commenter"},
		{"persisted credentials", `
on: push
permissions: {contents: read}
jobs:
  build:
    steps: [{uses: "actions/checkout@` + pin + `"}]
`, "without persist-credentials: false"},
		{"unpinned action", `
on: push
permissions: {contents: read}
jobs:
  build:
    steps: [{uses: actions/setup-go@v6}]
`, "actions/setup-go@v6 is not pinned by a full commit SHA"},
		{"no concurrency group", `
on: pull_request_target
permissions: {contents: read}
jobs:
  review:
    steps: [{run: echo}]
`, "no concurrency: group per pull request"},
		{"a command workflow grouped per pull request", `
on: issue_comment
permissions: {contents: read}
concurrency: {group: "x-${{ github.event.issue.number }}", cancel-in-progress: false}
jobs:
  cmd:
    if: contains(fromJSON('["OWNER"]'), github.event.comment.author_association)
    steps: [{run: echo}]
`, "job cmd: the concurrency group is not one per comment"},
		{"goreleaser ~> v2", `
on: {push: {tags: ["v*"]}}
permissions: {contents: write}
jobs:
  release:
    steps: [{uses: "goreleaser/goreleaser-action@` + pin + `", with: {version: "~> v2"}}]
`, `goreleaser version "~> v2" is not one exact version`},
		{"no permissions", `
on: push
jobs:
  build:
    steps: [{run: echo}]
`, "no permissions: declared"},
		{"contents: write for commands", `
on: issue_comment
permissions: {contents: write}
concurrency: {group: "x-${{ github.event.issue.number }}"}
jobs:
  cmd:
    if: contains(fromJSON('["OWNER"]'), github.event.comment.author_association)
    steps: [{run: echo}]
`, "contents: write on pull request events"},
	} {
		got := audit("planted.yml", []byte(tc.yaml), "")
		if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tc.want) }) {
			t.Errorf("%s: audit = %q, want a violation containing %q", tc.name, got, tc.want)
		}
	}
}

// TestActionlint runs actionlint (github.com/rhysd/actionlint, built by
// .ci/run into WARDEN_ACTIONLINT_BIN) on the repository's workflows and the
// README's. Without the binary it skips, unless WARDEN_REAL_PEERS=1 (CI),
// where a missing linter must not pass as clean workflows.
func TestActionlint(t *testing.T) {
	t.Parallel()
	bin := os.Getenv("WARDEN_ACTIONLINT_BIN")
	if bin == "" {
		bin, _ = exec.LookPath("actionlint")
	}
	if _, err := os.Stat(bin); bin == "" || err != nil {
		if os.Getenv("WARDEN_REAL_PEERS") == "1" {
			t.Fatal("actionlint is not installed (WARDEN_ACTIONLINT_BIN), and WARDEN_REAL_PEERS=1: .ci/run builds it")
		}
		t.Skip("actionlint is not installed (set WARDEN_ACTIONLINT_BIN; .ci/run builds it)")
	}
	dir := filepath.Join(t.TempDir(), ".github", "workflows")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var files []string
	for name, data := range workflows(t) {
		f := filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_").Replace(name)+".yml")
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	slices.Sort(files)
	cmd := exec.Command(bin, append([]string{"-no-color"}, files...)...)
	cmd.Dir = filepath.Dir(filepath.Dir(dir))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("actionlint: %v\n%s", err, out)
	}
}

// TestReleaseProvenance checks that the release produces provenance for
// every archive: after goreleaser (which lists every archive in
// checksums.txt: TestGoreleaserMatchesInstaller), GitHub's build
// provenance attestation is made of dist/checksums.txt's subjects, signed
// keylessly (id-token: write) and stored (attestations: write), and its
// bundle is uploaded to the release as the file install.sh verifies
// against. The tests run in a job of their own, without a write token.
func TestReleaseProvenance(t *testing.T) {
	t.Parallel()
	var rel struct {
		Jobs map[string]struct {
			Needs       any               `yaml:"needs"`
			Permissions map[string]string `yaml:"permissions"`
			Steps       []step            `yaml:"steps"`
		} `yaml:"jobs"`
	}
	readYAML(t, ".github/workflows/release.yml", &rel)
	test, gr := rel.Jobs["test"], rel.Jobs["goreleaser"]
	if !slices.ContainsFunc(test.Steps, func(s step) bool { return strings.TrimSpace(s.Run) == "bash .ci/run" }) {
		t.Error("release.yml job test does not run bash .ci/run")
	}
	if fmt.Sprint(test.Permissions) != "map[contents:read]" {
		t.Errorf("job test permissions %v, want contents: read only", test.Permissions)
	}
	if fmt.Sprint(gr.Needs) != "test" {
		t.Errorf("job goreleaser needs %v, want test", gr.Needs)
	}
	want := map[string]string{"contents": "write", "id-token": "write", "attestations": "write"}
	if fmt.Sprint(gr.Permissions) != fmt.Sprint(want) {
		t.Errorf("job goreleaser permissions %v, want %v", gr.Permissions, want)
	}
	steps := gr.Steps
	at := func(f func(step) bool) int { return slices.IndexFunc(steps, f) }
	build := at(func(s step) bool { return strings.HasPrefix(s.Uses, "goreleaser/goreleaser-action@") })
	attest := at(func(s step) bool { return strings.HasPrefix(s.Uses, "actions/attest-build-provenance@") })
	upload := at(func(s step) bool {
		return strings.Contains(s.Run, "gh release upload") && strings.Contains(s.Run, provenanceBundle)
	})
	switch {
	case build < 0 || attest < 0 || upload < 0:
		t.Fatalf("release.yml: goreleaser at %d, attestation at %d, bundle upload at %d: want all three", build, attest, upload)
	case !(build < attest && attest < upload):
		t.Errorf("release.yml: want goreleaser, then the attestation, then the upload")
	}
	if s := steps[attest]; s.With["subject-checksums"] != "dist/checksums.txt" || s.ID == "" {
		t.Errorf("the attestation's subjects are %v (id %q), want every archive of dist/checksums.txt", s.With, s.ID)
	}
	if s := steps[upload]; !strings.Contains(s.Env["BUNDLE"], "steps."+steps[attest].ID+".outputs.bundle-path") {
		t.Errorf("the upload sends %q, want the attestation's bundle-path", s.Env["BUNDLE"])
	}
}
