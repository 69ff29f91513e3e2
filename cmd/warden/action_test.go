package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/org/warden/ghbot"
	"github.com/org/warden/internal/fakegithub"
)

// actionHarness is a pull request in a real git repository, a loopback
// GitHub that validates like GitHub, a loopback model, and the environment
// the Actions runner would give `warden action`.
type actionHarness struct {
	t     *testing.T
	repo  *gitRepo
	gh    *fakegithub.Server
	model *fakeModel
	pr    fakegithub.PullRequest
	env   map[string]string
	dir   string // files the runner provides: event, outputs, summary
	// lastJob is the job of the last runOnGitHub.
	lastJob *fakegithub.Job
}

const (
	testOwner = "acme"
	testRepo  = "widgets"
	testPR    = 7
)

func newActionHarness(t *testing.T, severity string) *actionHarness {
	t.Helper()
	h := &actionHarness{t: t, repo: newGitRepo(t), gh: fakegithub.New(testOwner, testRepo), model: newFakeModel(t, severity), dir: t.TempDir()}
	r := h.repo
	r.write("auth/session.go", "package auth\n\n"+numbered(80, "// session"))
	r.write("store/query.go", "package store\n\n"+numbered(40, "// query"))
	r.write("README.md", "# widgets\n")
	r.git("add", "-A")
	r.git("commit", "-qm", "base")
	base := strings.TrimSpace(r.git("rev-parse", "HEAD"))
	r.git("checkout", "-q", "-b", "feature")
	session := "package auth\n\n" + numbered(80, "// session")
	session = strings.Replace(session, "// session line 10\n", "// session line 10 changed\n", 1)
	session = strings.Replace(session, "// session line 70\n", "// session line 70 changed\n", 1)
	r.write("auth/session.go", session)
	r.write("store/query.go", strings.Replace("package store\n\n"+numbered(40, "// query"), "// query line 20\n", "// query line 20 changed\n", 1))
	r.write("README.md", "# widgets\n\nNow with sessions.\n")
	r.git("add", "-A")
	r.git("commit", "-qm", "feature")
	head := strings.TrimSpace(r.git("rev-parse", "HEAD"))

	h.pr = fakegithub.PullRequest{Number: testPR, Title: "Session changes", Body: "Please review.", HeadSHA: head, BaseSHA: base, HeadRef: "feature", BaseRef: "main"}
	h.refreshPR()
	srv := h.gh.Start(t)
	h.env = map[string]string{
		"GITHUB_ACTIONS":      "true",
		"GITHUB_EVENT_NAME":   "pull_request",
		"GITHUB_EVENT_PATH":   filepath.Join(h.dir, "event.json"),
		"GITHUB_REPOSITORY":   testOwner + "/" + testRepo,
		"GITHUB_API_URL":      srv.URL,
		"GITHUB_WORKSPACE":    r.Dir,
		"GITHUB_OUTPUT":       filepath.Join(h.dir, "output"),
		"GITHUB_STEP_SUMMARY": filepath.Join(h.dir, "summary.md"),
		"RUNNER_TEMP":         h.dir,
		"INPUT_GITHUB_TOKEN":  fakegithub.DefaultToken,
		"INPUT_SKILLS":        "code-review",
		"WARDEN_BASE_URL":     h.model.URL + "/v1",
		"WARDEN_MODEL":        "test-model",
		"WARDEN_API_KEY":      "sk-model-key-123456",
	}
	h.event("opened", nil)
	return h
}

// refreshPR sets the pull request's SHAs and files from the branches main
// (base) and feature (head), as GitHub would after a push.
func (h *actionHarness) refreshPR() {
	h.t.Helper()
	r := h.repo
	base := strings.TrimSpace(r.git("rev-parse", "main"))
	head := strings.TrimSpace(r.git("rev-parse", "feature"))
	h.pr.BaseSHA, h.pr.HeadSHA, h.pr.Files = base, head, nil
	for _, line := range strings.Split(strings.TrimSpace(r.git("diff", "--name-status", "--no-renames", base, head)), "\n") {
		st, path, _ := strings.Cut(line, "\t")
		status := map[string]string{"A": "added", "D": "removed"}[st]
		if status == "" {
			status = "modified"
		}
		patch := r.git("diff", base, head, "--", path)
		patch = patch[strings.Index(patch, "@@"):]
		// The file's content at the head lets the fake follow review
		// comments across pushes as GitHub does.
		content := ""
		if status != "removed" {
			content = r.git("show", head+":"+path)
		}
		h.pr.Files = append(h.pr.Files, fakegithub.File{Filename: path, Status: status, Additions: strings.Count(patch, "\n+"), Deletions: strings.Count(patch, "\n-"), Patch: strings.TrimSuffix(patch, "\n"), Content: content})
	}
	h.gh.AddPullRequest(h.pr)
}

// commitBase adds files to the base branch, before the pull request's
// commit (which is rebased onto it), and updates the pull request and its
// event: the configuration a repository has before the pull request.
func (h *actionHarness) commitBase(files map[string]string) {
	h.t.Helper()
	r := h.repo
	r.git("checkout", "-q", "main")
	for path, content := range files {
		r.write(path, content)
	}
	r.git("add", "-A")
	r.git("commit", "-qm", "configure warden")
	r.git("checkout", "-q", "feature")
	r.git("rebase", "-q", "main")
	h.refreshPR()
	h.event("opened", nil)
}

// commitHead adds a commit with files to the pull request (the workspace
// is left at it, as actions/checkout leaves a pull_request workflow).
func (h *actionHarness) commitHead(files map[string]string) {
	h.t.Helper()
	r := h.repo
	for path, content := range files {
		r.write(path, content)
	}
	r.git("add", "-A")
	r.git("commit", "-qm", "more changes")
	h.refreshPR()
	h.event("synchronize", nil)
}

// event writes the pull_request event payload, as the runner would.
func (h *actionHarness) event(action string, edit func(pr map[string]any)) {
	h.t.Helper()
	repo := map[string]any{"full_name": testOwner + "/" + testRepo, "name": testRepo, "owner": map[string]any{"login": testOwner}}
	pr := map[string]any{
		"number": testPR, "title": h.pr.Title, "body": h.pr.Body, "draft": false, "state": "open",
		"user": map[string]any{"login": "alice", "type": "User"},
		"head": map[string]any{"sha": h.pr.HeadSHA, "ref": "feature", "repo": repo},
		"base": map[string]any{"sha": h.pr.BaseSHA, "ref": "main", "repo": repo},
	}
	if edit != nil {
		edit(pr)
	}
	data, err := json.Marshal(map[string]any{"action": action, "number": testPR, "pull_request": pr, "repository": repo})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(h.env["GITHUB_EVENT_PATH"], data, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// config commits warden.toml to the base revision: the Action reads its
// configuration from there, never from the workspace.
func (h *actionHarness) config(toml string) {
	h.t.Helper()
	h.commitBase(map[string]string{"warden.toml": toml})
}

func (h *actionHarness) run(ctx context.Context, args ...string) result {
	h.t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, strings.NewReader(""), &stdout, &stderr, func(k string) string { return h.env[k] })
	return result{code, stdout.String(), stderr.String()}
}

// outputs reads the step outputs warden wrote to GITHUB_OUTPUT.
func (h *actionHarness) outputs() map[string]string {
	h.t.Helper()
	data, err := os.ReadFile(h.env["GITHUB_OUTPUT"])
	if err != nil {
		h.t.Fatalf("no step outputs: %v", err)
	}
	out := map[string]string{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		if name, delim, ok := strings.Cut(lines[i], "<<"); ok {
			var value []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				value = append(value, lines[i])
			}
			out[name] = strings.Join(value, "\n")
		} else if name, value, ok := strings.Cut(lines[i], "="); ok {
			out[name] = value
		}
	}
	return out
}

func (h *actionHarness) summary() string {
	data, _ := os.ReadFile(h.env["GITHUB_STEP_SUMMARY"])
	return string(data)
}

// checkRun returns the only check run, failing unless there is exactly one.
func (h *actionHarness) checkRun() fakegithub.CheckRun {
	h.t.Helper()
	runs := h.gh.CheckRuns()
	if len(runs) != 1 {
		h.t.Fatalf("%d check runs, want 1: %+v", len(runs), runs)
	}
	return runs[0]
}

func TestActionCompleteWithFindings(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	res := h.run(context.Background())
	if res.code != exitFindings {
		t.Fatalf("exit = %d, want %d (high findings block); stderr:\n%s", res.code, exitFindings, res.stderr)
	}
	cr := h.checkRun()
	if cr.Name != "warden" || cr.HeadSHA != h.pr.HeadSHA || cr.Status != "completed" || cr.Conclusion != "failure" {
		t.Errorf("check run = %s on %s, %s/%s; want warden on the head SHA, completed/failure", cr.Name, cr.HeadSHA, cr.Status, cr.Conclusion)
	}
	if !strings.HasPrefix(cr.Title, "Complete: ") {
		t.Errorf("check run title = %q, want it to start with Complete:", cr.Title)
	}
	if created := h.gh.RequestsTo(fakegithub.RouteCreateCheckRun); len(created) != 1 || !strings.Contains(string(created[0].Body), `"in_progress"`) {
		t.Errorf("check run not created in_progress first: %+v", created)
	}
	out := h.outputs()
	if out["outcome"] != "complete" || out["findings-count"] == "0" || out["high-count"] != out["findings-count"] || out["planned"] != out["reviewed"] {
		t.Errorf("outputs = %v", out)
	}
	if len(cr.Annotations) != atoi(t, out["findings-count"]) {
		t.Errorf("%d annotations, want one per finding (%s)", len(cr.Annotations), out["findings-count"])
	}
	comments := h.gh.ReviewComments(testPR)
	reviews := h.gh.Reviews(testPR)
	if len(reviews) != 1 || reviews[0].Event != "COMMENT" || reviews[0].CommitID != h.pr.HeadSHA {
		t.Fatalf("reviews = %+v, want one COMMENT review on the head SHA", reviews)
	}
	if len(comments) == 0 {
		t.Errorf("no inline comments")
	}
	for _, c := range comments {
		if !strings.Contains(c.Body, "<!-- warden:fp:") {
			t.Errorf("comment on %s:%d has no fingerprint marker", c.Path, c.Line)
		}
	}
	text, records := splitRecords(cr.Summary)
	if s := h.summary(); !strings.Contains(s, "## warden: Complete") || strings.TrimSpace(s) != strings.TrimSpace(text) || len(records) != 1 || !strings.Contains(records[0], " sig=") {
		t.Errorf("job summary does not mirror the check run summary, or the check run has no sealed state:\n%.300s", s)
	}
	data, err := os.ReadFile(out["report-file"])
	if err != nil || !bytes.Contains(data, []byte(`"schema": "warden.report/v1"`)) {
		t.Errorf("report file %q: %v\n%.200s", out["report-file"], err, data)
	}
	// A re-run on the same head posts no duplicate.
	before := len(h.gh.ReviewComments(testPR))
	res = h.run(context.Background())
	if res.code != exitFindings {
		t.Fatalf("re-run exit = %d; stderr:\n%s", res.code, res.stderr)
	}
	if after := len(h.gh.ReviewComments(testPR)); after != before {
		t.Errorf("re-run posted %d new comments, want 0", after-before)
	}
	// The runner masks what follows an ::add-mask:: line; nothing else may
	// print a secret.
	var logged []string
	for _, l := range strings.Split(res.stdout, "\n") {
		if !strings.HasPrefix(l, "::add-mask::") {
			logged = append(logged, l)
		}
	}
	for _, secret := range []string{fakegithub.DefaultToken, "sk-model-key-123456"} {
		if strings.Contains(strings.Join(logged, "\n")+res.stderr+h.summary(), secret) {
			t.Errorf("a secret appears in warden's output")
		}
		for _, r := range h.gh.Requests() {
			if bytes.Contains(r.Body, []byte(secret)) {
				t.Errorf("a secret appears in a GitHub request to %s", r.Route)
			}
		}
	}
	if !strings.Contains(res.stdout, "::add-mask::"+fakegithub.DefaultToken) || !strings.Contains(res.stdout, "::add-mask::sk-model-key-123456") {
		t.Errorf("the token and the model key are not masked in the log")
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

func TestActionProviderUnavailable(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.model.status = http.StatusUnauthorized
	res := h.run(context.Background())
	if res.code != exitOK {
		t.Fatalf("exit = %d, want 0 (incomplete, fail-on-incomplete unset); stderr:\n%s", res.code, res.stderr)
	}
	cr := h.checkRun()
	if cr.Conclusion != "failure" || !strings.HasPrefix(cr.Title, "Provider unavailable: 0 of ") || !strings.Contains(cr.Title, "auth") {
		t.Errorf("check run = %s %q; want failure, Provider unavailable ... (auth)", cr.Conclusion, cr.Title)
	}
	if _, passes, _ := h.gh.RequiredCheck("warden", h.pr.HeadSHA); passes {
		t.Errorf("a provider-unavailable review passes the required check by default")
	}
	if got := h.outputs()["outcome"]; got != "provider-unavailable" {
		t.Errorf("outcome output = %q", got)
	}
	if len(h.gh.Reviews(testPR)) != 0 {
		t.Errorf("a review was posted with nothing reviewed")
	}

	// A team that wants incomplete reviews to pass chooses neutral.
	h.env["INPUT_FAIL_ON_INCOMPLETE"] = "true"
	h.env["INPUT_INCOMPLETE_CONCLUSION"] = "neutral"
	h.gh = fakegithub.New(testOwner, testRepo)
	h.gh.AddPullRequest(h.pr)
	h.env["GITHUB_API_URL"] = h.gh.Start(t).URL
	if res := h.run(context.Background()); res.code != exitIncomplete {
		t.Errorf("exit with fail-on-incomplete = %d, want %d", res.code, exitIncomplete)
	}
	if cr, passes, _ := h.gh.RequiredCheck("warden", h.pr.HeadSHA); cr.Conclusion != "neutral" || !passes {
		t.Errorf("with incomplete-conclusion neutral: %s, passes required checks %v; want neutral, passing", cr.Conclusion, passes)
	}
}

func TestActionPartialWhenOneFileTimesOut(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "low")
	// The model never answers for store/query.go; everything else is fine.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`store/query.go`)) {
			<-r.Context().Done()
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.model.serve(w, r)
	}))
	t.Cleanup(slow.Close)
	h.env["WARDEN_BASE_URL"] = slow.URL + "/v1"
	h.config("[review]\nbudget = \"20s\"\nhunk_budget = \"1s\"\nrequest_timeout = \"300ms\"\nmin_attempt = \"100ms\"\nreserve = \"1s\"\n")
	res := h.run(context.Background())
	if res.code != exitOK {
		t.Fatalf("exit = %d, want 0; stderr:\n%s", res.code, res.stderr)
	}
	cr := h.checkRun()
	if cr.Conclusion != "failure" || !strings.HasPrefix(cr.Title, "Partial: ") || !strings.Contains(cr.Title, "timed out") {
		t.Errorf("check run = %s %q; want failure, Partial: ... timed out", cr.Conclusion, cr.Title)
	}
	if !strings.Contains(cr.Summary, "store/query.go") {
		t.Errorf("summary does not name the file that was not reviewed")
	}
	if len(h.gh.ReviewComments(testPR)) == 0 {
		t.Errorf("findings of the reviewed files were not posted")
	}
}

func TestActionManyFindings(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "medium")
	// 50 findings per answer on the changed lines of each chunk.
	h.model.content = ""
	h.model.findingsPerAnswer = 50
	h.env["INPUT_MAX_FINDINGS"] = "0"
	h.env["INPUT_SKILLS"] = "code-review,security-review"
	res := h.run(context.Background())
	if res.code != exitOK {
		t.Fatalf("exit = %d, want 0 (medium does not block); stderr:\n%s", res.code, res.stderr)
	}
	n := atoi(t, h.outputs()["findings-count"])
	if n < 150 {
		t.Fatalf("findings-count = %d, want at least 150", n)
	}
	cr := h.checkRun()
	if len(cr.Annotations) != n {
		t.Errorf("%d annotations, want %d", len(cr.Annotations), n)
	}
	for _, r := range h.gh.RequestsTo(fakegithub.RouteUpdateCheckRun) {
		if r.Status >= 300 {
			t.Errorf("an annotation update was rejected with %d", r.Status)
		}
	}
	comments := h.gh.ReviewComments(testPR)
	reviews := h.gh.Reviews(testPR)
	if len(reviews) != 1 {
		t.Fatalf("%d reviews, want 1", len(reviews))
	}
	// Every finding is in the check run; on the pull request each is an
	// inline comment or in warden's findings comment (the one place for
	// those past the inline limit), which says how many it holds.
	var posted, present, body, omitted, below, ledger int
	for _, l := range strings.Split(res.stderr, "\n") {
		if strings.HasPrefix(l, "warden: review posted:") {
			fmt.Sscanf(l, "warden: review posted: %d comments, %d already present, %d in the review body, %d left out of the body for length (they are in the check run), %d below report-on, %d in warden's findings comment", &posted, &present, &body, &omitted, &below, &ledger)
		}
	}
	ics := h.gh.IssueComments(testPR)
	if posted != len(comments) || body != 0 || posted+ledger != n || below != 0 || len(ics) != 1 ||
		!strings.Contains(ics[0].Body, fmt.Sprintf("%d open findings", min(ledger, ghbot.MaxLedgerEntries))) ||
		(ledger > ghbot.MaxLedgerEntries && !strings.Contains(ics[0].Body, fmt.Sprintf("%d more findings are not listed here", ledger-ghbot.MaxLedgerEntries))) {
		t.Errorf("%d comments, %d in the body, %d in the findings comment (log: %d/%d/%d), %d conversation comments; want every one of %d findings inline or in the one findings comment", len(comments), body, ledger, posted, body, ledger, len(ics), n)
	}
}

func TestActionForkReadOnlyToken(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.env["INPUT_GITHUB_TOKEN"] = fakegithub.DefaultReadOnlyToken
	res := h.run(context.Background())
	if res.code != exitFindings {
		t.Fatalf("exit = %d, want %d; stderr:\n%s", res.code, exitFindings, res.stderr)
	}
	if runs := h.gh.CheckRuns(); len(runs) != 0 {
		t.Errorf("check runs created with a read-only token: %+v", runs)
	}
	if !strings.Contains(res.stdout, "::error ") && !strings.Contains(res.stdout, "::error file=") {
		t.Errorf("no workflow-command annotations in the log:\n%s", res.stdout)
	}
	if !strings.Contains(res.stdout, "read-only token") {
		t.Errorf("the log does not say why results went to annotations")
	}
	if !strings.Contains(h.summary(), "## warden: Complete") {
		t.Errorf("no job summary")
	}
}

func TestActionForkWithoutSecrets(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.env["INPUT_GITHUB_TOKEN"] = fakegithub.DefaultReadOnlyToken
	delete(h.env, "WARDEN_API_KEY")
	h.config("[[routes]]\nname = \"primary\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\napi_key_env = \"OPENROUTER_API_KEY\"\n")
	h.event("opened", func(pr map[string]any) {
		pr["head"].(map[string]any)["repo"] = map[string]any{"full_name": "mallory/widgets"}
	})
	res := h.run(context.Background())
	if res.code != exitOK {
		t.Fatalf("exit = %d, want 0; stderr:\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stdout, "::warning::warden did not review this pull request: it comes from a fork") {
		t.Errorf("no warning saying the fork was not reviewed:\n%s", res.stdout)
	}
	if out := h.outputs(); out["outcome"] != "skipped" {
		t.Errorf("outcome = %q, want skipped", out["outcome"])
	}
	if !strings.Contains(h.summary(), "Nothing was reviewed") {
		t.Errorf("job summary does not say nothing was reviewed:\n%s", h.summary())
	}
	if h.model.calls() != 0 {
		t.Errorf("model called without a key")
	}
}

func TestActionCancelled(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The first answer comes back; the second never does, and the run is
	// cancelled while waiting for it, as SIGTERM would.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			h.model.serve(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		cancel()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	h.env["WARDEN_BASE_URL"] = srv.URL + "/v1"
	h.config("[review]\nmax_concurrency = 1\n")
	res := h.run(ctx)
	if res.code != exitInterrupted {
		t.Fatalf("exit = %d, want %d; stderr:\n%s", res.code, exitInterrupted, res.stderr)
	}
	cr := h.checkRun()
	if cr.Status != "completed" || cr.Conclusion != "cancelled" || !strings.HasPrefix(cr.Title, "Cancelled: 1 of ") {
		t.Errorf("check run = %s/%s %q; want completed/cancelled, Cancelled: 1 of ...", cr.Status, cr.Conclusion, cr.Title)
	}
	if len(h.gh.ReviewComments(testPR))+len(h.gh.Reviews(testPR)) == 0 {
		t.Errorf("the finished item's finding was not posted")
	}
}

func TestActionSecondaryRateLimit(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.gh.Fail(fakegithub.RouteCreateReview, fakegithub.Fault{Status: http.StatusForbidden, RetryAfter: "1"})
	res := h.run(context.Background())
	if res.code != exitFindings {
		t.Fatalf("exit = %d; stderr:\n%s", res.code, res.stderr)
	}
	reqs := h.gh.RequestsTo(fakegithub.RouteCreateReview)
	if len(reqs) != 2 || reqs[0].Status != http.StatusForbidden || reqs[1].Status != http.StatusOK {
		var statuses []int
		for _, r := range reqs {
			statuses = append(statuses, r.Status)
		}
		t.Errorf("create-review statuses = %v, want [403 200]: the rate limit waited out and retried once", statuses)
	}
	if len(h.gh.ReviewComments(testPR)) == 0 {
		t.Errorf("no comments after the rate limit")
	}
}

func TestActionSkipsDraftsAndBots(t *testing.T) {
	t.Parallel()
	for name, edit := range map[string]func(map[string]any){
		"draft": func(pr map[string]any) { pr["draft"] = true },
		"bot":   func(pr map[string]any) { pr["user"] = map[string]any{"login": "dependabot[bot]", "type": "Bot"} },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newActionHarness(t, "high")
			h.event("opened", edit)
			res := h.run(context.Background())
			if res.code != exitOK {
				t.Fatalf("exit = %d; stderr:\n%s", res.code, res.stderr)
			}
			cr := h.checkRun()
			if cr.Conclusion != "skipped" || !strings.HasPrefix(cr.Title, "Skipped: ") {
				t.Errorf("check run = %s %q, want skipped with a reason", cr.Conclusion, cr.Title)
			}
			if h.model.calls() != 0 {
				t.Errorf("%d model calls for a skipped pull request", h.model.calls())
			}
		})
	}
}

func TestActionFilesAPIWithoutCheckout(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.env["GITHUB_WORKSPACE"] = t.TempDir() // no checkout
	res := h.run(context.Background())
	if res.code != exitFindings {
		t.Fatalf("exit = %d; stderr:\n%s", res.code, res.stderr)
	}
	if len(h.gh.RequestsTo(fakegithub.RouteListFiles)) == 0 {
		t.Errorf("the files API was not used")
	}
	if len(h.gh.ReviewComments(testPR)) == 0 {
		t.Errorf("no inline comments from the files-API diff")
	}
}

func TestActionWorkflowDispatch(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "low")
	h.env["GITHUB_EVENT_NAME"] = "workflow_dispatch"
	if err := os.WriteFile(h.env["GITHUB_EVENT_PATH"], []byte(`{"inputs":{"pr-number":"7"},"ref":"refs/heads/main"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res := h.run(context.Background())
	if res.code != exitOK {
		t.Fatalf("exit = %d; stderr:\n%s", res.code, res.stderr)
	}
	if cr := h.checkRun(); cr.HeadSHA != h.pr.HeadSHA || cr.Conclusion != "neutral" {
		t.Errorf("check run on %s, %s; want the PR head, neutral (low findings)", cr.HeadSHA, cr.Conclusion)
	}
}

func TestActionBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		set     map[string]string
		mention string
	}{
		{"bad fail-on", map[string]string{"INPUT_FAIL_ON": "urgent"}, "fail-on"},
		{"bad boolean", map[string]string{"INPUT_SKIP_DRAFTS": "yes"}, "skip-drafts"},
		{"success for incomplete", map[string]string{"INPUT_INCOMPLETE_CONCLUSION": "success"}, "incomplete-conclusion"},
		{"unsupported event", map[string]string{"GITHUB_EVENT_NAME": "push"}, "push"},
		{"no repository", map[string]string{"GITHUB_REPOSITORY": ""}, "GITHUB_REPOSITORY"},
		{"no token", map[string]string{"INPUT_GITHUB_TOKEN": ""}, "github-token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newActionHarness(t, "high")
			for k, v := range tt.set {
				h.env[k] = v
			}
			res := h.run(context.Background())
			if res.code != exitUsage || !strings.Contains(lastLine(res.stderr), tt.mention) {
				t.Errorf("exit %d, stderr %q; want %d naming %s", res.code, lastLine(res.stderr), exitUsage, tt.mention)
			}
		})
	}
}

// splitRecords is a check run's summary less the hidden records that end
// it (warden's sealed records for the next run, one a line), and those
// records: the job summary is the rest.
func splitRecords(summary string) (text string, records []string) {
	lines := strings.Split(strings.TrimRight(summary, "\n"), "\n")
	for len(lines) > 0 && strings.HasPrefix(lines[len(lines)-1], "<!-- warden:") {
		records = append([]string{lines[len(lines)-1]}, records...)
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n"), records
}
