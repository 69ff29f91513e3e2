package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/internal/fakeopenai"
)

// onLineRE finds, in a prompt, the added line "// session line 10
// changed" and its new-side number.
var onLineRE = regexp.MustCompile(`(?m)^\s*(\d+) \+ // session line 10 changed$`)

// TestFingerprintNeighbouringEdit: a dismissed finding stays dismissed
// after a push that inserts a line right above it: its code is the same,
// only its neighbours and line number changed. It is not posted again,
// counted suppressed, and the required check, which failed on it, passes.
func TestFingerprintNeighbouringEdit(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	// The model finds one problem, on auth/session.go's changed line 10,
	// wherever that line is.
	h.model.script.Default = func(req fakeopenai.Request) fakeopenai.Answer {
		m := onLineRE.FindStringSubmatch(req.Prompt())
		if m == nil {
			return fakeopenai.Answer{Content: `{"findings":[]}`}
		}
		line := atoi(t, m[1])
		b, _ := json.Marshal(map[string]any{"findings": []map[string]any{{
			"severity": "high", "title": "Session not invalidated", "description": "The old session stays valid.",
			"start_line": line, "end_line": line, "suggestion": "", "confidence": 0.9,
		}}})
		return fakeopenai.Answer{Content: string(b)}
	}
	if res := h.run(context.Background()); res.code != exitFindings {
		t.Fatalf("first review: exit %d, want %d; stderr:\n%s", res.code, exitFindings, res.stderr)
	}
	roots := rootComments(h)
	if len(roots) != 1 || roots[0].Path != "auth/session.go" || roots[0].Line != 12 {
		t.Fatalf("first review posted %+v, want one comment on auth/session.go:12", roots)
	}
	target := roots[0]
	if cr := h.lastCheckRun(); cr.Conclusion != "failure" {
		t.Fatalf("first review's check run = %q, want failure (a high finding)", cr.Conclusion)
	}

	h.gh.SetRole("alice", fakegithub.RoleAdmin) // the owner: dismissing takes write access
	reply := h.gh.AddReviewComment(testPR, fakegithub.ReviewComment{Path: target.Path, Line: target.Line, Body: "/warden dismiss intended", User: "alice", InReplyTo: target.ID})
	h.reviewCommentEvent(reply, target.ID, "/warden dismiss intended", "alice", "OWNER")
	if res := h.run(context.Background()); res.code != exitOK {
		t.Fatalf("dismiss: exit %d; stderr:\n%s", res.code, res.stderr)
	}

	// The push inserts one line right above the finding's line.
	session := "package auth\n\n" + numbered(80, "// session")
	session = strings.Replace(session, "// session line 10\n", "// a comment added above it\n// session line 10 changed\n", 1)
	session = strings.Replace(session, "// session line 70\n", "// session line 70 changed\n", 1)
	h.env["GITHUB_EVENT_NAME"] = "pull_request"
	h.commitHead(map[string]string{"auth/session.go": session})
	calls := h.model.calls()
	res := h.run(context.Background())
	if h.model.calls() == calls {
		t.Fatalf("the push was not reviewed again (no model call)")
	}
	if res.code != exitOK {
		t.Errorf("push: exit %d, want %d (the only finding was dismissed); stderr:\n%s", res.code, exitOK, res.stderr)
	}
	cr := h.lastCheckRun()
	if !strings.Contains(cr.Summary, "**Suppressed:** 1 finding dismissed") {
		t.Errorf("the push's check run does not count the dismissed finding:\n%.800s", cr.Summary)
	}
	if cr.Conclusion == "failure" {
		t.Errorf("the push's check run = %q, want it passing: the finding was dismissed", cr.Conclusion)
	}
	if got := rootComments(h); len(got) != 1 || got[0].ID != target.ID {
		t.Errorf("after the push, warden's comments are %+v, want only the dismissed one (not posted again)", got)
	}
	if n := strings.Count(bodies(h.gh.ReviewComments(testPR)), "warden:fp:v3:"+fingerprintIn(target.Body)); n != 1 {
		t.Errorf("the dismissed finding's marker is on the pull request %d times, want once", n)
	}
}
