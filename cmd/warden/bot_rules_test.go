package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/internal/fakeopenai"
)

// The life of a pull request under GitHub's rules as the fake GitHub
// enforces them (issue 21): review threads that follow their lines as
// GitHub's do, state that crosses events only where GitHub's scoping lets
// it, commands on forks, findings past the inline limit.

// bugLineRE finds, in a prompt, the added lines that carry "BUG".
var bugLineRE = regexp.MustCompile(`(?m)^\s*(\d+) \+ (.*BUG.*)$`)

// bugModel answers with one finding per added line that says "BUG",
// titled with the line's text: a reviewer whose findings go away when the
// flagged line is fixed.
func bugModel(req fakeopenai.Request) fakeopenai.Answer {
	findings := []map[string]any{}
	for _, m := range bugLineRE.FindAllStringSubmatch(req.Prompt(), -1) {
		line, _ := strconv.Atoi(m[1])
		findings = append(findings, map[string]any{
			"severity": "high", "title": "Bug marker: " + strings.TrimSpace(m[2]), "description": "This line is marked as a bug.",
			"start_line": line, "end_line": line, "suggestion": "", "confidence": 0.9,
		})
	}
	b, _ := json.Marshal(map[string]any{"findings": findings})
	return fakeopenai.Answer{Content: string(b)}
}

// TestBotEditedLineResolvesThread: the most common fix, editing the
// flagged line, makes GitHub outdate that finding's thread, and warden
// resolves it (a reply naming the commit); a finding whose lines a push
// only moved (two lines added above it) keeps its thread open, now on its
// new line. The fake GitHub follows the lines as GitHub does.
func TestBotEditedLineResolvesThread(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	h.model.script.Default = bugModel
	session := "package auth\n\n" + numbered(80, "// session")
	session = strings.Replace(session, "// session line 10\n", "// session line 10 BUG one\n", 1)
	session = strings.Replace(session, "// session line 70\n", "// session line 70 BUG two\n", 1)
	h.commitHead(map[string]string{"auth/session.go": session})
	h.event("opened", nil)
	if res := h.run(context.Background()); res.code != exitFindings {
		t.Fatalf("first review: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	var fixed, moved fakegithub.ReviewComment
	for _, c := range h.gh.ReviewComments(testPR) {
		switch {
		case strings.Contains(c.Body, "BUG one"):
			fixed = c
		case strings.Contains(c.Body, "BUG two"):
			moved = c
		}
	}
	if fixed.ID == 0 || moved.ID == 0 {
		t.Fatalf("the first review did not comment both bugs: %+v", h.gh.ReviewComments(testPR))
	}

	// The push: the first bug's line is fixed, and two lines are added at
	// the top of the file, which moves the second bug down by two.
	before := h.pr.HeadSHA
	session = strings.Replace(session, "// session line 10 BUG one\n", "// session line 10 fixed\n", 1)
	session = strings.Replace(session, "package auth\n", "package auth\n\n// Sessions.\n", 1)
	h.commitHead(map[string]string{"auth/session.go": session})
	h.pushEvent(before)
	if res := h.run(context.Background()); res.code > exitFindings {
		t.Fatalf("push: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	if ok, by := h.gh.ThreadResolved(fixed.ID); !ok || by != "github-actions[bot]" {
		t.Errorf("the fixed line's thread: resolved %v by %q; want resolved by warden", ok, by)
	}
	var reply bool
	for _, c := range h.gh.ReviewComments(testPR) {
		reply = reply || (c.InReplyTo == fixed.ID && strings.HasPrefix(c.Body, "Fixed in "+h.pr.HeadSHA[:7]))
	}
	if !reply {
		t.Errorf("no reply naming the commit on the fixed thread")
	}
	if ok, _ := h.gh.ThreadResolved(moved.ID); ok {
		t.Errorf("the thread of a finding the push only moved was resolved")
	}
	if n := countComments(h.gh.ReviewComments(testPR), "BUG two"); n != 1 {
		t.Errorf("the moved finding has %d comments, want its first one only", n)
	}
}

// countComments counts the top-level review comments whose body contains
// s.
func countComments(cs []fakegithub.ReviewComment, s string) int {
	n := 0
	for _, c := range cs {
		if c.InReplyTo == 0 && strings.Contains(c.Body, s) {
			n++
		}
	}
	return n
}
