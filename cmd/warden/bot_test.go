package main

import (
	"bytes"
	"cmp"
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

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/internal/fakeopenai"
)

// commentEvent writes an issue_comment event for a comment on the pull
// request, starting from GitHub's own example payload (which is on an
// issue) with the pull request (its number and author, as the fake
// answers them), the body and the author's association set.
func (h *actionHarness) commentEvent(id int64, body, login, association string) {
	h.t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "internal", "fakegithub", "testdata", "webhooks", "issue_comment", "01-created.json"))
	if err != nil {
		h.t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		h.t.Fatal(err)
	}
	issue := ev["issue"].(map[string]any)
	issue["number"] = testPR
	issue["user"].(map[string]any)["login"] = cmp.Or(h.pr.User, "octocat")
	issue["pull_request"] = map[string]any{"url": "https://api.github.com/repos/" + testOwner + "/" + testRepo + "/pulls/7"}
	c := ev["comment"].(map[string]any)
	c["id"], c["body"], c["author_association"] = id, body, association
	c["user"].(map[string]any)["login"] = login
	data, _ := json.Marshal(ev)
	if err := os.WriteFile(h.env["GITHUB_EVENT_PATH"], data, 0o644); err != nil {
		h.t.Fatal(err)
	}
	h.env["GITHUB_EVENT_NAME"] = "issue_comment"
}

// reactions are the contents of warden's reactions on a comment, in order.
func (h *actionHarness) reactions(id int64) []string {
	var out []string
	for _, r := range h.gh.Reactions(fakegithub.OnIssueComment, id) {
		out = append(out, r.Content)
	}
	return out
}

// TestBotResume: a review where the model route is dead for one file ends
// partial; a member's `/warden resume` comment then calls the model only
// for that file's item (the others come from the results cache), ends
// complete, says in the check run how many came from the cache, and reacts
// on the comment at the start and the end.
func TestBotResume(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.gh.SetRole("alice", fakegithub.RoleWrite) // a member: the commands that act need write access
	h.config("[retry]\nmax_per_route = 0\n")
	var calls atomic.Int64
	dead := atomic.Bool{}
	dead.Store(true)
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		calls.Add(1)
		if dead.Load() && bytes.Contains(body, []byte("store/query.go")) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(503)
			w.Write([]byte(`{"error":{"message":"no healthy upstream","type":"server_error"}}`))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.model.serve(w, r)
	}))
	t.Cleanup(model.Close)
	h.env["WARDEN_BASE_URL"] = model.URL + "/v1"

	res := h.runOnGitHub(context.Background(), prRun)
	first := h.checkRun()
	if res.code != exitFindings || !strings.HasPrefix(first.Title, "Partial: ") {
		t.Fatalf("first run: exit %d, check run %q; stderr:\n%s", res.code, first.Title, res.stderr)
	}
	planned := calls.Load()

	// The route is back; a member asks to resume.
	dead.Store(false)
	calls.Store(0)
	id := h.gh.AddIssueComment(testPR, fakegithub.IssueComment{Body: "/warden resume", User: "alice", Association: "MEMBER"})
	h.commentEvent(id, "/warden resume", "alice", "MEMBER")
	res = h.runOnGitHub(context.Background(), commentRun)
	if res.code != exitFindings {
		t.Fatalf("resume: exit %d, want 1 (complete, high findings); stderr:\n%s", res.code, res.stderr)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("resume made %d model calls, want 1 (only the unfinished item; the first run made %d)", got, planned)
	}
	runs := h.gh.CheckRuns()
	last := runs[len(runs)-1]
	if len(runs) != 2 || !strings.HasPrefix(last.Title, "Complete") || last.Conclusion != "failure" {
		t.Errorf("resume's check run: %d runs, last %s %q; want a second, complete run (failure: high findings)", len(runs), last.Conclusion, last.Title)
	}
	want := "**" + itoa(int(planned)-1) + " from earlier runs:** of the " + itoa(int(planned)) + " reviewed items"
	if !strings.Contains(last.Summary, want) {
		t.Errorf("resume's check run summary does not say %q:\n%.600s", want, last.Summary)
	}
	if got := h.reactions(id); strings.Join(got, ",") != "eyes,rocket" {
		t.Errorf("reactions on the command = %v, want eyes then rocket", got)
	}
	report, _ := os.ReadFile(h.outputs()["report-file"])
	if !bytes.Contains(report, []byte(`"cached": `+itoa(int(planned)-1))) {
		t.Errorf("the JSON report does not count the cached items:\n%.400s", report)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestBotUntrustedCommand: a contributor's `/warden review` makes no model
// call and no write but the reply saying why: no check run, no review, no
// reaction.
func TestBotUntrustedCommand(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	id := h.gh.AddIssueComment(testPR, fakegithub.IssueComment{Body: "/warden review", User: "mallory", Association: "CONTRIBUTOR"})
	h.commentEvent(id, "/warden review", "mallory", "CONTRIBUTOR")
	before := len(h.gh.Requests())
	res := h.run(context.Background())
	if res.code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", res.code, res.stderr)
	}
	if n := h.model.calls(); n != 0 {
		t.Errorf("%d model calls, want none", n)
	}
	var writes []string
	for _, r := range h.gh.Requests()[before:] {
		if r.Method != "GET" {
			writes = append(writes, r.Method+" "+r.Path)
		}
	}
	if len(writes) != 1 || writes[0] != "POST /repos/acme/widgets/issues/7/comments" {
		t.Errorf("writes = %v, want only the reply", writes)
	}
	cs := h.gh.IssueComments(testPR)
	if reply := cs[len(cs)-1].Body; !strings.Contains(reply, "@mallory cannot run `/warden` commands") || !strings.Contains(reply, "CONTRIBUTOR") {
		t.Errorf("reply = %q", reply)
	}
	if len(h.gh.CheckRuns()) != 0 || len(h.gh.Reviews(testPR)) != 0 {
		t.Errorf("an untrusted command created a check run or a review")
	}
}

// TestBotHelpAndDismiss: `/warden help` replies with the commands;
// `/warden dismiss` as a reply to a finding records the dismissal, and the
// next push's review leaves that finding out and counts it suppressed.
func TestBotHelpAndDismiss(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.gh.SetRole("alice", fakegithub.RoleAdmin) // the owner: the commands that act need write access
	if res := h.run(context.Background()); res.code != exitFindings {
		t.Fatalf("first review: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	id := h.gh.AddIssueComment(testPR, fakegithub.IssueComment{Body: "/warden help", User: "alice", Association: "OWNER"})
	h.commentEvent(id, "/warden help", "alice", "OWNER")
	if res := h.run(context.Background()); res.code != exitOK {
		t.Fatalf("help: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	cs := h.gh.IssueComments(testPR)
	if !strings.Contains(cs[len(cs)-1].Body, "`/warden resume`") || strings.Join(h.reactions(id), ",") != "eyes,rocket" {
		t.Errorf("help reply %q, reactions %v", cs[len(cs)-1].Body, h.reactions(id))
	}

	// alice dismisses a finding, replying to its comment (one on code the
	// pushes below leave as it is: they rewrite README.md).
	target := rootComments(h)[0]
	reply := h.gh.AddReviewComment(testPR, fakegithub.ReviewComment{Path: target.Path, Line: target.Line, Body: "/warden dismiss intended", User: "alice", InReplyTo: target.ID})
	h.reviewCommentEvent(reply, target.ID, "/warden dismiss intended", "alice", "OWNER")
	if res := h.run(context.Background()); res.code != exitOK {
		t.Fatalf("dismiss: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	last := h.gh.ReviewComments(testPR)
	if rec := last[len(last)-1]; rec.InReplyTo != target.ID || !strings.Contains(rec.Body, "Dismissed by @alice: intended.") || !strings.Contains(rec.Body, "<!-- warden:dismissed:") {
		t.Errorf("dismissal record = %+v", rec)
	}

	// Two more pushes: the finding is suppressed and counted each time.
	for push := range 2 {
		h.env["GITHUB_EVENT_NAME"] = "pull_request"
		h.commitHead(map[string]string{"README.md": "# widgets\n\nNow with sessions, take " + itoa(push+2) + ".\n"})
		if res := h.run(context.Background()); res.code > exitFindings {
			t.Fatalf("push %d: exit %d; stderr:\n%s", push+1, res.code, res.stderr)
		}
		runs := h.gh.CheckRuns()
		cr := runs[len(runs)-1]
		if !strings.Contains(cr.Summary, "**Suppressed:** 1 finding dismissed") {
			t.Errorf("push %d: check run summary does not count the suppressed finding:\n%.800s", push+1, cr.Summary)
		}
		report, _ := os.ReadFile(h.outputs()["report-file"])
		if !bytes.Contains(report, []byte(`"suppressed": 1`)) {
			t.Errorf("push %d: report does not count the suppressed finding", push+1)
		}
		if strings.Count(bodies(h.gh.ReviewComments(testPR)), "warden:fp:v3:"+fingerprintIn(target.Body)) != 1 {
			t.Errorf("push %d: the dismissed finding was posted again", push+1)
		}
	}
}

// reviewCommentEvent writes a pull_request_review_comment event from
// GitHub's example, for a reply (id) to the review comment root on the
// harness's pull request (its number, author and head repository).
func (h *actionHarness) reviewCommentEvent(id, root int64, body, login, association string) {
	h.t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "internal", "fakegithub", "testdata", "webhooks", "pull_request_review_comment", "01-created.json"))
	if err != nil {
		h.t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		h.t.Fatal(err)
	}
	pr := ev["pull_request"].(map[string]any)
	pr["number"] = testPR
	pr["user"].(map[string]any)["login"] = cmp.Or(h.pr.User, "octocat")
	head := cmp.Or(h.pr.HeadRepo, testOwner+"/"+testRepo)
	pr["head"].(map[string]any)["repo"].(map[string]any)["full_name"] = head
	c := ev["comment"].(map[string]any)
	c["id"], c["in_reply_to_id"], c["body"], c["author_association"] = id, root, body, association
	c["user"].(map[string]any)["login"] = login
	data, _ := json.Marshal(ev)
	if err := os.WriteFile(h.env["GITHUB_EVENT_PATH"], data, 0o644); err != nil {
		h.t.Fatal(err)
	}
	h.env["GITHUB_EVENT_NAME"] = "pull_request_review_comment"
}

func bodies(cs []fakegithub.ReviewComment) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.Body + "\n")
	}
	return b.String()
}

// fingerprintIn is the fingerprint of the marker in body, without its
// version ("v2:").
func fingerprintIn(body string) string {
	_, rest, _ := strings.Cut(body, "warden:fp:")
	mark, _, _ := strings.Cut(strings.TrimPrefix(rest, "v3:"), " ")
	fp, _, _ := strings.Cut(mark, ":") // the twin follows
	return fp
}

// pushEvent writes a synchronize event whose "before" is the previous
// head, as GitHub sends it after a push.
func (h *actionHarness) pushEvent(before string) {
	h.t.Helper()
	h.event("synchronize", nil)
	var ev map[string]any
	raw, _ := os.ReadFile(h.env["GITHUB_EVENT_PATH"])
	json.Unmarshal(raw, &ev)
	ev["before"], ev["after"] = before, h.pr.HeadSHA
	data, _ := json.Marshal(ev)
	os.WriteFile(h.env["GITHUB_EVENT_PATH"], data, 0o644)
	h.env["GITHUB_EVENT_NAME"] = "pull_request"
}

// tenFiles makes the harness's pull request change ten files: its three,
// and seven new ones.
func tenFiles(h *actionHarness) {
	h.t.Helper()
	for i := range 7 {
		h.repo.write("pkg"+itoa(i)+"/f.go", "package pkg\n\n"+numbered(30, "// pkg"))
	}
	h.repo.git("add", "-A")
	h.repo.git("commit", "-qm", "seven more files")
	h.refreshPR()
	h.event("opened", nil)
}

func (h *actionHarness) lastCheckRun() fakegithub.CheckRun {
	runs := h.gh.CheckRuns()
	return runs[len(runs)-1]
}

// TestBotIncrementalPush: a ten-file pull request is reviewed whole; a push
// that changes one line of one file reviews only that file's changed hunk
// (one model call), and a finding whose lines the push reverted has its
// thread resolved with a reply naming the commit; a force-push reviews the
// whole change again.
func TestBotIncrementalPush(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	tenFiles(h)
	if n := len(h.pr.Files); n != 10 {
		t.Fatalf("%d files, want 10", n)
	}
	if res := h.run(context.Background()); res.code != exitFindings {
		t.Fatalf("first review: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	whole := h.model.calls()
	if whole < 10 {
		t.Fatalf("the whole change took %d model calls, want one per chunk (10 or more)", whole)
	}

	// Push 1: one line of pkg3/f.go changes.
	before := h.pr.HeadSHA
	h.repo.write("pkg3/f.go", strings.Replace("package pkg\n\n"+numbered(30, "// pkg"), "// pkg line 12\n", "// pkg line 12 edited\n", 1))
	h.repo.git("commit", "-qam", "edit pkg3")
	h.refreshPR()
	h.pushEvent(before)
	if res := h.run(context.Background()); res.code > exitFindings {
		t.Fatalf("push: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	if got := h.model.calls() - whole; got != 1 {
		t.Errorf("the push made %d model calls, want 1 (pkg3/f.go's hunk only)", got)
	}
	cr := h.lastCheckRun()
	if !strings.Contains(cr.Summary, "**Incremental review:** only what changed since "+before[:7]) {
		t.Errorf("push's check run does not say it is incremental:\n%.600s", cr.Summary)
	}

	// Push 2: revert session.go's line 70 change: that finding's lines
	// left the diff, so its thread is resolved.
	var fixed fakegithub.ReviewComment
	for _, c := range h.gh.ReviewComments(testPR) {
		if c.Path == "auth/session.go" && c.Line > 50 {
			fixed = c
		}
	}
	if fixed.ID == 0 {
		t.Fatalf("no finding on session.go's second hunk: %+v", h.gh.ReviewComments(testPR))
	}
	before = h.pr.HeadSHA
	session := strings.Replace("package auth\n\n"+numbered(80, "// session"), "// session line 10\n", "// session line 10 changed\n", 1)
	h.repo.write("auth/session.go", session)
	h.repo.git("commit", "-qam", "revert line 70")
	h.refreshPR()
	h.pushEvent(before)
	if res := h.run(context.Background()); res.code > exitFindings {
		t.Fatalf("revert push: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	h.checkFixed(fixed.ID)
	if cr := h.lastCheckRun(); !strings.Contains(cr.Summary, "**Resolved:** 1 finding's thread fixed in "+h.pr.HeadSHA[:7]) {
		t.Errorf("check run does not count the resolved thread:\n%.800s", cr.Summary)
	}
	// A force-push: the branch is rebuilt from main; the last head is no
	// longer an ancestor, so the whole change is reviewed.
	before, calls := h.pr.HeadSHA, h.model.calls()
	h.repo.git("checkout", "-q", "main")
	h.repo.git("checkout", "-q", "-B", "feature")
	for i := range 10 {
		h.repo.write("pkg"+itoa(i)+"/f.go", "package pkg\n\n"+numbered(30, "// rewritten"))
	}
	h.repo.git("add", "-A")
	h.repo.git("commit", "-qm", "rewritten")
	h.refreshPR()
	h.pushEvent(before)
	if res := h.run(context.Background()); res.code > exitFindings {
		t.Fatalf("force-push: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	if got := h.model.calls() - calls; got != len(h.pr.Files) {
		t.Errorf("the force-push made %d model calls, want %d (the whole change)", got, len(h.pr.Files))
	}
	if cr := h.lastCheckRun(); !strings.Contains(cr.Summary, "force-push") {
		t.Errorf("force-push's check run does not say the whole change was reviewed:\n%.600s", cr.Summary)
	}
}

// copyTree copies the files under src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755)
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBotForkCacheCannotFeedPrivilegedRun: a fork's run fills its cache
// with "no findings" for every item, and an attacker plants, under the
// privileged run's own keys (which anyone can compute), entries that say
// the same but are not signed with the privileged run's secret. The
// privileged run (pull_request_target) with both in its cache directory
// uses none of them: it calls the model for every item and posts exactly
// the model's findings.
func TestBotForkCacheCannotFeedPrivilegedRun(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	var clean atomic.Bool
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if clean.Load() {
			body, _ := io.ReadAll(r.Body)
			var req chatRequest
			json.Unmarshal(body, &req)
			fakeopenai.Serve(w, r.Context(), fakeopenai.Answer{}, fakeopenai.Wire{Model: req.Model, Content: `{"findings":[]}`,
				PromptTokens: promptChars(req) / 4, CompletionTokens: 5})
			return
		}
		h.model.serve(w, r)
	}))
	t.Cleanup(model.Close)
	h.env["WARDEN_BASE_URL"] = model.URL + "/v1"
	clean.Store(true)

	// The fork's own run, in its own cache.
	forkDir, forgedDir, privDir := t.TempDir(), t.TempDir(), t.TempDir()
	h.env["WARDEN_RESULTS_CACHE_DIR"] = forkDir
	h.event("opened", func(pr map[string]any) {
		pr["head"].(map[string]any)["repo"] = map[string]any{"full_name": "mallory/widgets", "name": testRepo, "owner": map[string]any{"login": "mallory"}}
	})
	if res := h.run(context.Background()); res.code != exitOK {
		t.Fatalf("fork run: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	// The forger: the trusted domain's keys, no secret.
	h.env["WARDEN_RESULTS_CACHE_DIR"] = forgedDir
	h.event("opened", nil)
	if res := h.run(context.Background()); res.code != exitOK {
		t.Fatalf("forging run: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	copyTree(t, filepath.Join(forkDir, "fork"), filepath.Join(privDir, "fork"))
	copyTree(t, filepath.Join(forgedDir, "trusted"), filepath.Join(privDir, "trusted"))
	if entries, _ := filepath.Glob(filepath.Join(privDir, "trusted", "*", "*")); len(entries) == 0 {
		t.Fatalf("no forged entries planted")
	}

	clean.Store(false)
	before := h.model.calls()
	reviewsBefore := len(h.gh.ReviewComments(testPR))
	h.env["WARDEN_RESULTS_CACHE_DIR"] = privDir
	h.env["INPUT_RESULTS_CACHE_SECRET"] = "privileged-secret-0123456789"
	h.env["GITHUB_EVENT_NAME"] = "pull_request_target"
	h.event("opened", nil)
	res := h.run(context.Background())
	if res.code != exitFindings {
		t.Fatalf("privileged run: exit %d, want 1 (the model's high findings); stderr:\n%s", res.code, res.stderr)
	}
	report, _ := os.ReadFile(h.outputs()["report-file"])
	var rep struct {
		Summary struct{ Planned, Reviewed, Cached, Findings int }
	}
	json.Unmarshal(report, &rep)
	if got := h.model.calls() - before; got != rep.Summary.Planned || rep.Summary.Cached != 0 {
		t.Errorf("privileged run: %d model calls for %d items, %d cached; want a call for every item, none cached", got, rep.Summary.Planned, rep.Summary.Cached)
	}
	if rep.Summary.Findings == 0 || len(h.gh.ReviewComments(testPR))-reviewsBefore != rep.Summary.Findings {
		t.Errorf("privileged run posted %d comments for %d findings; want the model's findings posted", len(h.gh.ReviewComments(testPR))-reviewsBefore, rep.Summary.Findings)
	}
	// The secret is only ever named in its own ::add-mask:: command.
	out := strings.ReplaceAll(res.stdout+res.stderr, "::add-mask::privileged-secret-0123456789\n", "")
	if strings.Contains(out, "privileged-secret-0123456789") {
		i := strings.Index(out, "privileged-secret-0123456789")
		t.Errorf("the cache secret appears in the output: %q", out[max(0, i-200):i+40])
	}
}

// TestBotWriteBudgetBigPullRequest: a 300-file pull request with 400
// findings stays inside GitHub's secondary limits on content-creating
// requests (the fake GitHub enforces them) and loses nothing: every
// finding is on the pull request (inline or in the review body) or in the
// check run's annotations, and all are in the report file.
func TestBotWriteBudgetBigPullRequest(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "medium")
	h.gh.ContentLimits = true
	for i := range 297 {
		h.repo.write(fmt.Sprintf("big/f%03d.go", i), "package big\n\n"+numbered(6, "// big"))
	}
	h.repo.git("add", "-A")
	h.repo.git("commit", "-qm", "297 more files")
	h.refreshPR()
	h.event("opened", nil)
	if n := len(h.pr.Files); n != 300 {
		t.Fatalf("%d files, want 300", n)
	}
	h.model.findingsPerAnswer = 2
	h.config("[review]\nmax_findings = 400\nmax_concurrency = 16\n")
	res := h.run(context.Background())
	if res.code != exitOK {
		t.Fatalf("exit %d; stderr:\n%.2000s", res.code, res.stderr)
	}
	times, refused := h.gh.ContentCreated()
	if refused != 0 || len(times) > fakegithub.ContentPerMinute {
		t.Errorf("%d content-creating requests, %d refused by GitHub's limits; want few and none refused", len(times), refused)
	}
	report, _ := os.ReadFile(h.outputs()["report-file"])
	var rep struct {
		Findings []struct {
			Path      string `json:"path"`
			StartLine int    `json:"start_line"`
			Title     string `json:"title"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(report, &rep); err != nil || len(rep.Findings) != 400 {
		t.Fatalf("report: %d findings, %v; want 400", len(rep.Findings), err)
	}
	onPR := bodies(h.gh.ReviewComments(testPR))
	for _, r := range h.gh.Reviews(testPR) {
		onPR += r.Body
	}
	annotated := map[string]bool{}
	for _, a := range h.lastCheckRun().Annotations {
		annotated[fmt.Sprintf("%s:%d %s", a.Path, a.StartLine, strings.TrimPrefix(a.Title, "[medium] "))] = true
	}
	lost := 0
	for _, f := range rep.Findings {
		if !strings.Contains(onPR, f.Title) && !annotated[fmt.Sprintf("%s:%d %s", f.Path, f.StartLine, f.Title)] {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of 400 findings are neither on the pull request nor in the check run", lost)
	}
	t.Logf("%d content-creating requests for 400 findings on 300 files", len(times))
}

// TestReviewLocalResultsCache: `warden review` run twice on the same change
// calls the model once per item, then not at all, with the same findings,
// the items marked cached; the user's cache directory is where they live.
func TestReviewLocalResultsCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	model := newFakeModel(t, "high")
	env := model.env("sk-test-SECRET-0123456789")
	env["XDG_CACHE_HOME"] = t.TempDir()
	first := runWarden(t, dir, env, "", "review", "--diff", diff, "--format", "json", "--skill", "code-review")
	calls := model.calls()
	second := runWarden(t, dir, env, "", "review", "--diff", diff, "--format", "json", "--skill", "code-review")
	if first.code != exitFindings || second.code != exitFindings {
		t.Fatalf("exits %d, %d; stderr:\n%s", first.code, second.code, second.stderr)
	}
	r1, r2 := decodeReport(t, first.stdout), decodeReport(t, second.stdout)
	if model.calls() != calls || r2.Summary.Reviewed != r1.Summary.Planned || len(r2.Findings) != len(r1.Findings) {
		t.Errorf("second run: %d more model calls, %d reviewed, %d findings; want none, %d, %d", model.calls()-calls, r2.Summary.Reviewed, len(r2.Findings), r1.Summary.Planned, len(r1.Findings))
	}
	if !strings.Contains(second.stdout, `"cached": `+itoa(r1.Summary.Planned)) {
		t.Errorf("second report does not count cached items")
	}
	if entries, _ := filepath.Glob(filepath.Join(env["XDG_CACHE_HOME"], "warden", "results", "*", "*")); len(entries) != r1.Summary.Planned {
		t.Errorf("%d cache entries in the user's cache directory, want %d", len(entries), r1.Summary.Planned)
	}
	env["WARDEN_RESULTS_CACHE"] = "off"
	runWarden(t, dir, env, "", "review", "--diff", diff, "--format", "json", "--skill", "code-review")
	if model.calls() != calls+r1.Summary.Planned {
		t.Errorf("WARDEN_RESULTS_CACHE=off still used the cache")
	}
}

// TestBotIncrementalPushWithCache: with the results cache, a push that
// changes one line of a reviewed ten-file pull request calls the model
// once, and the report still covers the whole change (every item
// reviewed, the unchanged ones from the cache), so the check run gates on
// all the pull request's findings.
func TestBotIncrementalPushWithCache(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	tenFiles(h)
	if res := h.runOnGitHub(context.Background(), prRun); res.code != exitFindings {
		t.Fatalf("first review: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	whole := h.model.calls()
	before := h.pr.HeadSHA
	h.repo.write("pkg3/f.go", strings.Replace("package pkg\n\n"+numbered(30, "// pkg"), "// pkg line 12\n", "// pkg line 12 edited\n", 1))
	h.repo.git("commit", "-qam", "edit pkg3")
	h.refreshPR()
	h.pushEvent(before)
	if res := h.runOnGitHub(context.Background(), prRun); res.code != exitFindings {
		t.Fatalf("push: exit %d, want 1 (the earlier high findings still block); stderr:\n%s", res.code, res.stderr)
	}
	if got := h.model.calls() - whole; got != 1 {
		t.Errorf("the push made %d model calls, want 1", got)
	}
	report, _ := os.ReadFile(h.outputs()["report-file"])
	var rep struct {
		Summary struct{ Planned, Reviewed, Cached int }
	}
	json.Unmarshal(report, &rep)
	if rep.Summary.Planned != whole || rep.Summary.Reviewed != whole || rep.Summary.Cached != whole-1 {
		t.Errorf("push's report: %+v; want all %d items reviewed, %d of them from the cache", rep.Summary, whole, whole-1)
	}
	if cr := h.lastCheckRun(); cr.Conclusion != "failure" || !strings.Contains(cr.Summary, "only what changed since the last complete review calls the model") {
		t.Errorf("push's check run: %s\n%.500s", cr.Conclusion, cr.Summary)
	}
}

// TestBotReviewCommandOnDraft: a draft is skipped on push, but a member's
// `/warden review --skill code-review` reviews it (the command asks by
// name), fresh: it calls the model although the cache has the answers.
func TestBotReviewCommandOnDraft(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.gh.SetRole("alice", fakegithub.RoleWrite) // a collaborator: the commands that act need write access
	h.env["INPUT_SKILLS"] = ""
	h.pr.Draft = true
	h.gh.AddPullRequest(h.pr)
	h.event("opened", func(pr map[string]any) { pr["draft"] = true })
	if res := h.runOnGitHub(context.Background(), prRun); res.code != exitOK || h.model.calls() != 0 || h.lastCheckRun().Conclusion != "skipped" {
		t.Fatalf("draft on push: exit %d, %d model calls, check run %s; want skipped", res.code, h.model.calls(), h.lastCheckRun().Conclusion)
	}
	for round := range 2 {
		before := h.model.calls()
		id := h.gh.AddIssueComment(testPR, fakegithub.IssueComment{Body: "/warden review --skill code-review", User: "alice", Association: "COLLABORATOR"})
		h.commentEvent(id, "/warden review --skill code-review", "alice", "COLLABORATOR")
		if res := h.runOnGitHub(context.Background(), commentRun); res.code != exitFindings {
			t.Fatalf("round %d: exit %d; stderr:\n%s", round+1, res.code, res.stderr)
		}
		if got := h.model.calls() - before; got == 0 {
			t.Errorf("round %d: /warden review made no model call: it must be fresh", round+1)
		}
		report, _ := os.ReadFile(h.outputs()["report-file"])
		if bytes.Contains(report, []byte(`"cached": true`)) || bytes.Contains(report, []byte(`"skill": "security-review"`)) {
			t.Errorf("round %d: the report has cached items or another skill", round+1)
		}
	}
}

// TestBotCacheSecretFromRouteKey: without results-cache-secret the trusted
// domain's entries are signed with a hash of the model keys the trusted
// configuration sends, a route's own api_key_env included (not only the
// default key variables): entries written by a run that lacks the route's
// real key never serve one that has it.
func TestBotCacheSecretFromRouteKey(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.config(fmt.Sprintf("[[routes]]\nname = \"acme\"\nbase_url = %q\nmodel = \"m\"\napi_key_env = \"ACME_KEY\"\n", h.model.URL+"/v1"))
	delete(h.env, "WARDEN_API_KEY")

	h.env["ACME_KEY"] = "acme-key-of-someone-else"
	if res := h.runOnGitHub(context.Background(), prRun); res.code != exitFindings {
		t.Fatalf("first run: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	if len(h.gh.Artifacts()) == 0 {
		t.Fatal("the first run saved no results")
	}
	rerun := func(key string) (calls, planned, cached int) {
		h.env["ACME_KEY"] = key
		before := h.model.calls()
		if res := h.runOnGitHub(context.Background(), prRun); res.code != exitFindings {
			t.Fatalf("run with %s: exit %d; stderr:\n%s", key, res.code, res.stderr)
		}
		raw, _ := os.ReadFile(h.outputs()["report-file"])
		var rep struct{ Summary struct{ Planned, Cached int } }
		json.Unmarshal(raw, &rep)
		return h.model.calls() - before, rep.Summary.Planned, rep.Summary.Cached
	}
	if calls, planned, cached := rerun("acme-key-the-real-one"); calls != planned || cached != 0 {
		t.Errorf("with the real key: %d model calls for %d items, %d cached; want none answered from the other key's entries", calls, planned, cached)
	}
	if calls, planned, cached := rerun("acme-key-the-real-one"); calls != 0 || cached != planned {
		t.Errorf("again with the real key: %d model calls, %d of %d cached; want its own entries to serve", calls, cached, planned)
	}
}
