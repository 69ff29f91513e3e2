package action

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/org/warden/bot"
	"github.com/org/warden/internal/gitrepo"
	"github.com/org/warden/report"
	ghreport "github.com/org/warden/report/github"
)

// Reactions warden gives a command's comment.
const (
	reactStart  = "eyes"     // the command was read and runs
	reactDone   = "rocket"   // it ran to the end
	reactFailed = "confused" // it could not finish
)

// isCommandEvent reports whether the event may carry a /warden command.
func isCommandEvent(name string) bool {
	return name == bot.EventIssueComment || name == bot.EventReviewComment
}

// command runs a /warden command from a comment event. The event runs with
// the base repository's secrets and a write token, like
// pull_request_target: only commenters the configuration trusts (by
// author_association) run anything; anyone else gets a short reply and no
// model call. The review itself follows the pull_request_target rules:
// configuration and skills from the base revision, the head as data.
func (a *runner) command(ctx context.Context, ev Event) (Result, error) {
	data, err := ev.data()
	if err != nil {
		return Result{}, err
	}
	ce, err := bot.ParseEvent(ev.Name, data)
	if err != nil {
		return Result{}, inputErrorf("event file %s: %v", ev.Path, err)
	}
	d := bot.Decide(ce.Comment, a.in.CommandTrust)
	gh := a.svc.GitHub
	reply := func(body string) {
		var err error
		if ce.ReviewComment {
			err = gh.Reply(ghreport.Essential(ctx), ce.PullRequest, replyRoot(ce), body)
		} else {
			_, err = gh.Comment(ghreport.Essential(ctx), ce.PullRequest, body)
		}
		if err != nil {
			a.gha.Warningf("warden: replying to the command failed: %v", err)
		}
	}
	react := func(content string) {
		if err := gh.React(ghreport.Essential(ctx), ce.CommentID, ce.ReviewComment, content); err != nil {
			a.gha.Warningf("warden: reacting to the command failed: %v", err)
		}
	}
	switch d.Verdict {
	case bot.Ignore:
		return a.skip(fmt.Sprintf("%s event: no command to run", ev.Name))
	case bot.Refuse:
		if d.Untrusted && a.refusedBefore(ctx, ce) {
			// One reply per pull request for untrusted commenters: a
			// stranger's burst of comments gets no burst of replies.
			return a.skip("command refused, not replied to: an untrusted commenter was already told on this pull request")
		}
		if d.Untrusted {
			d.Reply += "\n\n" + refusedMarker
		}
		reply(d.Reply)
		return a.skip("command refused: " + firstLine(d.Reply))
	}
	react(reactStart)
	var res Result
	failed := false
	switch d.Command.Kind {
	case bot.Help:
		reply(d.Reply)
	case bot.Dismiss:
		failed = !a.dismiss(ctx, ce, d.Command.Reason, reply)
	case bot.Accept:
		failed = !a.accept(ctx, ce, d.Command.Reason, reply)
	case bot.Review, bot.Resume:
		res, err = a.commandReview(ctx, ce, d.Command)
	}
	if err != nil {
		react(reactFailed)
		return res, err
	}
	if failed || (res.Report != nil && !res.Report.Complete()) {
		react(reactFailed)
	} else {
		react(reactDone)
	}
	if d.Command.Kind == bot.Help || d.Command.Kind == bot.Dismiss || d.Command.Kind == bot.Accept {
		return Result{Verdict: VerdictSkipped}, nil
	}
	return res, nil
}

// refusedMarker is the hidden line of the one reply an untrusted commenter
// gets on a pull request.
const refusedMarker = "<!-- warden:untrusted-command-refused -->"

// refusedBefore reports whether warden already told an untrusted commenter
// on ce's pull request that commands are not theirs to run (a conversation
// comment with refusedMarker, by the token's own account: GitHub's bot for
// the Actions token). When the comments cannot be read it says no: the
// reply is then sent, as before.
func (a *runner) refusedBefore(ctx context.Context, ce bot.Event) bool {
	found, err := a.svc.GitHub.HasComment(ctx, ce.PullRequest, refusedMarker)
	if err != nil {
		a.gha.Warningf("warden: reading the pull request's comments: %v", err)
		return false
	}
	return found
}

// replyRoot is the review comment a reply goes under: the thread's first
// comment.
func replyRoot(ce bot.Event) int64 {
	if ce.Comment.ReplyTo != 0 {
		return ce.Comment.ReplyTo
	}
	return ce.CommentID
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// commandReview runs /warden review or /warden resume on the pull request
// the comment is on, at its current head. A review is fresh (the results
// cache is not read, only written); a resume reads it, so only the items
// the last review did not finish call the model.
func (a *runner) commandReview(ctx context.Context, ce bot.Event, cmd bot.Command) (Result, error) {
	p, err := a.svc.GitHub.PullRequest(ctx, ce.PullRequest)
	if err != nil {
		return Result{}, fmt.Errorf("pull request #%d: %w", ce.PullRequest, err)
	}
	pr := fromGitHub(a.svc.Owner, a.svc.Repo, p)
	opts := reviewOptions{trusted: true, fresh: cmd.Kind == bot.Review, command: true}
	if len(cmd.Skills) > 0 {
		opts.skills = cmd.Skills
	}
	return a.reviewPR(ctx, Event{Name: "pull_request_target"}, pr, opts)
}

// dismiss records a trusted `/warden dismiss` on one of warden's findings:
// a reply in its thread carrying the dismissal marker, which later runs
// read (ghreport.Follow) to leave the finding out.
func (a *runner) dismiss(ctx context.Context, ce bot.Event, reason string, reply func(string)) bool {
	threads, err := a.svc.GitHub.ReviewThreads(ctx, ce.PullRequest)
	if err != nil {
		a.gha.Warningf("warden: dismiss: reading review threads: %v", err)
		return false
	}
	for _, t := range threads {
		if t.RootID != ce.Comment.ReplyTo {
			continue
		}
		text := fmt.Sprintf("Dismissed by @%s", ce.Comment.Author)
		if reason != "" {
			text += ": " + strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(reason)
		}
		reply(text + ". warden will not post this finding again on this pull request. " + ghreport.DismissedMarker(t.Fingerprint))
		return true
	}
	reply("warden: `/warden dismiss` works as a reply to one of warden's own review comments; this thread is not one. Nothing was dismissed.")
	return false
}

// accept records a trusted `/warden accept [reason]`: the check run of
// the pull request's current head, when it fails required checks only
// because its review is incomplete (ghreport.Acceptable), is completed
// again as accepted (ghreport.AcceptedOutput): it passes, and its summary
// records who accepted which commit, when and why. A check that is
// running, already passes, or fails on findings is left as it is, and the
// reply says why.
func (a *runner) accept(ctx context.Context, ce bot.Event, reason string, reply func(string)) bool {
	gh := a.svc.GitHub
	p, err := gh.PullRequest(ctx, ce.PullRequest)
	if err != nil {
		a.gha.Warningf("warden: accept: reading pull request #%d: %v", ce.PullRequest, err)
		reply("warden: could not read the pull request; nothing was accepted.")
		return false
	}
	head := p.GetHead().GetSHA()
	short := gitrepo.Short(head)
	run, ok, err := gh.LatestCheckRun(ctx, a.in.CheckName, head)
	if err != nil {
		a.gha.Warningf("warden: accept: %v", err)
		reply("warden: could not read the check runs of " + short + "; nothing was accepted.")
		return false
	}
	why := ""
	switch {
	case !ok:
		why = fmt.Sprintf("there is no `%s` check run on the head commit %s to accept", a.in.CheckName, short)
	case run.Status != "completed":
		why = fmt.Sprintf("the review of %s is still running; accept it when it has ended", short)
	case ghreport.Passes(run.Conclusion):
		why = fmt.Sprintf("the check run on %s already passes (%s)", short, run.Conclusion)
	case !ghreport.IsAcceptable(run.Summary):
		why = fmt.Sprintf("the check run on %s does not fail for an incomplete review (%s): findings at or above fail-on are fixed or dismissed (`/warden dismiss`), an error is fixed, not accepted", short, report.Neutralize(report.OneLine(run.Title), ""))
	}
	if why != "" {
		reply("warden: " + why + ". Nothing was accepted.")
		return false
	}
	out := ghreport.AcceptedOutput(run.Title, run.Summary, ghreport.Acceptance{By: ce.Comment.Author, Commit: head, Reason: reason, At: time.Now()})
	if err := gh.CompleteCheckRun(ctx, run.ID, out); err != nil {
		a.gha.Warningf("warden: accept: %v", err)
		reply("warden: could not update the check run on " + short + "; nothing was accepted.")
		return false
	}
	reply(fmt.Sprintf("warden: @%s accepted the incomplete review of %s: its check run now passes required checks and records who accepted it, when and why. What it did not review stays unreviewed.", ce.Comment.Author, short))
	return true
}
