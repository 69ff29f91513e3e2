package action

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"github.com/org/warden/internal/gitrepo"
	ghreport "github.com/org/warden/report/github"
)

// Event is the event that started the workflow: GITHUB_EVENT_NAME, the
// file GITHUB_EVENT_PATH names (for messages) and its bytes.
type Event struct {
	Name string
	Path string
	Data []byte
	Err  error // reading the file failed: reported where the event is read
}

// data returns the event's bytes, or the error of a missing or unreadable
// event file.
func (ev Event) data() ([]byte, error) {
	switch {
	case ev.Path == "":
		return nil, inputErrorf("GITHUB_EVENT_PATH is not set: 'warden action' runs inside GitHub Actions")
	case ev.Err != nil:
		return nil, inputErrorf("event file %s: %v", ev.Path, ev.Err)
	}
	return ev.Data, nil
}

// PullRequest is what the Action needs to know of the pull request.
type PullRequest struct {
	Owner, Repo      string
	Number           int
	HeadSHA, BaseSHA string
	Title, Body      string
	Draft            bool
	Author           string
	Bot              bool
	Fork             bool   // the head is in another repository
	HeadRepo         string // the head repository's full name ("" when deleted)
	Association      string // author_association: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, ...
}

func fromGitHub(owner, repo string, p *gh.PullRequest) *PullRequest {
	pr := &PullRequest{
		Owner: owner, Repo: repo,
		Number:      p.GetNumber(),
		HeadSHA:     p.GetHead().GetSHA(),
		BaseSHA:     p.GetBase().GetSHA(),
		Title:       p.GetTitle(),
		Body:        p.GetBody(),
		Draft:       p.GetDraft(),
		Author:      p.GetUser().GetLogin(),
		Association: strings.ToUpper(p.GetAuthorAssociation()),
		// A deleted fork comes back as a null head repository; GitHub gives
		// its workflows no secrets either.
		Fork: p.GetHead().GetRepo() == nil || p.GetHead().GetRepo().GetFullName() != p.GetBase().GetRepo().GetFullName(),
	}
	pr.HeadRepo = p.GetHead().GetRepo().GetFullName()
	pr.Bot = p.GetUser().GetType() == "Bot" || strings.HasSuffix(pr.Author, "[bot]")
	return pr
}

// ReviewedActions are the pull_request event actions that start a review.
var ReviewedActions = map[string]bool{"opened": true, "synchronize": true, "reopened": true, "ready_for_review": true}

// NotReviewedError marks an event the Action deliberately does not review.
type NotReviewedError struct{ Why string }

func (e *NotReviewedError) Error() string { return e.Why }

// ParsePullRequest decodes the event into the pull request to review; for
// workflow_dispatch it asks GitHub for the pull request prNumber (or the
// dispatch inputs) names.
func ParsePullRequest(ctx context.Context, ev Event, prNumber int, client *ghreport.Client, owner, repo string) (*PullRequest, error) {
	data, err := ev.data()
	if err != nil {
		return nil, err
	}
	switch ev.Name {
	case "pull_request", "pull_request_target":
		// pull_request_target has pull_request's payload; it runs with the
		// base repository's secrets and a write token on a fork's change,
		// which warden never builds or runs: it diffs git objects and reads
		// its configuration from the base revision (loadTrusted).
		var e gh.PullRequestEvent
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, inputErrorf("event file %s: not a %s event: %v", ev.Path, ev.Name, err)
		}
		if e.PullRequest == nil || e.PullRequest.GetHead().GetSHA() == "" {
			return nil, inputErrorf("event file %s: %s event without a pull request head", ev.Path, ev.Name)
		}
		if !ReviewedActions[e.GetAction()] {
			return nil, &NotReviewedError{fmt.Sprintf("%s action %q is not reviewed (only opened, synchronize, reopened, ready_for_review)", ev.Name, e.GetAction())}
		}
		return fromGitHub(owner, repo, e.PullRequest), nil
	case "workflow_dispatch":
		number, err := dispatchNumber(ev.Path, data, prNumber)
		if err != nil {
			return nil, err
		}
		p, err := client.PullRequest(ctx, number)
		if err != nil {
			return nil, fmt.Errorf("pull request #%d: %w", number, err)
		}
		return fromGitHub(owner, repo, p), nil
	case "":
		return nil, inputErrorf("GITHUB_EVENT_NAME is not set: 'warden action' runs inside GitHub Actions")
	case "workflow_run":
		return nil, inputErrorf("event workflow_run: run warden with mode: report there, to publish the report of an analyze run")
	default:
		return nil, inputErrorf("event %q is not supported: run warden on pull_request, pull_request_target or workflow_dispatch", ev.Name)
	}
}

// dispatchNumber is the pull request a workflow_dispatch names: the
// pr-number input, else the dispatch's own inputs.
func dispatchNumber(path string, data []byte, number int) (int, error) {
	var e gh.WorkflowDispatchEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return 0, inputErrorf("event file %s: not a workflow_dispatch event: %v", path, err)
	}
	if number == 0 {
		var inputs map[string]any
		_ = json.Unmarshal(e.Inputs, &inputs)
		for _, k := range []string{"pr-number", "pr_number", "pull_request"} {
			if v, ok := inputs[k]; ok {
				number, _ = strconv.Atoi(strings.TrimSpace(fmt.Sprint(v)))
			}
		}
	}
	if number <= 0 {
		return 0, inputErrorf("workflow_dispatch needs the pull request number: set the pr-number input")
	}
	return number, nil
}

// ParseWorkflowRun decodes the workflow_run event that starts mode report.
func ParseWorkflowRun(ev Event) (*gh.WorkflowRun, error) {
	if ev.Name != "workflow_run" {
		return nil, inputErrorf("mode report publishes the report of an analyze run: run it on workflow_run, not %q", ev.Name)
	}
	data, err := ev.data()
	if err != nil {
		return nil, err
	}
	var e gh.WorkflowRunEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, inputErrorf("event file %s: not a workflow_run event: %v", ev.Path, err)
	}
	run := e.GetWorkflowRun()
	switch {
	case run == nil || !gitrepo.IsSHA(run.GetHeadSHA()):
		return nil, inputErrorf("event file %s: workflow_run event without the run's head commit", ev.Path)
	case e.GetAction() != "completed":
		return nil, &NotReviewedError{fmt.Sprintf("workflow_run action %q: only a completed run's report is published", e.GetAction())}
	case run.GetEvent() != "pull_request":
		return nil, &NotReviewedError{fmt.Sprintf("the run that triggered this workflow ran on %q, not pull_request: it reviewed no pull request", run.GetEvent())}
	}
	return run, nil
}
