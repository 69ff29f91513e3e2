package fakegithub

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestAssociation: every author_association the fake answers is the one
// GitHub derives from the login's place in the repository, the highest
// that holds (owner, organization member, collaborator, committer, pull
// request author, nobody), on pull requests, conversation comments and
// review comments alike; a test's explicit value still wins.
func TestAssociation(t *testing.T) {
	t.Parallel()
	s, url := newServer(t) // owner "o"; pull request 3 by octocat
	s.AddOrgMember("Mia")  // logins are case-insensitive
	s.AddOrgMember("maya")
	s.SetRole("maya", RoleAdmin) // a member who is also a collaborator
	s.SetRole("rita", RoleRead)
	s.SetRole("tim", RoleTriage)
	s.SetRole("gone", RoleNone)
	s.AddCommitter("cora")
	s.AddCommitter("rita")
	s.AddPullRequest(PullRequest{Number: 4, HeadSHA: "h4", BaseSHA: "base", User: "finn"})
	s.AddPullRequest(PullRequest{Number: 5, HeadSHA: "h5", BaseSHA: "base", User: "cora"})
	for _, tt := range []struct {
		login, want string
	}{
		{"o", AssocOwner},
		{"mia", AssocMember}, // a member with no access to the repository
		{"maya", AssocMember},
		{"rita", AssocCollaborator}, // a read-only collaborator with commits
		{"tim", AssocCollaborator},
		{"gone", AssocNone}, // no role is no collaborator
		{"cora", AssocContributor},
		{"finn", AssocFirstTimeContributor}, // opened a pull request, no commit
		{"octocat", AssocFirstTimeContributor},
		{"stranger", AssocNone},
		{"github-actions[bot]", AssocNone},
	} {
		if got := s.Association(tt.login); got != tt.want {
			t.Errorf("Association(%q) = %q, want %q", tt.login, got, tt.want)
		}
	}

	association := func(path string) string {
		t.Helper()
		a, _, raw := do(t, "GET", url+path, DefaultToken, nil)
		var one struct {
			A string `json:"author_association"`
		}
		var list []struct {
			A string `json:"author_association"`
		}
		if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
			return list[len(list)-1].A
		}
		if a.Status != 200 || json.Unmarshal(raw, &one) != nil {
			t.Fatalf("GET %s: %+v %s", path, a, raw)
		}
		return one.A
	}
	for _, tt := range []struct {
		name, path string
		add        func()
		want       string
	}{
		{"pull request by a first-time contributor", "/repos/o/r/pulls/4", func() {}, AssocFirstTimeContributor},
		{"pull request by a committer", "/repos/o/r/pulls/5", func() {}, AssocContributor},
		{"pull request with an explicit value", "/repos/o/r/pulls/6", func() {
			s.AddPullRequest(PullRequest{Number: 6, HeadSHA: "h6", BaseSHA: "base", User: "finn", Association: AssocMember})
		}, AssocMember},
		{"conversation comment by a member", "/repos/o/r/issues/3/comments", func() {
			s.AddIssueComment(pr, IssueComment{Body: "hi", User: "mia"})
		}, AssocMember},
		{"conversation comment with an explicit value", "/repos/o/r/issues/3/comments", func() {
			s.AddIssueComment(pr, IssueComment{Body: "hi", User: "stranger", Association: AssocOwner})
		}, AssocOwner},
		{"review comment by a read-only collaborator", "/repos/o/r/pulls/3/comments", func() {
			s.AddReviewComment(pr, ReviewComment{Path: "a.go", Line: 2, Body: "x", User: "rita"})
		}, AssocCollaborator},
	} {
		tt.add()
		if got := association(tt.path); got != tt.want {
			t.Errorf("%s: GET %s author_association = %q, want %q", tt.name, tt.path, got, tt.want)
		}
	}
	// A comment warden writes is its bot's: no association.
	if a, _, raw := do(t, "POST", url+"/repos/o/r/issues/3/comments", DefaultToken, map[string]any{"body": "from warden"}); a.Status != 201 || !json.Valid(raw) {
		t.Fatalf("create comment: %+v", a)
	} else if got := association(fmt.Sprintf("/repos/o/r/issues/%d/comments", pr)); got != AssocNone {
		t.Errorf("github-actions[bot]'s comment: author_association = %q, want NONE", got)
	}
}
