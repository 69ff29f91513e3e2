package action

import (
	"context"
	"fmt"
	"regexp"

	"github.com/org/warden/bot"
	"github.com/org/warden/ghbot"
	ghreport "github.com/org/warden/report/github"
)

// userLogin is what a person's login may be; anything else is not quoted
// back.
var userLogin = regexp.MustCompile(`^[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}$`)

// buttonPress handles a check_run event: a press of the Resume review
// button on warden's check run of an incomplete review resumes the review
// exactly like `/warden resume`, when the person who pressed it has write,
// maintain or admin permission on the repository (as GitHub answers it;
// a failed lookup does not count). Anyone else gets a one-line reply on the
// pull request and nothing runs.
func (a *runner) buttonPress(ctx context.Context, ev Event) (Result, error) {
	data, err := ev.data()
	if err != nil {
		return Result{}, err
	}
	press, ok, err := ghbot.ParseButtonPress(data)
	if err != nil {
		return Result{}, inputErrorf("event file %s: %v", ev.Path, err)
	}
	switch {
	case !ok:
		return a.skip("check_run event: not a button press (only requested_action runs anything)")
	case press.Identifier != ghbot.ResumeAction.Identifier || press.CheckName != a.in.CheckName:
		return a.skip(fmt.Sprintf("check_run requested_action %q on check run %q: not warden's Resume review", press.Identifier, press.CheckName))
	case press.PullRequest == 0:
		a.gha.Warningf("warden: the Resume review button was pressed on a check run that names no pull request (no pull_requests and no external id %q)", ghbot.ExternalID(0))
		return a.skip("the button's check run names no pull request")
	}
	gh := a.svc.GitHub
	writers := &ghreport.Maintainers{Client: gh, Warn: func(line string) { a.gha.Warningf("warden: %s", line) }}
	if press.SenderType == "Bot" || !writers.Trusted(ctx, press.Sender) {
		who := "this user"
		if userLogin.MatchString(press.Sender) {
			who = "@" + press.Sender
		}
		msg := fmt.Sprintf("warden: %s cannot resume the review with the *Resume review* button: it needs write access to the repository. Nothing was run.", who)
		if _, err := gh.Comment(ghreport.Essential(ctx), press.PullRequest, msg); err != nil {
			a.gha.Warningf("warden: replying to the button press failed: %v", err)
		}
		return a.skip(fmt.Sprintf("Resume review pressed by %s, who has no write access: refused", press.Sender))
	}
	fmt.Fprintf(a.svc.Stderr, "warden: %s pressed Resume review on pull request #%d: resuming the review\n", press.Sender, press.PullRequest)
	return a.commandReview(ctx, press.PullRequest, bot.Command{Kind: bot.Resume})
}

// resumeNote is the summary's line on how to resume an incomplete
// review: the button when it works on this check run, else the command.
func resumeNote(pub *ghreport.Publisher) string {
	if ghbot.ButtonWorks(pub.App()) {
		return "**Resume:** press *Resume review* above (people with write access), or comment `/warden resume`: only the items this review did not finish call the model."
	}
	return "**Resume:** comment `/warden resume` (someone with write access to the repository): only the items this review did not finish call the model. A *Resume review* button needs the check run to come from a GitHub App's token (warden's README, \"The Resume review button\"): GitHub starts no workflow for a button on a check run its Actions token created."
}
