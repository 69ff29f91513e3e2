package fakegithub

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestCheckRunWrittenOnlyByItsApp: a check run is updated only by the
// GitHub App that created it; another app's token, the workflow's
// GITHUB_TOKEN (the github-actions app) on another app's check run, and a
// user's token get GitHub's 403 and change nothing. A user's token
// creates none either.
func TestCheckRunWrittenOnlyByItsApp(t *testing.T) {
	t.Parallel()
	s, url := newServer(t)
	scoped := s.GrantToken(Permissions{"checks": "write"}, false)
	body := map[string]any{"name": "warden", "head_sha": "head", "status": "in_progress"}
	create := func(token string) int64 {
		t.Helper()
		a, _, raw := do(t, "POST", url+"/repos/o/r/check-runs", token, body)
		var cr struct{ ID int64 }
		if a.Status != 201 || json.Unmarshal(raw, &cr) != nil {
			t.Fatalf("create with %s: %+v %s", token, a, raw)
		}
		return cr.ID
	}
	byActions, byApp := create(DefaultToken), create(AppToken)
	notCreator := func(app string) string {
		return fmt.Sprintf("Invalid app_id `%d` - check run can only be modified by the GitHub App that created it.", stableID("app:"+app))
	}
	for _, tt := range []struct {
		name    string
		id      int64
		token   string
		status  int
		message string
	}{
		{"github-actions updates its own", byActions, DefaultToken, 200, ""},
		{"a workflow's scoped GITHUB_TOKEN is github-actions too", byActions, scoped, 200, ""},
		{"the app updates its own", byApp, AppToken, 200, ""},
		{"another app on github-actions' check run", byActions, AppToken, 403, notCreator(AppActions)},
		{"GITHUB_TOKEN on another app's check run", byApp, DefaultToken, 403, notCreator(AppSlug)},
		{"a scoped GITHUB_TOKEN on another app's check run", byApp, scoped, 403, notCreator(AppSlug)},
	} {
		before, _ := s.CheckRun(tt.id)
		a, _, raw := do(t, "PATCH", fmt.Sprintf("%s/repos/o/r/check-runs/%d", url, tt.id), tt.token,
			map[string]any{"conclusion": "success", "output": map[string]any{"title": "by " + tt.name, "summary": "s"}})
		after, _ := s.CheckRun(tt.id)
		if a.Status != tt.status || a.Message != tt.message {
			t.Errorf("%s: PATCH = %d %q, want %d %q (%s)", tt.name, a.Status, a.Message, tt.status, tt.message, raw)
		}
		if changed := after.Updates != before.Updates; changed != (tt.status == 200) {
			t.Errorf("%s: the check run changed = %v, want %v", tt.name, changed, tt.status == 200)
		}
	}

	user, uurl := newServer(t)
	user.TokenLogin = "mona" // Token is mona's personal access token
	a, _, _ := do(t, "POST", uurl+"/repos/o/r/check-runs", user.Token, body)
	if a.Status != 403 || a.Message != MsgChecksAppOnly {
		t.Errorf("a user's token creates a check run: %d %q, want 403 %q", a.Status, a.Message, MsgChecksAppOnly)
	}
	a, _, raw := do(t, "POST", uurl+"/repos/o/r/check-runs", AppToken, body)
	var cr struct{ ID int64 }
	json.Unmarshal(raw, &cr)
	a, _, _ = do(t, "PATCH", fmt.Sprintf("%s/repos/o/r/check-runs/%d", uurl, cr.ID), user.Token, map[string]any{"conclusion": "success"})
	if c, _ := user.CheckRun(cr.ID); a.Status != 403 || a.Message != MsgChecksAppOnly || c.Conclusion != "" {
		t.Errorf("a user's token updates an app's check run: %d %q, conclusion %q; want 403 and no change", a.Status, a.Message, c.Conclusion)
	}
}
