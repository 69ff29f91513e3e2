package fakegithub

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestCommentByID: one review comment and one conversation comment are
// read by id, and a conversation comment is edited in place (author and
// id kept), beside the list routes that share their paths' shape; every
// answer checked against GitHub's description.
func TestCommentByID(t *testing.T) {
	t.Parallel()
	s, url := newServer(t)
	rc := s.AddReviewComment(pr, ReviewComment{Path: "a.go", Line: 2, Body: "finding", User: "github-actions[bot]"})
	ic := s.AddIssueComment(pr, IssueComment{Body: "ledger v1", User: "github-actions[bot]"})
	a, _, raw := do(t, "GET", fmt.Sprintf("%s/repos/o/r/pulls/comments/%d", url, rc), DefaultReadOnlyToken, nil)
	if a.Status != 200 || !strings.Contains(string(raw), `"body":"finding"`) {
		t.Errorf("get review comment = %+v %s", a, raw)
	}
	if a, _, _ := do(t, "GET", fmt.Sprintf("%s/repos/o/r/pulls/%d/comments", url, pr), DefaultReadOnlyToken, nil); a.Status != 200 {
		t.Errorf("list review comments = %+v", a)
	}
	if a, _, _ := do(t, "GET", url+"/repos/o/r/pulls/comments/999999", DefaultToken, nil); a.Status != 404 {
		t.Errorf("get review comment 999999 = %+v, want 404", a)
	}
	if a, _, raw := do(t, "GET", fmt.Sprintf("%s/repos/o/r/issues/comments/%d", url, ic), DefaultToken, nil); a.Status != 200 || !strings.Contains(string(raw), "ledger v1") {
		t.Errorf("get issue comment = %+v %s", a, raw)
	}
	if a, _, _ := do(t, "PATCH", fmt.Sprintf("%s/repos/o/r/issues/comments/%d", url, ic), DefaultReadOnlyToken, map[string]any{"body": "x"}); a.Status != 403 {
		t.Errorf("edit with a read-only token = %+v, want 403", a)
	}
	a, _, raw = do(t, "PATCH", fmt.Sprintf("%s/repos/o/r/issues/comments/%d", url, ic), DefaultToken, map[string]any{"body": "ledger v2"})
	var got struct {
		ID   int64
		Body string
		User struct{ Login string }
	}
	json.Unmarshal(raw, &got)
	if a.Status != 200 || got.ID != ic || got.Body != "ledger v2" || got.User.Login != "github-actions[bot]" {
		t.Errorf("edit = %+v %s", a, raw)
	}
	if cs := s.IssueComments(pr); len(cs) != 1 || cs[0].Edits != 1 || cs[0].Body != "ledger v2" {
		t.Errorf("comments after the edit = %+v", cs)
	}
	if a, _, _ := do(t, "PATCH", fmt.Sprintf("%s/repos/o/r/issues/comments/%d", url, ic), DefaultToken, map[string]any{"body": ""}); a.Status != 422 {
		t.Errorf("edit to an empty body = %+v, want 422", a)
	}
	if got := s.RequestsTo(RouteGetReviewComment); len(got) != 2 {
		t.Errorf("%d requests recorded as %s, want 2", len(got), RouteGetReviewComment)
	}
}
