package fakegithub

import (
	"fmt"
	"testing"
)

// TestGrantedTokens: a workflow's token may do what its permissions block
// grants and nothing else (403 "Resource not accessible by
// integration"); a fork's is read-only whatever the workflow asks for.
func TestGrantedTokens(t *testing.T) {
	t.Parallel()
	s, url := newServer(t)
	declared := Permissions{"contents": "read", "pull-requests": "write", "checks": "write"}
	tok := s.GrantToken(declared, false)
	withActions := s.GrantToken(Permissions{"contents": "read", "pull-requests": "write", "checks": "write", "actions": "read"}, false)
	fork := s.GrantToken(Permissions{"contents": "write", "pull-requests": "write", "checks": "write", "actions": "read"}, true)
	check := map[string]any{"name": "warden", "head_sha": "head", "status": "in_progress"}
	comment := map[string]any{"body": "hello"}
	for _, tt := range []struct {
		name, token, method, path string
		body                      any
		want                      int
	}{
		{"check run with checks: write", tok, "POST", "/repos/o/r/check-runs", check, 201},
		{"artifacts without actions", tok, "GET", "/repos/o/r/actions/artifacts", nil, 403},
		{"artifacts with actions: read", withActions, "GET", "/repos/o/r/actions/artifacts", nil, 200},
		{"conversation comment with pull-requests: write", tok, "POST", fmt.Sprintf("/repos/o/r/issues/%d/comments", pr), comment, 201},
		{"a collaborator's permission: metadata", tok, "GET", "/repos/o/r/collaborators/alice/permission", nil, 200},
		{"fork: check run", fork, "POST", "/repos/o/r/check-runs", check, 403},
		{"fork: comment", fork, "POST", fmt.Sprintf("/repos/o/r/issues/%d/comments", pr), comment, 403},
		{"fork: artifacts", fork, "GET", "/repos/o/r/actions/artifacts", nil, 200},
		{"fork: the pull request", fork, "GET", fmt.Sprintf("/repos/o/r/pulls/%d", pr), nil, 200},
	} {
		if a, _, raw := do(t, tt.method, url+tt.path, tt.token, tt.body); a.Status != tt.want || (tt.want == 403 && a.Message != MsgNoWriteAccess) {
			t.Errorf("%s: %s %s = %+v %s, want %d", tt.name, tt.method, tt.path, a, raw, tt.want)
		}
	}
	root := s.AddReviewComment(pr, ReviewComment{Path: "a.go", Line: 2, Body: "x", User: "github-actions[bot]"})
	if _, errs := gql(t, url, tok, resolveMutation, map[string]any{"id": ThreadID(root)}); len(errs) != 1 || errs[0]["type"] != "FORBIDDEN" {
		t.Errorf("resolveReviewThread without contents: write: %v, want FORBIDDEN", errs)
	}
	full := s.GrantToken(Permissions{"contents": "write", "pull-requests": "write"}, false)
	if _, errs := gql(t, url, full, resolveMutation, map[string]any{"id": ThreadID(root)}); errs != nil {
		t.Errorf("resolveReviewThread with contents and pull-requests write: %v", errs)
	}
}
