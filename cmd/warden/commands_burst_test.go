package main

import (
	"context"
	"strings"
	"testing"

	"github.com/org/warden/internal/fakegithub"
)

// TestBotUntrustedBurstOneReply: five `/warden` comments from a stranger
// (and one from another stranger) on one pull request get one reply in all,
// not one each: a job that a workflow without the author_association gate
// starts for each comment answers only the first. A trusted commenter's
// commands still run.
func TestBotUntrustedBurstOneReply(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	for i, who := range []string{"mallory", "mallory", "mallory", "mallory", "mallory", "trudy"} {
		id := h.gh.AddIssueComment(testPR, fakegithub.IssueComment{Body: "/warden review", User: who, Association: "NONE"})
		h.commentEvent(id, "/warden review", who, "NONE")
		if res := h.run(context.Background()); res.code != exitOK {
			t.Fatalf("comment %d: exit %d; stderr:\n%s", i+1, res.code, res.stderr)
		}
	}
	replies := 0
	for _, c := range h.gh.IssueComments(testPR) {
		if strings.Contains(c.Body, "cannot run `/warden` commands") {
			replies++
		}
	}
	if replies != 1 || h.model.calls() != 0 || len(h.gh.CheckRuns()) != 0 {
		t.Errorf("%d replies, %d model calls, %d check runs for six untrusted commands; want one reply and nothing else", replies, h.model.calls(), len(h.gh.CheckRuns()))
	}
	id := h.gh.AddIssueComment(testPR, fakegithub.IssueComment{Body: "/warden help", User: "alice", Association: "MEMBER"})
	h.commentEvent(id, "/warden help", "alice", "MEMBER")
	if res := h.run(context.Background()); res.code != exitOK {
		t.Fatalf("member's help: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	cs := h.gh.IssueComments(testPR)
	if last := cs[len(cs)-1]; !strings.Contains(last.Body, "/warden review") || last.User != "github-actions[bot]" {
		t.Errorf("a member's /warden help got no help reply after the strangers' burst: last comment %+v", last)
	}
}
