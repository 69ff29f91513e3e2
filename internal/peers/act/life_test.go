//go:build linux || darwin

package act

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/org/warden/internal/fakegithub"
)

// The life of a pull request under act, with the README's own workflows
// (read out of README.md, unchanged: the Action is org/warden@v1 and the
// actions they use are pinned by SHA; only those are stand-ins), each run
// a separate act invocation with a GITHUB_TOKEN that has exactly the
// permissions its workflow declares (a fork's capped at read), and
// nothing crossing runs but what the fake GitHub keeps: check runs,
// comments, and the workflow artifacts of its Actions services, which it
// shows across refs to whoever may read them.

// readmeWorkflow is the YAML block of README.md that follows the first line
// containing label.
func readmeWorkflow(t *testing.T, label string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, label)
	if i < 0 {
		t.Fatalf("README.md has no %q", label)
	}
	rest := text[i:]
	start := strings.Index(rest, "```yaml\n")
	if start < 0 {
		t.Fatalf("README.md has no yaml block after %q", label)
	}
	rest = rest[start+len("```yaml\n"):]
	return rest[:strings.Index(rest, "```\n")]
}

// The README's workflows, by the line that introduces each.
const (
	wfReview    = "`.github/workflows/warden.yml`:"
	wfCommands  = "`.github/workflows/warden-commands.yml`, next to the workflow above:"
	wfFollowUp  = "`.github/workflows/warden-command-followup.yml`:"
	wfForkSafe  = "#### 1. `pull_request_target`, configuration from the base"
	forkHeadRep = "mallory/widgets"
)

// permissionsOf are a workflow's top-level permissions.
func permissionsOf(t *testing.T, wf string) fakegithub.Permissions {
	t.Helper()
	var w struct {
		Permissions map[string]string `yaml:"permissions"`
	}
	if err := yaml.Unmarshal([]byte(wf), &w); err != nil {
		t.Fatalf("workflow: %v\n%s", err, wf)
	}
	if len(w.Permissions) == 0 {
		t.Fatalf("workflow declares no permissions:\n%s", wf)
	}
	return fakegithub.Permissions(w.Permissions)
}

// lifeWorld is a world whose base revision configures warden (a route to
// the test's model under the README's key variable, no retries, so calls
// count exactly) and whose pull request changes four files.
func lifeWorld(t *testing.T) *world {
	t.Helper()
	w := newWorld(t, scenario{name: "life", severity: "medium"})
	w.git("checkout", "-q", "main")
	w.write("warden.toml", fmt.Sprintf("[[routes]]\nname = \"model\"\nbase_url = %q\nmodel = \"test-model\"\napi_key_env = \"OPENROUTER_API_KEY\"\n\n[retry]\nmax_per_route = 0\nmax_per_item = 0\n", w.model.URL+"/v1"))
	w.git("add", "warden.toml")
	w.git("commit", "-qm", "configure warden")
	w.git("checkout", "-q", "feature")
	w.git("rebase", "-q", "main")
	for _, name := range []string{"mod", "sub", "neg"} {
		w.write("calc/"+name+".go", fmt.Sprintf("package calc\n\n// %s is an operation.\nfunc %s(a, b int) int {\n\treturn a %% b\n}\n", strings.ToUpper(name[:1])+name[1:], strings.ToUpper(name[:1])+name[1:]))
	}
	w.git("add", "calc")
	w.git("commit", "-qm", "more operations")
	w.refreshPR()
	return w
}

// refreshPR makes the fake GitHub's pull request the feature branch as it
// is now: its head, and each file's patch and content (with which the fake
// follows review comments across pushes, as GitHub does).
func (w *world) refreshPR() {
	w.t.Helper()
	w.pr.BaseSHA, w.pr.HeadSHA = w.git("rev-parse", "main"), w.git("rev-parse", "feature")
	w.pr.Files = nil
	for _, path := range strings.Fields(w.git("diff", "--name-only", w.pr.BaseSHA, w.pr.HeadSHA)) {
		patch := w.git("diff", w.pr.BaseSHA, w.pr.HeadSHA, "--", path)
		patch = patch[strings.Index(patch, "@@"):]
		w.pr.Files = append(w.pr.Files, fakegithub.File{Filename: path, Status: "modified", Patch: patch, Content: w.git("show", w.pr.HeadSHA+":"+path) + "\n"})
	}
	w.gh.AddPullRequest(w.pr)
}

// use makes wf the workflow act runs, with a GITHUB_TOKEN of its
// permissions (capped at read for a fork's run).
func (w *world) use(wf string, fork bool) {
	w.t.Helper()
	w.write(".github/workflows/warden.yml", wf)
	w.token = w.gh.GrantToken(permissionsOf(w.t, wf), fork)
}

// pullRequestEvent writes a pull_request (or pull_request_target) event.
func (w *world) pullRequestEvent(name, headRepo string) {
	w.t.Helper()
	repo := map[string]any{"full_name": owner + "/" + repoName, "name": repoName, "owner": map[string]any{"login": owner}}
	head := map[string]any{"full_name": headRepo, "name": repoName, "owner": map[string]any{"login": strings.Split(headRepo, "/")[0]}}
	pr := map[string]any{
		"number": prNumber, "title": w.pr.Title, "body": w.pr.Body, "draft": false, "state": "open",
		"user":               map[string]any{"login": "alice", "type": "User"},
		"author_association": "CONTRIBUTOR",
		"head":               map[string]any{"sha": w.pr.HeadSHA, "ref": "feature", "repo": head},
		"base":               map[string]any{"sha": w.pr.BaseSHA, "ref": "main", "repo": repo},
	}
	w.writeEvent(name, map[string]any{"action": "opened", "number": prNumber, "pull_request": pr, "repository": repo})
}

// exampleEvent writes GitHub's example payload of event (its first
// example file matching pattern), edited.
func (w *world) exampleEvent(name, pattern string, edit func(ev map[string]any)) {
	w.t.Helper()
	files, _ := filepath.Glob(filepath.Join(repoRoot(w.t), "internal", "fakegithub", "testdata", "webhooks", name, pattern))
	if len(files) == 0 {
		w.t.Fatalf("no %s example %s", name, pattern)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		w.t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		w.t.Fatal(err)
	}
	ev["repository"] = map[string]any{"full_name": owner + "/" + repoName, "name": repoName, "owner": map[string]any{"login": owner}}
	edit(ev)
	w.writeEvent(name, ev)
}

func (w *world) writeEvent(name string, ev map[string]any) {
	w.t.Helper()
	data, err := json.Marshal(ev)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "event.json"), data, 0o644); err != nil {
		w.t.Fatal(err)
	}
	w.eventName = name
}

// mustAct runs act and fails the test unless the job ran to its end.
func (w *world) mustAct(ctx context.Context, step string) actResult {
	w.t.Helper()
	res := w.runAct(ctx)
	if res.killed || !strings.Contains(res.log, "Job succeeded") {
		w.t.Fatalf("%s: act %v\n%s", step, res.err, res.log)
	}
	w.gh.CompleteRun(w.job.Run.ID, "success")
	return res
}

// calls is how many model calls the model has answered.
func (m *model) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.auth)
}

func (w *world) lastCheckRun() fakegithub.CheckRun {
	runs := w.gh.CheckRuns()
	return runs[len(runs)-1]
}

// reviewedOf reads "N of M items reviewed" from a check run summary.
var reviewedRE = regexp.MustCompile(`(\d+) of (\d+) items reviewed`)

func reviewedOf(t *testing.T, cr fakegithub.CheckRun) (k, n int) {
	t.Helper()
	m := reviewedRE.FindStringSubmatch(cr.Summary)
	if m == nil {
		t.Fatalf("check run summary says no \"k of N items reviewed\":\n%.800s", cr.Summary)
	}
	fmt.Sscan(m[1], &k)
	fmt.Sscan(m[2], &n)
	return k, n
}

// TestLifeUnderAct: the README's workflows through a same-repository pull
// request's life: the review workflow on pull_request, with the model
// failing for one file, ends partial; a member's `/warden resume`
// comment runs the commands workflow on issue_comment, on the default
// branch, and calls the model only for the N − k unfinished items,
// reading the first run's answers from its workflow artifact; the check
// run says k came from earlier runs.
func TestLifeUnderAct(t *testing.T) {
	needAct(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*actDeadln)
	defer cancel()
	w := lifeWorld(t)

	w.reviewOpened()
	w.model.dead = "calc/mod.go"
	w.mustAct(ctx, "pull_request")
	first := w.lastCheckRun()
	k, n := reviewedOf(t, first)
	if !strings.HasPrefix(first.Title, "Partial") || k == 0 || k == n {
		t.Fatalf("first run: %q, %d of %d; want partial", first.Title, k, n)
	}
	if arts := w.gh.Artifacts(); len(arts) != 1 || arts[0].Name != "warden-results-trusted-pr7" {
		t.Fatalf("artifacts after the first run: %+v, want its results", arts)
	}

	w.model.dead = ""
	before := w.model.calls()
	id := w.gh.AddIssueComment(prNumber, fakegithub.IssueComment{Body: "/warden resume", User: "alice", Association: "MEMBER"})
	w.commentOn(id, "/warden resume", "alice", "MEMBER")
	w.use(readmeWorkflow(t, wfCommands), false)
	w.run = fakegithub.WorkflowRun{Name: "warden commands", Path: ".github/workflows/warden-commands.yml", HeadBranch: "main"}
	w.checkout = w.pr.BaseSHA
	res := w.mustAct(ctx, "issue_comment")
	if got := w.model.calls() - before; got != n-k {
		t.Errorf("/warden resume under act made %d model calls, want N − k = %d − %d = %d\n%s", got, n, k, n-k, res.log)
	}
	last := w.lastCheckRun()
	if want := fmt.Sprintf("**%d from earlier runs:**", k); !strings.HasPrefix(last.Title, "Complete") || !strings.Contains(last.Summary, want) {
		t.Errorf("resume's check run %q does not say %q:\n%.600s", last.Title, want, last.Summary)
	}
	checkNoSecrets(t, w, res)
}

// TestFixedThreadUnderAct: a fix pushed to a same-repository pull request
// under the README's review workflow, with exactly its permissions
// (contents: read). GitHub outdates the thread of the edited line and
// refuses the token resolveReviewThread, so warden replies in that thread,
// once, that the finding is fixed and asks a person to resolve it, and the
// check run counts the thread it left open; the other files' threads are
// untouched.
func TestFixedThreadUnderAct(t *testing.T) {
	needAct(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*actDeadln)
	defer cancel()
	w := lifeWorld(t)
	w.reviewOpened()
	w.mustAct(ctx, "opened")
	var fixed []fakegithub.ReviewComment // the threads on calc/mod.go, one a skill
	others := map[string]bool{}
	for _, c := range w.gh.ReviewComments(prNumber) {
		switch {
		case c.InReplyTo != 0:
		case c.Path == "calc/mod.go":
			fixed = append(fixed, c)
		default:
			others[c.Path] = true
		}
	}
	if len(fixed) == 0 || len(others) != 3 {
		t.Fatalf("first run: %d threads on calc/mod.go, others on %v; want threads on all four files", len(fixed), others)
	}

	// The push edits the flagged line (the model flags a file's first
	// reviewable line) and the model finds nothing in the file any more.
	before := w.pr.HeadSHA
	mod := strings.Replace(w.git("show", "feature:calc/mod.go")+"\n", "package calc\n", "package calc // integer operations\n", 1)
	w.write("calc/mod.go", mod)
	w.git("commit", "-qam", "fix mod")
	w.refreshPR()
	w.model.mu.Lock()
	w.model.clean = "calc/mod.go"
	w.model.mu.Unlock()
	w.pullRequestEvent("pull_request", owner+"/"+repoName)
	w.editEvent(func(ev map[string]any) { ev["action"], ev["before"], ev["after"] = "synchronize", before, w.pr.HeadSHA })
	w.checkout = w.pr.HeadSHA
	res := w.mustAct(ctx, "synchronize")

	short := w.pr.HeadSHA[:7]
	all := w.gh.ReviewComments(prNumber)
	for _, root := range fixed {
		var replies []fakegithub.ReviewComment
		for _, c := range all {
			if c.InReplyTo == root.ID {
				replies = append(replies, c)
			}
		}
		if len(replies) != 1 || replies[0].User != "github-actions[bot]" || !strings.HasPrefix(replies[0].Body, "Fixed in "+short+": ") ||
			!strings.Contains(replies[0].Body, "Resolve this thread if you agree") {
			t.Errorf("replies in the thread of comment %d: %+v; want one by warden, naming %s and asking a person to resolve it", root.ID, replies, short)
		}
		if resolved, _ := w.gh.ThreadResolved(root.ID); resolved {
			t.Errorf("the thread of comment %d was resolved with a token GitHub would refuse (contents: read)", root.ID)
		}
	}
	for _, c := range all {
		if c.InReplyTo == 0 && c.Path != "calc/mod.go" {
			if resolved, _ := w.gh.ThreadResolved(c.ID); resolved || slices.ContainsFunc(all, func(r fakegithub.ReviewComment) bool { return r.InReplyTo == c.ID }) {
				t.Errorf("the thread on %s, whose code did not change, was resolved (%v) or answered", c.Path, resolved)
			}
		}
	}
	want := fmt.Sprintf("%d fixed findings' threads were not resolved", len(fixed))
	if len(fixed) == 1 {
		want = "1 fixed finding's thread was not resolved"
	}
	if last := w.lastCheckRun(); !strings.Contains(last.Summary, want) {
		t.Errorf("the check run does not say %q:\n%.1500s", want, last.Summary)
	}
	checkNoSecrets(t, w, res)
}

// reviewOpened readies act to run the README's review workflow, with its
// permissions, on the same-repository pull request's opened event, checked
// out at its head.
func (w *world) reviewOpened() {
	w.t.Helper()
	w.use(readmeWorkflow(w.t, wfReview), false)
	w.pullRequestEvent("pull_request", owner+"/"+repoName)
	w.run = fakegithub.WorkflowRun{Name: "warden", Path: ".github/workflows/warden.yml", HeadBranch: "feature"}
	w.checkout = w.pr.HeadSHA
}

// editEvent rewrites the event act will run with.
func (w *world) editEvent(edit func(ev map[string]any)) {
	w.t.Helper()
	raw, err := os.ReadFile(filepath.Join(w.dir, "event.json"))
	if err != nil {
		w.t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		w.t.Fatal(err)
	}
	edit(ev)
	w.writeEvent(w.eventName, ev)
}

// commentOn writes an issue_comment event for comment id on the pull
// request (GitHub's example payload, edited).
func (w *world) commentOn(id int64, body, login, association string) {
	w.t.Helper()
	w.exampleEvent("issue_comment", "01-created.json", func(ev map[string]any) {
		issue := ev["issue"].(map[string]any)
		issue["number"] = prNumber
		issue["pull_request"] = map[string]any{"url": w.ghURL + "/repos/" + owner + "/" + repoName + "/pulls/" + itoa(prNumber)}
		c := ev["comment"].(map[string]any)
		c["id"], c["body"], c["author_association"] = id, body, association
		c["user"].(map[string]any)["login"] = login
	})
}

func checkNoSecrets(t *testing.T, w *world, res actResult) {
	t.Helper()
	for _, secret := range []string{fakegithub.DefaultToken, w.token, modelKey} {
		if secret != "" && strings.Contains(res.log, secret) {
			t.Errorf("act's log shows a secret (%.8s...)", secret)
		}
	}
	if left := w.leftovers(); len(left) > 0 {
		t.Errorf("processes of the run still alive after act exited (killed now): %v", left)
	}
	if t.Failed() {
		t.Logf("act log:\n%s", res.log)
	}
}

// TestForkLifeUnderAct: a fork's pull request through the README's
// fork-safe workflows. The pull_request_target workflow reviews it
// (partial: the model fails for one file). A maintainer's
// `/warden dismiss` in a review thread runs the commands workflow on
// pull_request_review_comment as the fork has it: a read-only token, no
// secrets; warden records the comment and writes nothing. The follow-up
// workflow (workflow_run, the default branch's, a write token) dismisses
// the finding with a reply in the thread. Then `/warden resume` makes
// only the N − k unfinished calls.
func TestForkLifeUnderAct(t *testing.T) {
	needAct(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*actDeadln)
	defer cancel()
	w := lifeWorld(t)
	w.pr.HeadRepo = forkHeadRep
	w.gh.AddPullRequest(w.pr)

	w.use(readmeWorkflow(t, wfForkSafe), false)
	w.pullRequestEvent("pull_request_target", forkHeadRep)
	w.run = fakegithub.WorkflowRun{Name: "warden", Path: ".github/workflows/warden.yml", HeadBranch: "main"}
	w.checkout = w.pr.BaseSHA
	w.model.dead = "calc/mod.go"
	w.mustAct(ctx, "pull_request_target")
	k, n := reviewedOf(t, w.lastCheckRun())
	if k == 0 || k == n {
		t.Fatalf("first run: %d of %d reviewed; want partial", k, n)
	}
	w.model.dead = ""
	target := w.gh.ReviewComments(prNumber)[0]

	// The maintainer's reply in the thread: the fork's run records it.
	reply := w.gh.AddReviewComment(prNumber, fakegithub.ReviewComment{Path: target.Path, Line: target.Line, Body: "/warden dismiss intended", User: "alice", Association: "OWNER", InReplyTo: target.ID})
	w.exampleEvent("pull_request_review_comment", "01-created.json", func(ev map[string]any) {
		pr := ev["pull_request"].(map[string]any)
		pr["number"] = prNumber
		pr["head"].(map[string]any)["repo"].(map[string]any)["full_name"] = forkHeadRep
		c := ev["comment"].(map[string]any)
		c["id"], c["in_reply_to_id"], c["body"], c["author_association"] = reply, target.ID, "/warden dismiss intended", "OWNER"
		c["user"].(map[string]any)["login"] = "alice"
	})
	w.use(readmeWorkflow(t, wfCommands), true)
	w.run = fakegithub.WorkflowRun{Name: "warden commands", Path: ".github/workflows/warden-commands.yml", HeadBranch: "feature", HeadRepo: forkHeadRep}
	w.checkout = w.pr.HeadSHA
	w.noSecrets = true
	writes := len(w.gh.Requests())
	res := w.mustAct(ctx, "pull_request_review_comment")
	w.noSecrets = false
	for _, r := range w.gh.Requests()[writes:] {
		if r.Method != "GET" && !strings.HasPrefix(r.Path, "/_actions/") && r.Path != "/graphql" {
			t.Errorf("the fork's run wrote %s %s", r.Method, r.Path)
		}
	}
	recorder := w.job.Run
	if !strings.Contains(res.log, "recorded (artifact warden-command)") {
		t.Errorf("the fork's run did not record the command:\n%s", res.log)
	}

	// The follow-up acts, from the default branch.
	w.exampleEvent("workflow_run", "01-completed.json", func(ev map[string]any) {
		ev["action"] = "completed"
		wr := ev["workflow_run"].(map[string]any)
		wr["id"], wr["event"], wr["status"], wr["conclusion"] = recorder.ID, "pull_request_review_comment", "completed", "success"
		// The run that recorded the command: the commands workflow's.
		wr["name"], wr["path"] = "warden commands", ".github/workflows/warden-commands.yml"
		if wf, ok := ev["workflow"].(map[string]any); ok {
			wf["name"], wf["path"] = "warden commands", ".github/workflows/warden-commands.yml"
		}
		wr["created_at"] = time.Now().UTC().Format(time.RFC3339)
		wr["head_repository"].(map[string]any)["full_name"] = forkHeadRep
		wr["repository"].(map[string]any)["full_name"] = owner + "/" + repoName
	})
	w.use(readmeWorkflow(t, wfFollowUp), false)
	w.run = fakegithub.WorkflowRun{Name: "warden command follow-up", Path: ".github/workflows/warden-command-followup.yml", HeadBranch: "main"}
	w.checkout = w.pr.BaseSHA
	res = w.mustAct(ctx, "workflow_run")
	cs := w.gh.ReviewComments(prNumber)
	if last := cs[len(cs)-1]; last.InReplyTo != target.ID || !strings.Contains(last.Body, "Dismissed by @alice: intended.") {
		t.Errorf("the follow-up's reply = %+v; want the dismissal in the thread\n%s", last, res.log)
	}

	// /warden resume: only the unfinished items.
	before := w.model.calls()
	id := w.gh.AddIssueComment(prNumber, fakegithub.IssueComment{Body: "/warden resume", User: "alice", Association: "OWNER"})
	w.commentOn(id, "/warden resume", "alice", "OWNER")
	w.use(readmeWorkflow(t, wfCommands), false)
	w.run = fakegithub.WorkflowRun{Name: "warden commands", Path: ".github/workflows/warden-commands.yml", HeadBranch: "main"}
	w.checkout = w.pr.BaseSHA
	res = w.mustAct(ctx, "issue_comment")
	if got := w.model.calls() - before; got != n-k {
		t.Errorf("/warden resume on the fork's pull request made %d model calls, want N − k = %d", got, n-k)
	}
	if !bytes.Contains([]byte(w.lastCheckRun().Summary), []byte("**Suppressed:** 1 finding dismissed")) {
		t.Errorf("resume's check run does not count the dismissed finding:\n%.600s", w.lastCheckRun().Summary)
	}
	checkNoSecrets(t, w, res)
}
