package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Who a token acts as. The workflow's GITHUB_TOKEN is an installation token
// of the GitHub Actions app: what it creates (a check run, a comment) is
// the github-actions app's. A token of a GitHub App of the repository's
// own (actions/create-github-app-token) acts as that app.
const (
	// AppToken is a read-write installation token of the app AppSlug.
	AppToken = "ghs_fakeAppInstallationToken0123456789"
	// AppSlug is the app AppToken belongs to; AppActions is GitHub
	// Actions'.
	AppSlug    = "warden-reviews"
	AppActions = "github-actions"
)

// appOf is the app a request's token acts as; "" for a user's token
// (Token with TokenLogin set), which acts as no app.
func (s *Server) appOf(auth string) string {
	_, tok, _ := strings.Cut(auth, " ")
	switch {
	case tok == AppToken:
		return AppSlug
	case tok == s.Token && s.TokenLogin != "":
		return ""
	}
	return AppActions
}

// GitHub's 403 texts for check-run writes that are not the creating app's.
const (
	// MsgChecksAppOnly answers a user's token: "Write permission for the
	// REST API to manage checks is only available to GitHub Apps. OAuth
	// apps and authenticated users can view check runs and check suites,
	// but they are not able to create them" (docs.github.com, "Using the
	// REST API to interact with checks"); "Update a check run": "OAuth
	// apps and personal access tokens (classic) cannot use this
	// endpoint". The text is GitHub's 403 as EnricoMi/publish-unit-test-result-action#31
	// and actions/github-script#118 quote it.
	MsgChecksAppOnly = "You must authenticate via a GitHub App."
	// msgNotCreatorApp answers another app's token (%d: the id of the app
	// that created the check run). GitHub's docs say only that "a check
	// suite is a collection of the check runs created by a single GitHub
	// App for a specific commit" (docs.github.com, "Using the REST API to
	// interact with checks", About check suites), neither the status nor
	// the text; GitHub answers 403 with this text, as
	// int128/argocd-commenter#631, databricks/cli#4563 and
	// OP5dev/TF-via-PR#538 quote it (15368 there is the github-actions
	// app, which created the check run another app's token then updated).
	msgNotCreatorApp = "Invalid app_id `%d` - check run can only be modified by the GitHub App that created it."
)

// checksWriteDenied answers 403 for a check-run write that GitHub refuses
// to the request's token: any write by a user's token, and an update
// (created is the app that created the check run) by another app's. It
// reports whether it answered.
func (s *Server) checksWriteDenied(w http.ResponseWriter, r *http.Request, route string, update bool, created string) bool {
	app := s.appOf(r.Header.Get("Authorization"))
	switch {
	case app == "":
		s.errorJSON(w, r, http.StatusForbidden, MsgChecksAppOnly, nil, docsURL(route))
	case update && app != created:
		s.errorJSON(w, r, http.StatusForbidden, fmt.Sprintf(msgNotCreatorApp, stableID("app:"+created)), nil, docsURL(route))
	default:
		return false
	}
	return true
}

// appJSON is GitHub's integration for the app slug.
func (s *Server) appJSON(slug string) map[string]any {
	if slug == "" {
		return nil
	}
	id := stableID("app:" + slug)
	owner := s.Owner
	if slug == AppActions {
		owner = "github"
	}
	created := timestamp(time.Date(2018, 7, 30, 9, 30, 17, 0, time.UTC))
	return map[string]any{
		"id": id, "slug": slug, "node_id": nodeID("A", id), "client_id": fmt.Sprintf("Iv1.%x", id),
		"owner": userJSON(owner, "Organization"), "name": slug, "description": "",
		"external_url": "https://" + slug + ".example", "html_url": htmlRoot + "/apps/" + slug,
		"created_at": created, "updated_at": created,
		"permissions": map[string]any{"checks": "write", "pull_requests": "write", "contents": "read"},
		"events":      []string{"check_run"},
	}
}

// RequestAction is a person pressing a check run's button: it returns
// the check_run requested_action webhook payload GitHub sends, and
// whether GitHub starts workflows on it. It does not for a check run
// that GitHub Actions' own token created: "To prevent recursive
// workflows, this event does not trigger workflows if the check run's
// check suite was created by GitHub Actions or if the check suite's head
// SHA is associated with GitHub Actions" (docs.github.com, "Events that
// trigger workflows", check_run). ok is false for an unknown check run
// or identifier.
func (s *Server) RequestAction(checkRunID int64, identifier, sender string) (payload []byte, triggersWorkflows, ok bool) {
	c, found := s.CheckRun(checkRunID)
	if !found || !containsAction(c.Actions, identifier) {
		return nil, false, false
	}
	s.mu.Lock()
	run := s.checkRunJSON(&c)
	s.mu.Unlock()
	full := s.Owner + "/" + s.Repo
	ev := map[string]any{
		"action": "requested_action", "check_run": run,
		"requested_action": map[string]any{"identifier": identifier},
		"repository":       repoJSON(full, false, s.now()),
		"sender":           userJSON(sender, userType(sender)),
	}
	data, _ := json.Marshal(ev)
	return data, c.App != AppActions, true
}

func containsAction(as []CheckRunAction, id string) bool {
	for _, a := range as {
		if a.Identifier == id {
			return true
		}
	}
	return false
}
