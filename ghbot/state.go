package ghbot

import (
	"context"
	"fmt"
	"regexp"

	gh "github.com/google/go-github/v62/github"

	ghreport "github.com/org/warden/report/github"
)

// The review state moved here from report/github with the rest of what
// the bot keeps between events: it is read back by the next push's run,
// not rendered for anyone.

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
// run named name on commit sha that the GitHub Actions app or app (the
// app warden's own token acts as, "" for none) created: a check run of
// that name by another app proves nothing. ok is false when there is none.
func LastReviewState(ctx context.Context, c *ghreport.Client, name, sha, app string) (s ReviewState, ok bool, err error) {
	op := fmt.Sprintf("list check runs of %.7s", sha)
	client, owner, repo := c.REST()
	opts := &gh.ListCheckRunsOptions{CheckName: gh.String(name), ListOptions: gh.ListOptions{PerPage: 100}}
	// GitHub API docs: https://docs.github.com/rest/checks/runs#list-check-runs-for-a-git-reference
	res, _, err := client.Checks.ListCheckRunsForRef(ctx, owner, repo, sha, opts)
	if err != nil {
		return s, false, c.Fail(op, false, err)
	}
	for _, run := range res.CheckRuns {
		if run.GetStatus() != "completed" || run.GetName() != name {
			continue
		}
		if by := run.GetApp().GetSlug(); by != "" && by != "github-actions" && by != app {
			continue
		}
		if st, found := ParseState(run.GetOutput().GetSummary()); found {
			return st, true, nil
		}
	}
	return s, false, nil
}
