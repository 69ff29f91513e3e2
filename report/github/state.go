package github

import (
	"context"
	"fmt"
	"regexp"

	gh "github.com/google/go-github/v62/github"
)

// ReviewState is what a run records for the next one in its check run's
// summary, as a hidden marker: the head it reviewed and whether that
// review was complete. A push's run reads it from the check run on the
// push's "before" commit and reviews only what changed since (review.Since,
// review.IncrementalFrom).
type ReviewState struct {
	Head     string // the full SHA reviewed
	Complete bool
}

// stateRE reads StateMarker's marker; the summary is warden's own text, and
// model text in it cannot forge a marker (neutralize escapes "<").
var stateRE = regexp.MustCompile(`<!-- warden:state:v1 head=([0-9a-f]{40}) complete=(true|false) -->`)

// StateMarker is the hidden marker of s, for the end of the check run's
// summary.
func StateMarker(s ReviewState) string {
	return fmt.Sprintf("<!-- warden:state:v1 head=%s complete=%t -->", s.Head, s.Complete)
}

// ParseState reads the last state marker in text.
func ParseState(text string) (ReviewState, bool) {
	ms := stateRE.FindAllStringSubmatch(text, -1)
	if len(ms) == 0 {
		return ReviewState{}, false
	}
	m := ms[len(ms)-1]
	return ReviewState{Head: m[1], Complete: m[2] == "true"}, true
}

// LastReviewState reads the state recorded by the newest completed check
// run named name on commit sha that the GitHub Actions app created (a
// check run of that name by another app proves nothing). ok is false when
// there is none.
func (c *Client) LastReviewState(ctx context.Context, name, sha string) (s ReviewState, ok bool, err error) {
	runs, err := c.checkRuns(ctx, name, sha)
	if err != nil {
		return s, false, err
	}
	for _, run := range runs {
		if run.Status != "completed" {
			continue
		}
		if st, found := ParseState(run.Summary); found {
			return st, true, nil
		}
	}
	return s, false, nil
}

// CheckRunInfo is a check run as GitHub lists it.
type CheckRunInfo struct {
	ID                         int64
	HeadSHA                    string
	Status, Conclusion         string
	Title, Summary, DetailsURL string
}

// LatestCheckRun returns the newest check run named name on commit sha
// that the GitHub Actions app created: the one branch protection gates
// on. ok is false when there is none.
func (c *Client) LatestCheckRun(ctx context.Context, name, sha string) (CheckRunInfo, bool, error) {
	runs, err := c.checkRuns(ctx, name, sha)
	if err != nil || len(runs) == 0 {
		return CheckRunInfo{}, false, err
	}
	return runs[0], true, nil
}

// checkRuns lists the check runs named name on sha that the GitHub
// Actions app created, newest first.
func (c *Client) checkRuns(ctx context.Context, name, sha string) ([]CheckRunInfo, error) {
	op := fmt.Sprintf("list check runs of %.7s", sha)
	opts := &gh.ListCheckRunsOptions{CheckName: gh.String(name), ListOptions: gh.ListOptions{PerPage: 100}}
	// GitHub API docs: https://docs.github.com/rest/checks/runs#list-check-runs-for-a-git-reference
	res, _, err := c.gh.Checks.ListCheckRunsForRef(ctx, c.owner, c.repo, sha, opts)
	if err != nil {
		return nil, c.fail(op, false, err)
	}
	var out []CheckRunInfo
	for _, run := range res.CheckRuns {
		if run.GetName() != name {
			continue
		}
		if app := run.GetApp(); app != nil && app.GetSlug() != "" && app.GetSlug() != "github-actions" {
			continue
		}
		out = append(out, CheckRunInfo{
			ID: run.GetID(), HeadSHA: run.GetHeadSHA(), Status: run.GetStatus(), Conclusion: run.GetConclusion(),
			Title: run.GetOutput().GetTitle(), Summary: run.GetOutput().GetSummary(), DetailsURL: run.GetDetailsURL(),
		})
	}
	return out, nil
}
