package ghbot

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	ghreport "github.com/org/warden/report/github"
)

// The Resume review button: an incomplete review's check run carries it
// (the Checks API's requested actions), and a press sends a check_run
// requested_action event to the repository's workflows, which resume the
// review exactly like `/warden resume`.
//
// GitHub starts no workflow for it when GitHub Actions' own token created
// the check run: "To prevent recursive workflows, this event does not
// trigger workflows if the check run's check suite was created by GitHub
// Actions" (docs.github.com, "Events that trigger workflows", check_run).
// So the button is shown only on a check run a GitHub App of the
// repository's own created (the github-token input from
// actions/create-github-app-token); with the workflow's GITHUB_TOKEN the
// check run says to comment `/warden resume` instead.

// ResumeAction is the button: label at most 20 characters, description
// 40, identifier 20.
var ResumeAction = ghreport.CheckAction{
	Label:       "Resume review",
	Description: "Review only what was not finished",
	Identifier:  "warden-resume",
}

// ButtonWorks reports whether a press on a check run of app starts a
// workflow (any app but GitHub Actions').
func ButtonWorks(app string) bool { return app != "" && app != "github-actions" }

// ExternalID is what warden's check runs carry as their integrator
// reference: the pull request they review (GitHub gives a fork's check
// run no pull_requests, and the event of a button press carries only the
// check run).
func ExternalID(pr int) string { return "warden:pr:" + strconv.Itoa(pr) }

// ButtonPress is a check_run requested_action event.
type ButtonPress struct {
	Identifier string
	CheckName  string
	App        string
	// PullRequest is the pull request of the check run: its
	// pull_requests, else its external id; 0 when neither says.
	PullRequest int
	// Sender is the login that pressed it; SenderType "User" or "Bot".
	Sender, SenderType string
}

// ParseButtonPress reads a check_run event. ok is false for another
// action than requested_action.
func ParseButtonPress(payload []byte) (press ButtonPress, ok bool, err error) {
	var e struct {
		Action   string `json:"action"`
		CheckRun *struct {
			Name         string `json:"name"`
			ExternalID   string `json:"external_id"`
			PullRequests []struct {
				Number int `json:"number"`
			} `json:"pull_requests"`
			App *struct {
				Slug string `json:"slug"`
			} `json:"app"`
		} `json:"check_run"`
		RequestedAction *struct {
			Identifier string `json:"identifier"`
		} `json:"requested_action"`
		Sender *struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"sender"`
	}
	if err := json.Unmarshal(payload, &e); err != nil {
		return press, false, fmt.Errorf("check_run event: %w", err)
	}
	if e.Action != "requested_action" {
		return press, false, nil
	}
	if e.CheckRun == nil || e.RequestedAction == nil || e.Sender == nil {
		return press, false, fmt.Errorf("check_run requested_action event without its check run, action or sender")
	}
	press = ButtonPress{Identifier: e.RequestedAction.Identifier, CheckName: e.CheckRun.Name, Sender: e.Sender.Login, SenderType: e.Sender.Type}
	if e.CheckRun.App != nil {
		press.App = e.CheckRun.App.Slug
	}
	if len(e.CheckRun.PullRequests) > 0 {
		press.PullRequest = e.CheckRun.PullRequests[0].Number
	} else if n, ok := strings.CutPrefix(e.CheckRun.ExternalID, "warden:pr:"); ok {
		press.PullRequest, _ = strconv.Atoi(n)
	}
	return press, true, nil
}
