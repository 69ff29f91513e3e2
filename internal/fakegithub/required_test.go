package fakegithub

import (
	"strings"
	"testing"
)

func TestPassesRequiredCheck(t *testing.T) {
	t.Parallel()
	want := map[string]bool{"success": true, "neutral": true, "skipped": true,
		"failure": false, "action_required": false, "cancelled": false, "timed_out": false, "stale": false, "": false}
	for _, c := range Conclusions {
		if _, ok := want[c]; !ok {
			t.Errorf("conclusion %q GitHub accepts is not in the table", c)
		}
	}
	for c, w := range want {
		if got := PassesRequiredCheck(c); got != w {
			t.Errorf("PassesRequiredCheck(%q) = %v, want %v", c, got, w)
		}
	}
}

// TestAuthenticatedUser: GitHub Actions' installation token cannot ask who
// it is (403, as GitHub answers it), and what it writes is authored by
// github-actions[bot]; a user's token (TokenLogin) gets its user, valid
// against GitHub's description, and writes as that login.
func TestAuthenticatedUser(t *testing.T) {
	t.Parallel()
	for _, login := range []string{"", "warden-bot"} {
		s := New("o", "r")
		s.TokenLogin = login
		s.AddPullRequest(PullRequest{Number: 1, HeadSHA: "h"})
		url := s.Start(t).URL
		a, _, body := do(t, "GET", url+"/user", DefaultToken, nil)
		switch {
		case login == "" && (a.Status != 403 || a.Message != MsgNoWriteAccess):
			t.Errorf("GET /user with the installation token = %+v, want 403 %q", a, MsgNoWriteAccess)
		case login != "" && (a.Status != 200 || !strings.Contains(string(body), `"login":"warden-bot"`)):
			t.Errorf("GET /user with a user's token = %+v %s", a, body)
		}
		do(t, "POST", url+"/repos/o/r/issues/1/comments", DefaultToken, map[string]any{"body": "hi"})
		want := login
		if want == "" {
			want = "github-actions[bot]"
		}
		if cs := s.IssueComments(1); len(cs) != 1 || cs[0].User != want {
			t.Errorf("comment written with the token: %+v, want authored by %s", cs, want)
		}
	}
}
