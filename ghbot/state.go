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
// summary, as a sealed hidden record (ghreport.CheckOutput.Records): the
// head it reviewed and whether that
// review was complete. A push's run reads it from the check run on the
// push's "before" commit and reviews only what changed since (review.Since,
// review.IncrementalFrom).
type ReviewState struct {
	Head     string // the full SHA reviewed
	Complete bool
}

// stateRE reads StateRecord's text. A forged state could narrow the next
// push's review to a diff since a head nobody reviewed, so it is read only
// from the check run's sealed records (ghreport.Client.CheckRecords).
var stateRE = regexp.MustCompile(`^state:v1 head=([0-9a-f]{40}) complete=(true|false)$`)

// StateRecord is the text of s's hidden record, for the check run's
// CheckOutput.Records.
func StateRecord(s ReviewState) string {
	return fmt.Sprintf("state:v1 head=%s complete=%t", s.Head, s.Complete)
}

// ParseState reads the last state record among records (texts of sealed
// records, ghreport.Client.CheckRecords).
func ParseState(records []string) (ReviewState, bool) {
	for i := len(records) - 1; i >= 0; i-- {
		if m := stateRE.FindStringSubmatch(records[i]); m != nil {
			return ReviewState{Head: m[1], Complete: m[2] == "true"}, true
		}
	}
	return ReviewState{}, false
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
		if st, found := ParseState(c.CheckRecords(run.GetOutput().GetSummary())); found {
			return st, true, nil
		}
	}
	return s, false, nil
}
