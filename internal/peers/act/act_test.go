//go:build linux || darwin

package act

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/internal/fakeopenai"
	"github.com/org/warden/internal/testgit"
)

const (
	owner    = "acme"
	repoName = "widgets"
	prNumber = 7
	modelKey = "sk-act-model-key-0123456789"
	// actVersion is the act the tests are written against.
	actVersion = "v0.2.89"
	actDeadln  = 8 * time.Minute
)

// The peer, found once by TestMain.
var peer struct {
	bin     string // the act binary
	missing string // why there is none; "" when there is one
	strict  bool   // CI=true or WARDEN_REAL_PEERS=1: a missing peer fails
}

func TestMain(m *testing.M) {
	// The test binary is also the stand-in of the actions the Action's
	// steps use (see standIns): act runs it as a step's process.
	if op := os.Getenv(standInVar); op != "" {
		os.Exit(standIn(op))
	}
	peer.strict = os.Getenv("CI") == "true" || os.Getenv("WARDEN_REAL_PEERS") == "1"
	peer.bin = os.Getenv("WARDEN_ACT_BIN")
	if peer.bin == "" {
		home, _ := os.UserHomeDir()
		peer.bin = filepath.Join(home, ".cache", "warden-peers", "bin", "act")
	}
	if fi, err := os.Stat(peer.bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		peer.missing = fmt.Sprintf("act binary not found (or not executable) at %s: .ci/run builds it (go install github.com/nektos/act@%s; set WARDEN_ACT_BIN)", peer.bin, actVersion)
	} else if out, err := exec.Command(peer.bin, "--version").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "act version "+strings.TrimPrefix(actVersion, "v") {
		// The binary is there: a wrong or broken one always fails (the
		// workarounds here are for this version's behaviour).
		peer.missing = fmt.Sprintf("%s --version = %q (%v), want act version %s", peer.bin, bytes.TrimSpace(out), err, strings.TrimPrefix(actVersion, "v"))
		peer.strict = true
	}
	os.Exit(m.Run())
}

// needAct skips or fails the test when act is missing.
func needAct(t *testing.T) {
	t.Helper()
	if peer.missing == "" {
		return
	}
	if peer.strict {
		t.Fatalf("real peer missing (CI=true or WARDEN_REAL_PEERS=1 forbids skipping): %s", peer.missing)
	}
	t.Skip(peer.missing)
}

// scenario is one pull_request workflow run under act.
type scenario struct {
	name     string
	severity string // of the model's one finding per request
	with     string // the warden step's with: lines, indented
	// continueOnError sets continue-on-error on the warden step.
	continueOnError bool

	wantJobOK          bool   // act exits 0
	wantStep           string // steps.warden.outcome/conclusion
	wantCheck          string // check run name
	wantConclusion     string // check run conclusion
	wantEvent          string // the review's event
	wantHigh, wantFail bool   // high-count equals findings-count; the step failed
}

var scenarios = []scenario{{
	// The defaults (fail-on high, github-token ${{ github.token }}) with a
	// high finding: the step fails, continue-on-error keeps the job, and
	// the outputs of the failed step still reach the next one.
	name: "blocking finding, defaults", severity: "high", continueOnError: true,
	with:      "          skills: code-review\n          budget: 3m\n",
	wantJobOK: true, wantStep: "failure/success", wantCheck: "warden", wantConclusion: "failure", wantEvent: "COMMENT", wantHigh: true, wantFail: true,
}, {
	// Inputs through action.yml's env: mapping: a blocking medium finding
	// with request-changes fails the job (act exits non-zero) and the
	// review requests changes, under the check name given.
	name: "request changes, job fails", severity: "medium",
	with:      "          skills: code-review\n          fail-on: medium\n          request-changes: 'true'\n          check-name: warden / act\n          max-findings: '5'\n",
	wantJobOK: false, wantStep: "failure/failure", wantCheck: "warden / act", wantConclusion: "failure", wantEvent: "REQUEST_CHANGES", wantFail: true,
}, {
	// A finding below fail-on: the step and the job pass, the check run is
	// neutral (findings, none blocking).
	name: "non-blocking finding", severity: "medium",
	with:      "          skills: code-review\n",
	wantJobOK: true, wantStep: "success/success", wantCheck: "warden", wantConclusion: "neutral", wantEvent: "COMMENT",
}}

// TestActionUnderAct runs pull_request workflows that use the repository's
// own action.yml under act, one scenario after the other (the first pays
// for the cold build of warden, the others reuse the Go build cache), and
// checks the check run, the review and its comments, the step's outcome
// and outputs as the next step sees them, and the log.
func TestActionUnderAct(t *testing.T) {
	needAct(t)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { runScenario(t, sc) })
	}
}

func runScenario(t *testing.T, sc scenario) {
	ctx, cancel := context.WithTimeout(t.Context(), actDeadln)
	defer cancel()

	w := newWorld(t, sc)
	res := w.runAct(ctx)
	t.Logf("act ran the workflow in %s", res.took.Round(time.Millisecond))
	if res.killed {
		t.Fatalf("act: %v\n%s", res.err, res.log)
	}
	if sc.wantJobOK && res.err != nil {
		t.Fatalf("act: %v, want the job to succeed\n%s", res.err, res.log)
	}
	if !sc.wantJobOK && res.err == nil {
		t.Errorf("act exited 0, want the job to fail")
	}
	if !strings.Contains(res.log, "Job succeeded") && !strings.Contains(res.log, "Job failed") {
		t.Fatalf("act did not run the job to its end\n%s", res.log)
	}

	out := w.outputs(res)
	if step := out["step-outcome"] + "/" + out["step-conclusion"]; step != sc.wantStep {
		t.Errorf("warden step outcome/conclusion = %s, want %s", step, sc.wantStep)
	}
	n, err := strconv.Atoi(out["findings-count"])
	if out["outcome"] != "complete" || err != nil || n == 0 {
		t.Errorf("outputs outcome=%q findings-count=%q, want complete with findings", out["outcome"], out["findings-count"])
	}
	if high := out["high-count"] == out["findings-count"]; high != sc.wantHigh || (!sc.wantHigh && out["high-count"] != "0") {
		t.Errorf("output high-count = %q of %q findings (severity %s)", out["high-count"], out["findings-count"], sc.severity)
	}
	if out["planned"] == "" || out["planned"] == "0" || out["planned"] != out["reviewed"] {
		t.Errorf("outputs planned=%q reviewed=%q, want equal and non-zero", out["planned"], out["reviewed"])
	}
	if !strings.HasPrefix(out["report-file"], "/") || out["report-exists"] != "yes" {
		t.Errorf("output report-file = %q (exists: %q), want an absolute path to a file the next step can read", out["report-file"], out["report-exists"])
	}
	// install.sh built warden from the action's source (no release exists
	// for a local action) and put its directory on GITHUB_PATH.
	if !strings.HasSuffix(out["warden-on-path"], "/warden") || !strings.HasPrefix(out["warden-version"], "warden local") {
		t.Errorf("later step sees warden at %q, version %q; want install.sh's source build on PATH", out["warden-on-path"], out["warden-version"])
	}
	if out["marked"] != "yes" {
		t.Errorf("%s did not reach the steps: processes left behind after a deadline could not be found", markVar)
	}
	if !strings.Contains(res.log, "warden-install: building warden") {
		t.Errorf("install.sh did not build warden from source")
	}
	var rep map[string]any
	if data, err := os.ReadFile(filepath.Join(w.out, "report.json")); err != nil {
		t.Errorf("report: %v", err)
	} else if err := json.Unmarshal(data, &rep); err != nil {
		t.Errorf("report is not JSON: %v\n%s", err, data)
	}

	// The check run.
	runs := w.gh.CheckRuns()
	if len(runs) != 1 {
		t.Fatalf("%d check runs, want 1: %+v\n%s", len(runs), runs, res.log)
	}
	cr := runs[0]
	if cr.Name != sc.wantCheck || cr.HeadSHA != w.pr.HeadSHA || cr.Status != "completed" || cr.Conclusion != sc.wantConclusion {
		t.Errorf("check run %q on %s is %s/%s; want %q on the head SHA %s, completed/%s", cr.Name, cr.HeadSHA, cr.Status, cr.Conclusion, sc.wantCheck, w.pr.HeadSHA, sc.wantConclusion)
	}
	if !strings.HasPrefix(cr.Title, "Complete: ") {
		t.Errorf("check run title = %q, want it to start with Complete:", cr.Title)
	}
	if len(cr.Annotations) != n {
		t.Errorf("%d annotations, want one per finding (%d)", len(cr.Annotations), n)
	}
	if created := w.gh.RequestsTo(fakegithub.RouteCreateCheckRun); len(created) != 1 || !strings.Contains(string(created[0].Body), `"in_progress"`) {
		t.Errorf("check run not created in_progress first: %+v", created)
	}

	// The review.
	reviews := w.gh.Reviews(prNumber)
	if len(reviews) != 1 || reviews[0].Event != sc.wantEvent || reviews[0].CommitID != w.pr.HeadSHA {
		t.Errorf("reviews = %+v, want one %s review on the head SHA", reviews, sc.wantEvent)
	}
	comments := w.gh.ReviewComments(prNumber)
	if len(comments) != n {
		t.Errorf("%d inline review comments, want one per finding (%d)", len(comments), n)
	}
	for _, c := range comments {
		if c.Path != "calc/calc.go" || c.CommitID != w.pr.HeadSHA {
			t.Errorf("comment on %s:%d at %s, want calc/calc.go at the head SHA", c.Path, c.Line, c.CommitID)
		}
	}

	// Every request to GitHub carried the workflow's github.token, and
	// every model call the key from the workflow's secrets.
	for _, r := range w.gh.Requests() {
		if r.Status == http.StatusUnauthorized {
			t.Errorf("%s %s answered 401: github.token did not reach warden", r.Method, r.Path)
		}
	}
	calls, auth := w.model.seen()
	if calls == 0 {
		t.Errorf("the model was never called")
	}
	for _, a := range auth {
		if a != "Bearer "+modelKey {
			t.Errorf("model request Authorization = %q, want the secret's key", a)
			break
		}
	}

	// No secret in the runner's log (act masks secrets and warden's
	// ::add-mask:: values).
	for _, secret := range []string{fakegithub.DefaultToken, modelKey} {
		if strings.Contains(res.log, secret) {
			t.Errorf("act's log shows a secret (%.8s...)", secret)
		}
	}
	if left := w.leftovers(); len(left) > 0 {
		t.Errorf("processes of the run still alive after act exited (killed now): %v", left)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("act log:\n%s", res.log)
	}
}

// world is a pull request in a temporary git repository with a copy of the
// action in it, a fake GitHub and a model on loopback, and a workflow.
type world struct {
	t    *testing.T
	dir  string // scratch: repository, outputs, act's HOME and caches
	repo string // the pull request's repository, act's working directory
	// repoGit is repo as internal/testgit's hermetic repository.
	repoGit *testgit.Repo
	out     string // where the workflow writes what the test checks
	gh      *fakegithub.Server
	ghURL   string
	model   *model
	pr      fakegithub.PullRequest
	sc      scenario
	env     []string // act's environment
	goBin   string   // the go the action's build uses
	mark    string   // value of markVar in the environment of every process of the run
	// eventName is the event act runs the workflow on; "" means
	// pull_request.
	eventName string
	// run is the workflow run GitHub records for the next runAct (its
	// event, head repository, workflow path): the job's runtime token
	// is its, for the artifact service. Event and pull request are
	// filled in from eventName when empty.
	run fakegithub.WorkflowRun
	// job is the last runAct's job.
	job *fakegithub.Job
	// token is the GITHUB_TOKEN of the next runAct; "" means
	// fakegithub.DefaultToken.
	token string
	// checkout is the commit the checkout stand-in copies; "" means the
	// repository as it is.
	checkout string
	// noSecrets runs the next runAct without the model key (a fork's
	// pull request run gets no secrets).
	noSecrets bool
}

// markVar marks the processes of one act run: act runs each step in a
// session of its own (a pty, setsid), outside act's process group, so they
// are found by this variable, which host mode passes on to every step.
const markVar = "WARDEN_ACT_TEST_RUN"

func newWorld(t *testing.T, sc scenario) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, dir: dir, repoGit: testgit.New(t), out: filepath.Join(dir, "out"), gh: fakegithub.New(owner, repoName), model: newModel(t, sc.severity), sc: sc, mark: dir}
	w.repo = w.repoGit.Dir
	// alice maintains the repository: the commands she comments (resume,
	// dismiss) need write access, which warden looks up.
	w.gh.SetRole("alice", fakegithub.RoleWrite)
	if err := os.MkdirAll(w.out, 0o755); err != nil {
		t.Fatal(err)
	}

	// The pull request: a small Go change on a branch.
	w.write("go.mod", "module example.com/widgets\n\ngo 1.22\n")
	w.write("calc/calc.go", "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n")
	w.git("add", "-A")
	w.git("commit", "-qm", "base")
	base := w.git("rev-parse", "HEAD")
	w.git("checkout", "-q", "-b", "feature")
	w.write("calc/calc.go", "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\n"+
		"// Div returns a divided by b.\nfunc Div(a, b int) int {\n\treturn a / b\n}\n")
	w.git("add", "-A")
	w.git("commit", "-qm", "Add Div")
	head := w.git("rev-parse", "HEAD")
	patch := w.git("diff", base, head, "--", "calc/calc.go")
	patch = patch[strings.Index(patch, "@@"):]
	w.pr = fakegithub.PullRequest{
		Number: prNumber, Title: "Add Div", Body: "Division.", HeadSHA: head, BaseSHA: base, HeadRef: "feature", BaseRef: "main",
		User: "alice", UserType: "User",
		Files: []fakegithub.File{{Filename: "calc/calc.go", Status: "modified", Additions: strings.Count(patch, "\n+"), Deletions: strings.Count(patch, "\n-"), Patch: patch}},
	}
	w.gh.AddPullRequest(w.pr)
	w.ghURL = w.gh.Start(t).URL

	// The action, as a local action of the repository (uses: ./warden-action),
	// untracked: it is not part of the change under review.
	action := filepath.Join(w.repo, "warden-action")
	copyAction(t, repoRoot(t), action)
	w.write(".github/workflows/warden.yml", w.workflow())
	w.event()
	w.env = w.actEnv()

	// The action's Go build runs without network: every module must be in
	// GOMODCACHE already. Say so plainly rather than deep in act's log.
	list := exec.Command(w.goBin, "list", "-deps", "./cmd/warden")
	list.Dir, list.Env = action, w.env
	if out, err := list.CombinedOutput(); err != nil {
		t.Fatalf("warden's modules are not all in GOMODCACHE, and the action's build under act runs with GOPROXY=off (run go mod download first): %v\n%s", err, out)
	}
	return w
}

// workflow is the job under test. Host mode runs steps in an empty
// workspace (act's <action-cache-path>/<random>/hostexecutor), not in the
// repository act was started in, so the first step copies the repository
// there, as actions/checkout would; act reads the local action's action.yml
// from its working directory but runs it from the workspace, so the copy
// must hold the action too.
func (w *world) workflow() string {
	return `name: warden under act
on: pull_request
permissions:
  checks: write
  pull-requests: write
jobs:
  review:
    runs-on: ubuntu-latest
    steps:
      - name: Check out (copy the repository into the workspace)
        run: cp -a ` + shq(w.repo+"/.") + ` "$GITHUB_WORKSPACE/"
      - name: warden
        id: warden
        uses: ./warden-action
        continue-on-error: ` + strconv.FormatBool(w.sc.continueOnError) + `
        env:
          WARDEN_BASE_URL: ` + shq(w.model.URL+"/v1") + `
          WARDEN_MODEL: test-model
          WARDEN_API_KEY: ${{ secrets.WARDEN_MODEL_KEY }}
        with:
` + w.sc.with + `      - name: Record what later steps see
        if: always()
        env:
          STEP_OUTCOME: ${{ steps.warden.outcome }}
          STEP_CONCLUSION: ${{ steps.warden.conclusion }}
          OUTCOME: ${{ steps.warden.outputs.outcome }}
          FINDINGS: ${{ steps.warden.outputs.findings-count }}
          HIGH: ${{ steps.warden.outputs.high-count }}
          PLANNED: ${{ steps.warden.outputs.planned }}
          REVIEWED: ${{ steps.warden.outputs.reviewed }}
          REPORT: ${{ steps.warden.outputs.report-file }}
          OUT: ` + shq(w.out) + `
        run: |
          {
            echo "step-outcome=$STEP_OUTCOME"
            echo "step-conclusion=$STEP_CONCLUSION"
            echo "outcome=$OUTCOME"
            echo "findings-count=$FINDINGS"
            echo "high-count=$HIGH"
            echo "planned=$PLANNED"
            echo "reviewed=$REVIEWED"
            echo "report-file=$REPORT"
            if [ -n "$REPORT" ] && [ -f "$REPORT" ]; then echo "report-exists=yes"; cp "$REPORT" "$OUT/report.json"; fi
            echo "warden-on-path=$(command -v warden || true)"
            echo "warden-version=$(warden version 2>&1 || true)"
            echo "marked=${WARDEN_ACT_TEST_RUN:+yes}"
          } >"$OUT/outputs"
`
}

// event writes the pull_request payload act hands the job.
func (w *world) event() {
	w.t.Helper()
	repo := map[string]any{"full_name": owner + "/" + repoName, "name": repoName, "owner": map[string]any{"login": owner}}
	pr := map[string]any{
		"number": prNumber, "title": w.pr.Title, "body": w.pr.Body, "draft": false, "state": "open",
		"user": map[string]any{"login": "alice", "type": "User"},
		"head": map[string]any{"sha": w.pr.HeadSHA, "ref": "feature", "repo": repo},
		"base": map[string]any{"sha": w.pr.BaseSHA, "ref": "main", "repo": repo},
	}
	data, err := json.Marshal(map[string]any{"action": "opened", "number": prNumber, "pull_request": pr, "repository": repo})
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "event.json"), data, 0o644); err != nil {
		w.t.Fatal(err)
	}
}

type actResult struct {
	err    error
	killed bool // the deadline ended the run
	log    string
	took   time.Duration
}

// runAct runs act on the workflow in its own process group, which is
// killed when ctx ends; the steps, which act starts in sessions of their
// own, are then found and killed by leftovers.
func (w *world) runAct(ctx context.Context) actResult {
	w.t.Helper()
	event := w.eventName
	if event == "" {
		event = "pull_request"
	}
	args := []string{
		event,
		"-C", w.repo,
		"-W", filepath.Join(w.repo, ".github", "workflows", "warden.yml"),
		"-e", filepath.Join(w.dir, "event.json"),
		// host mode: no Docker; steps run as processes on this machine.
		"-P", "ubuntu-latest=-self-hosted",
		// never fetch actions (there are no remote ones: this makes sure).
		"--action-offline-mode",
		// act's workspaces and action cache live in the test's scratch
		// directory, not in ~/.cache/act.
		"--action-cache-path", filepath.Join(w.dir, "act-cache"),
		// the cache server would listen on the machine's outbound address;
		// the fake GitHub's Actions services stand in for GitHub's.
		"--no-cache-server",
		// act's defaults are https://github.com and https://api.github.com;
		// --env overrides what it puts in the github context and the steps'
		// env (--github-instance cannot: it makes https://<host>/api/v3).
		"--env", "GITHUB_API_URL=" + w.ghURL,
		"--env", "GITHUB_SERVER_URL=" + w.ghURL,
		"--env", "GITHUB_GRAPHQL_URL=" + w.ghURL + "/graphql",
		// without it act derives the repository from the git remote
		// (there is none) and falls back to nektos/act.
		"--env", "GITHUB_REPOSITORY=" + owner + "/" + repoName,
		// github.token comes from the GITHUB_TOKEN secret.
		"-s", "GITHUB_TOKEN=" + fakegithub.DefaultToken,
	}
	// GitHub passes a fork's pull request run no secrets.
	if !w.noSecrets {
		args = append(args, "-s", "WARDEN_MODEL_KEY="+modelKey, "-s", "OPENROUTER_API_KEY="+modelKey)
	}
	// GitHub records the run; the job's runtime token reaches the
	// stand-ins of the actions that talk to the Actions services.
	r := w.run
	r.Event = cmp.Or(r.Event, event)
	if len(r.PullRequests) == 0 && event != "issue_comment" && event != "workflow_run" && event != "check_run" {
		r.PullRequests = []int{prNumber}
	}
	r.HeadSHA = cmp.Or(r.HeadSHA, w.pr.HeadSHA)
	w.job = w.gh.StartRun(r)
	checkout := w.checkoutDir()
	args = append(args,
		"--env", runtimeURLVar+"="+fakegithub.ResultsURL(w.ghURL),
		"--env", runtimeTokenVar+"="+w.job.RuntimeToken,
		"--env", testBinaryVar+"="+testBinary(w.t),
		"--env", checkoutVar+"="+checkout,
	)
	// The actions the workflow and action.yml use, other than the
	// Action itself, are stand-ins of ours (act would clone them from
	// GitHub): actions/upload-artifact uploads through the fake's
	// artifact service with the job's token (so GitHub's visibility rules
	// hold for what later runs read), actions/checkout copies the
	// repository at the run's commit.
	for ref, dir := range standIns(w.t, w.dir) {
		args = append(args, "--local-repository", ref+"="+dir)
	}
	// A workflow as users copy it names the Action org/warden@v1.
	args = append(args, "--local-repository", "org/warden@v1="+filepath.Join(w.repo, "warden-action"))
	token := cmp.Or(w.token, fakegithub.DefaultToken)
	for i, a := range args {
		if a == "GITHUB_TOKEN="+fakegithub.DefaultToken {
			args[i] = "GITHUB_TOKEN=" + token
		}
	}
	cmd := exec.CommandContext(ctx, peer.bin, args...)
	cmd.Dir = w.repo
	cmd.Env = w.env
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	killed := ctx.Err() != nil
	if killed {
		left := w.leftovers()
		err = fmt.Errorf("killed by the scenario's deadline (%s) after %s of act, with the step processes %v: %w", actDeadln, took.Round(time.Second), left, errors.Join(err, ctx.Err()))
	}
	return actResult{err: err, killed: killed, log: log.String(), took: took}
}

// leftovers kills the processes of this run that are still alive (marked
// by markVar; act's own process group is already gone) and returns their
// ids and names. It sees them only where /proc shows environments (Linux).
func (w *world) leftovers() []string {
	mark := []byte(markVar + "=" + w.mark + "\x00")
	var left []string
	for range 3 { // a dying parent may still fork: look again
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return left
		}
		found := false
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil || !bytes.Contains(append([]byte{0}, env...), append([]byte{0}, mark...)) {
				continue
			}
			comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				left = append(left, fmt.Sprintf("%d (%s)", pid, strings.TrimSpace(string(comm))))
				found = true
			}
		}
		if !found {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return left
}

// actEnv is act's environment, which host mode passes on to every step:
// this machine's environment without anything a surrounding Actions job or
// the developer's shell would leak into the job (GITHUB_*, RUNNER_*,
// ACTIONS_*, INPUT_*, model keys, warden's own variables), with a scratch
// HOME (so no ~/.actrc or XDG act config changes act's flags), Go first on
// PATH, the machine's Go caches and no network for the Go build.
func (w *world) actEnv() []string {
	w.t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		w.t.Fatalf("go is not on PATH: the action builds warden from source under act and needs it: %v", err)
	}
	goEnv := map[string]string{}
	data, err := exec.Command(goBin, "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT").Output()
	if err != nil {
		w.t.Fatalf("go env: %v", err)
	}
	if err := json.Unmarshal(data, &goEnv); err != nil {
		w.t.Fatalf("go env: %v", err)
	}
	w.goBin = filepath.Join(goEnv["GOROOT"], "bin", "go")
	drop := regexp.MustCompile(`^(GITHUB_|RUNNER_|ACTIONS_|INPUT_|WARDEN_|GO|CGO_|OPENAI_|OPENROUTER_|XDG_|HOME=|PATH=|CI=|ACT=)`)
	var env []string
	for _, kv := range os.Environ() {
		if !drop.MatchString(kv) {
			env = append(env, kv)
		}
	}
	home := filepath.Join(w.dir, "home")
	for _, d := range []string{home, filepath.Join(home, ".config"), filepath.Join(home, ".cache")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			w.t.Fatal(err)
		}
	}
	return append(env,
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"PATH="+filepath.Dir(w.goBin)+string(filepath.ListSeparator)+os.Getenv("PATH"),
		"GOROOT="+goEnv["GOROOT"],
		"GOCACHE="+goEnv["GOCACHE"],
		"GOMODCACHE="+goEnv["GOMODCACHE"],
		"GOPATH="+goEnv["GOPATH"],
		"GOPROXY=off",
		"GOFLAGS=-mod=readonly",
		"GOTOOLCHAIN=local",
		"GOTELEMETRY=off",
		markVar+"="+w.mark,
	)
}

// outputs reads the key=value lines the workflow's last step wrote.
func (w *world) outputs(res actResult) map[string]string {
	w.t.Helper()
	data, err := os.ReadFile(filepath.Join(w.out, "outputs"))
	if err != nil {
		w.t.Fatalf("the workflow recorded no outputs: %v\nact log:\n%s", err, res.log)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			out[k] = v
		}
	}
	return out
}

func (w *world) write(name, content string) {
	w.t.Helper()
	path := filepath.Join(w.repo, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) git(args ...string) string {
	w.t.Helper()
	return strings.TrimSpace(w.repoGit.Git(args...))
}

// repoRoot is the directory of warden's go.mod, above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(data, []byte("module github.com/org/warden\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("warden's go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// copyAction copies the action (action.yml, scripts/ and the Go source
// install.sh builds) from root to dst: the files git would ship (tracked
// and untracked, not ignored), or, outside a git checkout, every file but
// .git and the ignored build outputs.
func copyAction(t *testing.T, root, dst string) {
	t.Helper()
	var files []string
	cmd := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if out, err := cmd.Output(); err == nil {
		for f := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
	} else {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if d.IsDir() && (d.Name() == ".git" || rel == "dist") {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() && rel != "warden" && !strings.HasSuffix(rel, ".test") {
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		src := filepath.Join(root, f)
		fi, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "action.yml")); err != nil {
		t.Fatalf("no action.yml copied from %s: %v", root, err)
	}
}

// shq quotes s for both YAML (a plain scalar would break on ': ' or '#')
// and bash: single quotes, which neither interprets.
func shq(s string) string {
	if strings.ContainsAny(s, "'\n") {
		panic("shq: path with a quote or newline: " + s)
	}
	return "'" + s + "'"
}

// model is an OpenAI-compatible chat-completions server on loopback. Each
// request gets one finding on the first line the prompt allows.
type model struct {
	*httptest.Server
	severity string

	mu   sync.Mutex
	auth []string
	// dead is a path whose prompts get 503 (the provider failing
	// partway through a review); "" for none.
	dead string
	// clean is a path whose prompts get no finding (its code fixed); ""
	// for none.
	clean string
}

// linesRE finds the first line warden's prompt allows findings on; only
// the range is matched, so that rewording the prompt does not break this
// tier (cmd/warden's tests pin the wording).
var linesRE = regexp.MustCompile(`lines you may report on are (\d+) to (\d+)`)

func newModel(t *testing.T, severity string) *model {
	t.Helper()
	m := &model{severity: severity}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

func (m *model) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.auth = append(m.auth, r.Header.Get("Authorization"))
	dead, clean := m.dead, m.clean
	m.mu.Unlock()
	prompt := req.Messages[len(req.Messages)-1].Content
	if dead != "" && strings.Contains(prompt, "File: "+dead+"\n") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":{"message":"no healthy upstream","type":"server_error"}}`))
		return
	}
	chars := 0
	for _, msg := range req.Messages {
		chars += len(msg.Content)
	}
	if clean != "" && strings.Contains(prompt, "File: "+clean+"\n") {
		fakeopenai.Serve(w, r.Context(), fakeopenai.Answer{}, fakeopenai.Wire{Model: req.Model, Content: `{"findings": []}`, PromptTokens: chars / 4, CompletionTokens: 5})
		return
	}
	sub := linesRE.FindStringSubmatch(prompt)
	if sub == nil {
		http.Error(w, `{"error":{"message":"the prompt names no lines to report on"}}`, http.StatusBadRequest)
		return
	}
	line, _ := strconv.Atoi(sub[1])
	file := ""
	if f := regexp.MustCompile(`(?m)^File: (.+)$`).FindStringSubmatch(prompt); f != nil {
		file = f[1]
	}
	answer, _ := json.Marshal(map[string]any{"findings": []map[string]any{{
		"severity": m.severity, "title": "Division by zero in " + file, "description": "b may be zero.",
		"start_line": line, "end_line": line, "suggestion": "", "confidence": 0.9,
	}}})
	fakeopenai.Serve(w, r.Context(), fakeopenai.Answer{}, fakeopenai.Wire{Model: req.Model, Content: string(answer),
		PromptTokens: chars / 4, CompletionTokens: 20})
}

func (m *model) seen() (int, []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.auth), append([]string(nil), m.auth...)
}

// syncBuffer is a bytes.Buffer safe for act's stdout and stderr at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
