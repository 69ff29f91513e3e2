package action

import (
	"context"
	"fmt"

	"github.com/org/warden/bot"
	"github.com/org/warden/ghbot"
	"github.com/org/warden/internal/gitrepo"
	ghreport "github.com/org/warden/report/github"
)

// superseded is the answer to a `/warden review` or `/warden resume` in
// the conversation that a later command on the same pull request
// supersedes (bot.Supersedes): a one-line reply naming the head the later
// one reviews and linking it; "" when none does, and the command runs.
// Every command's job runs under the README's workflows (no group per pull
// request, whose pending-job rule would cancel all but the first and the
// last of a burst unanswered), so of a burst of reviews only the last
// spends the model budget, and every earlier one is told why not.
//
// A later command counts only when it will run: it parses as one, its
// author's association is trusted (bot.Decide) and the author has write,
// maintain or admin permission (the check the Resume button makes), so
// nobody else's comment keeps a command from running. A command in a
// review thread is not compared (review comments and conversation
// comments are numbered apart). When the comments or the pull request
// cannot be read, the command runs.
func (a *runner) superseded(ctx context.Context, ce bot.Event, cmd bot.Command) string {
	if ce.ReviewComment || (cmd.Kind != bot.Review && cmd.Kind != bot.Resume) {
		return ""
	}
	gh := a.svc.GitHub
	later, err := ghbot.LaterComments(ctx, gh, ce.PullRequest, ce.CommentID)
	if err != nil {
		a.gha.Warningf("warden: reading the later comments of pull request #%d: %v", ce.PullRequest, err)
		return ""
	}
	writers := &ghreport.Maintainers{Client: gh, Warn: func(line string) { a.gha.Warningf("warden: %s", line) }}
	for i := len(later) - 1; i >= 0; i-- { // the newest first: it is the one that runs
		c := later[i]
		d := bot.Decide(bot.Comment{Body: c.Body, Author: c.Author, AuthorType: c.AuthorType, Association: c.Association,
			OnPullRequest: true, Action: "created"}, a.commandPolicy())
		// A later review or resume needs write access to run (permit):
		// only then does it supersede this one.
		if d.Verdict != bot.NeedsPermission || !bot.Supersedes(d.Command, cmd) || !writers.Trusted(ctx, c.Author) {
			continue
		}
		p, err := gh.PullRequest(ctx, ce.PullRequest)
		if err != nil {
			a.gha.Warningf("warden: reading pull request #%d: %v", ce.PullRequest, err)
			return ""
		}
		return fmt.Sprintf("warden: superseded by the %s of %s requested in %s; this one does not run.",
			d.Command.Kind, gitrepo.Short(p.GetHead().GetSHA()), c.URL)
	}
	return ""
}
