package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/internal/fakeopenai"
)

// lastIssueComment is the body of the pull request's last conversation
// comment (warden's reply to a conversation command).
func (h *actionHarness) lastIssueComment() string {
	h.t.Helper()
	cs := h.gh.IssueComments(testPR)
	if len(cs) == 0 {
		h.t.Fatal("no conversation comment on the pull request")
	}
	return cs[len(cs)-1].Body
}

// command posts body as login's conversation comment (association as
// GitHub would give it), runs the Action on its issue_comment event, and
// returns the run and warden's reply.
func (h *actionHarness) command(body, login, association string) (result, string) {
	h.t.Helper()
	id := h.gh.AddIssueComment(testPR, fakegithub.IssueComment{Body: body, User: login, Association: association})
	h.commentEvent(id, body, login, association)
	res := h.run(context.Background())
	if res.code != exitOK {
		h.t.Fatalf("%s by %s: exit %d; stderr:\n%s", body, login, res.code, res.stderr)
	}
	return res, h.lastIssueComment()
}

// TestCommandsAcceptNeedsWrite: a provider-unavailable review fails the
// required check. A read-only collaborator's `/warden accept` (association
// COLLABORATOR: the association filter lets it through) changes nothing,
// and the reply names the permission needed and the one the commenter
// has; so does an admin's when GitHub cannot say the admin's permission
// (it fails closed). A writer's accept then passes it.
func TestCommandsAcceptNeedsWrite(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.model.status = http.StatusUnauthorized // a wrong key: the provider fails at once
	if res := h.run(context.Background()); res.code != exitOK {
		t.Fatalf("review: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	before, passes := h.requiredCheck()
	if passes || !strings.HasPrefix(before.Title, "Provider unavailable: 0 of ") {
		t.Fatalf("review: check %s %q passes %v; want a failing Provider unavailable: 0 of N", before.Conclusion, before.Title, passes)
	}
	h.gh.SetRole("rita", fakegithub.RoleRead)
	h.gh.SetRole("maria", fakegithub.RoleAdmin)
	h.gh.SetRole("wendy", fakegithub.RoleWrite)

	for _, tt := range []struct {
		name, login, association string
		fault                    bool
		reply                    []string
	}{
		{"read-only collaborator", "rita", "COLLABORATOR", false,
			[]string{"`/warden accept` needs write, maintain or admin permission on the repository; @rita has read", "Nothing was run"}},
		{"admin whose permission GitHub does not say", "maria", "OWNER", true,
			[]string{"`/warden accept` needs write, maintain or admin permission on the repository", "could not look up the permission of @maria", "Nothing was run"}},
	} {
		if tt.fault {
			h.gh.Fail(fakegithub.RouteGetPermission, fakegithub.Fault{Status: http.StatusBadGateway})
		}
		res, reply := h.command("/warden accept looks fine", tt.login, tt.association)
		after, passes := h.requiredCheck()
		if passes || after.Conclusion != before.Conclusion || after.Title != before.Title || after.Summary != before.Summary {
			t.Errorf("%s: /warden accept changed the check: %s %q (passes %v)", tt.name, after.Conclusion, after.Title, passes)
		}
		for _, want := range tt.reply {
			if !strings.Contains(reply, want) {
				t.Errorf("%s: reply = %q, want it to say %q", tt.name, reply, want)
			}
		}
		if tt.fault && !strings.Contains(res.stdout, "::warning::warden: read the repository permission of maria") {
			t.Errorf("%s: the failed lookup is not in the log:\n%s", tt.name, res.stdout)
		}
	}
	if got := strings.Join(h.permissionLookups(), ","); got != "rita,maria" {
		t.Errorf("permission lookups %q, want rita,maria (one each)", got)
	}

	// A writer's word counts.
	_, reply := h.command("/warden accept the provider is down, reviewed by hand", "wendy", "COLLABORATOR")
	accepted, passes := h.requiredCheck()
	if !passes || accepted.Title != "Accepted by @wendy: "+before.Title {
		t.Errorf("writer's accept: check %s %q passes %v; want accepted by @wendy, passing (reply %q)", accepted.Conclusion, accepted.Title, passes, reply)
	}
}

// TestCommandsStrangersCannotDismiss: a review with two high findings
// fails the required check. A read-only collaborator and an organization
// member without access to the repository (association MEMBER,
// permission none) each `/warden dismiss` one of them in its thread: both
// are refused with the permission they lack, and the next push still
// fails on both findings.
func TestCommandsStrangersCannotDismiss(t *testing.T) {
	t.Parallel()
	h, roots := reviewedTwice(t)
	h.gh.SetRole("rita", fakegithub.RoleRead)
	h.gh.SetRole("sam", fakegithub.RoleNone)
	for i, who := range []struct{ login, association, has string }{{"rita", "COLLABORATOR", "read"}, {"sam", "MEMBER", "none"}} {
		root := roots[i]
		body := "/warden dismiss not a problem"
		id := h.gh.AddReviewComment(testPR, fakegithub.ReviewComment{Path: root.Path, Line: root.Line, Body: body, User: who.login, Association: who.association, InReplyTo: root.ID})
		h.reviewCommentEvent(id, root.ID, body, who.login, who.association)
		if res := h.run(context.Background()); res.code != exitOK {
			t.Fatalf("%s's dismiss: exit %d; stderr:\n%s", who.login, res.code, res.stderr)
		}
		var reply string
		for _, c := range h.gh.ReviewComments(testPR) {
			if c.InReplyTo == root.ID && c.ID != id {
				reply = c.Body
			}
		}
		want := fmt.Sprintf("`/warden dismiss` needs write, maintain or admin permission on the repository; @%s has %s", who.login, who.has)
		if !strings.Contains(reply, want) || strings.Contains(reply, "warden:dismissed") {
			t.Errorf("reply to %s's dismiss = %q, want a refusal saying %q", who.login, reply, want)
		}
	}
	h.env["GITHUB_EVENT_NAME"] = "pull_request"
	res, summary := h.push(2)
	if res.code != exitFindings || strings.Contains(summary, "**Suppressed:**") || !h.suppressedInReport(0) {
		t.Errorf("after the strangers' dismissals the push exits %d, summary:\n%.800s\nwant exit %d, nothing suppressed", res.code, summary, exitFindings)
	}
	if _, passes := h.requiredCheck(); passes {
		t.Errorf("the required check passes after dismissals by people without write access")
	}
}

// TestCommandsReviewNeedsWrite: `/warden review` and `/warden resume`
// spend the model budget, so a triage collaborator's call no model and
// the reply says what is needed; `/warden help` needs no permission.
func TestCommandsReviewNeedsWrite(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		body, reply string
		lookup      bool
	}{
		{"/warden review", "`/warden review` needs write, maintain or admin permission on the repository; @tia has triage", true},
		{"/warden resume", "`/warden resume` needs write, maintain or admin permission on the repository; @tia has triage", true},
		{"/warden help", "**warden commands**", false},
	} {
		t.Run(tt.body, func(t *testing.T) {
			t.Parallel()
			h := newActionHarness(t, "high")
			h.gh.SetRole("tia", fakegithub.RoleTriage)
			_, reply := h.command(tt.body, "tia", "COLLABORATOR")
			if h.model.calls() != 0 || len(h.gh.CheckRuns()) != 0 {
				t.Errorf("%s by a triage collaborator: %d model calls, %d check runs; want none", tt.body, h.model.calls(), len(h.gh.CheckRuns()))
			}
			if !strings.Contains(reply, tt.reply) {
				t.Errorf("reply to %s = %q, want it to say %q", tt.body, reply, tt.reply)
			}
			if got := len(h.permissionLookups()); (got == 1) != tt.lookup || got > 1 {
				t.Errorf("%s: %d permission lookups, want %v", tt.body, got, map[bool]int{true: 1, false: 0}[tt.lookup])
			}
		})
	}
}

// TestCommandsNoSelfAccept: the pull request's author, with write
// access, cannot accept the incomplete review of their own pull request:
// the reply says so and names the input that allows it. With
// allow-self-accept: true (a repository of one) the same command accepts
// it.
func TestCommandsNoSelfAccept(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.pr.User = "alice"
	h.gh.AddPullRequest(h.pr)
	h.gh.SetRole("alice", fakegithub.RoleWrite)
	h.model.content = `{"findings":[]}`
	h.config("[filters]\nmax_files = 2\n")
	h.realEvent("opened", "alice", "MEMBER")
	if res := h.run(context.Background()); res.code != exitOK {
		t.Fatalf("review: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	before, passes := h.requiredCheck()
	if passes || !strings.HasPrefix(before.Title, "Partial: ") {
		t.Fatalf("review: check %s %q passes %v; want a failing partial check", before.Conclusion, before.Title, passes)
	}

	_, reply := h.command("/warden accept my own change", "alice", "MEMBER")
	after, passes := h.requiredCheck()
	if passes || after.Title != before.Title || after.Summary != before.Summary {
		t.Errorf("the author's own accept changed the check: %s %q (passes %v)", after.Conclusion, after.Title, passes)
	}
	for _, want := range []string{"@alice opened this pull request", "`allow-self-accept: true`", "Nothing was accepted"} {
		if !strings.Contains(reply, want) {
			t.Errorf("reply to the author's accept = %q, want it to say %q", reply, want)
		}
	}

	h.env["INPUT_ALLOW_SELF_ACCEPT"] = "true"
	_, reply = h.command("/warden accept my own change, one-person repository", "alice", "MEMBER")
	accepted, passes := h.requiredCheck()
	if !passes || accepted.Title != "Accepted by @alice: "+before.Title {
		t.Errorf("with allow-self-accept: check %s %q passes %v, want accepted by @alice (reply %q)", accepted.Conclusion, accepted.Title, passes, reply)
	}
}

// TestCommandsFollowUpChecksItsTrigger: a maintainer's `/warden review`
// in a review thread of a fork's pull request, recorded by a run of a
// workflow other than the configured commands workflow (the fork's own
// file under the same name, or the commands file renamed): the follow-up
// runs nothing (no model call, no write) and says why in a warning and
// the job summary. The configured workflow's run is followed up.
func TestCommandsFollowUpChecksItsTrigger(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, workflow, path string
		runs                 bool
	}{
		{"the fork's workflow under the commands workflow's name", "warden commands", ".github/workflows/fork-ci.yml", false},
		{"the commands file under another name", "ci", ".github/workflows/warden-commands.yml", false},
		{"the commands workflow", "warden commands", ".github/workflows/warden-commands.yml", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newActionHarness(t, "high")
			forkPR(h)
			h.gh.SetRole("alice", fakegithub.RoleWrite)
			first := h.gh.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "README.md", Line: 1, Body: "question", User: "mallory"})
			cmdID := h.gh.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "README.md", Line: 1, Body: "/warden review", User: "alice", Association: "MEMBER", InReplyTo: first})
			h.reviewCommentEvent(cmdID, first, "/warden review", "alice", "MEMBER")
			run := forkCommentRun
			run.Name, run.Path = tt.workflow, tt.path
			h.asFork(func() { h.runOnGitHub(context.Background(), run) })
			recorded := h.lastJob.Run
			h.workflowRunEvent(recorded)
			n := len(h.gh.Requests())
			res := h.runOnGitHub(context.Background(), followUpRun)
			if tt.runs {
				if res.code != exitFindings || h.model.calls() == 0 {
					t.Errorf("follow-up of the commands workflow: exit %d, %d model calls; want the review", res.code, h.model.calls())
				}
				return
			}
			if res.code != exitOK || h.model.calls() != 0 || len(h.gh.CheckRuns()) != 0 {
				t.Errorf("follow-up of %q (%s): exit %d, %d model calls, %d check runs; want nothing run", tt.workflow, tt.path, res.code, h.model.calls(), len(h.gh.CheckRuns()))
			}
			if w := h.writesSince(n); len(w) != 0 {
				t.Errorf("follow-up of another workflow made writes: %v", w)
			}
			want := fmt.Sprintf("run %d is of workflow %q (%s), not the commands workflow", recorded.ID, tt.workflow, tt.path)
			if !strings.Contains(res.stdout, "::warning::warden: "+want) {
				t.Errorf("no warning %q in the log:\n%s", want, res.stdout)
			}
			if sum := h.summary(); !strings.Contains(sum, "R"+want[1:]) || !strings.Contains(sum, "command-workflow") {
				t.Errorf("the job summary does not say why nothing ran (want %q and the input's name):\n%s", want, sum)
			}
		})
	}
}

// TestCommandsSuggestionCap: a finding on a new 150-line file whose
// suggestion rewrites the whole file (well under the model answer's byte
// cap) is posted as an inline comment without the suggestion, and the
// comment says why in one line; a one-line suggestion on another finding
// stays applicable.
func TestCommandsSuggestionCap(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.commitHead(map[string]string{"gen/table.go": "package gen\n\n" + numbered(148, "// entry")})
	h.model.script.Default = func(req fakeopenai.Request) fakeopenai.Answer {
		sub := linesRE.FindStringSubmatch(req.Prompt())
		start, _ := strconv.Atoi(sub[1])
		end, _ := strconv.Atoi(sub[2])
		f := map[string]any{"severity": "medium", "title": "Rewrite " + sub[3], "description": "Simpler as a table.",
			"start_line": start, "end_line": start, "suggestion": "// fixed", "confidence": 0.9}
		if sub[3] == "gen/table.go" {
			f["end_line"], f["suggestion"] = end, strings.Repeat("var x = 1\n", end-start+1)
		}
		b, _ := json.Marshal(map[string]any{"findings": []any{f}})
		return fakeopenai.Answer{Content: string(b)}
	}
	if res := h.run(context.Background()); res.code != exitOK {
		t.Fatalf("review: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	var whole, small *fakegithub.ReviewComment
	for _, c := range h.gh.ReviewComments(testPR) {
		switch {
		case c.Path == "gen/table.go":
			whole = &c
		case c.Path == "auth/session.go":
			small = &c
		}
	}
	if whole == nil || small == nil {
		t.Fatalf("no inline comment on gen/table.go and auth/session.go: %+v", h.gh.ReviewComments(testPR))
	}
	if !strings.Contains(whole.Body, "Rewrite gen/table.go") || strings.Contains(whole.Body, "var x = 1") || strings.Contains(whole.Body, "```suggestion") {
		t.Errorf("the whole-file suggestion is in its comment, or the finding is not:\n%.600s", whole.Body)
	}
	if want := "_Suggested change of 150 lines left out: an inline suggestion holds at most 100 lines"; !strings.Contains(whole.Body, want) {
		t.Errorf("the comment does not say why the suggestion is left out (want %q):\n%.600s", want, whole.Body)
	}
	if !strings.Contains(small.Body, "```suggestion\n// fixed\n```") {
		t.Errorf("a one-line suggestion is not applicable in its comment:\n%s", small.Body)
	}
}
