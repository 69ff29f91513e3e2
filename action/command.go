package action

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/org/warden/bot"
	"github.com/org/warden/ghbot"
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
// author_association, a first filter that costs no request) and, for a
// command that acts, who may write to the repository (looked up: permit)
// run anything; anyone else gets a short reply and no model call. The
// review itself follows the pull_request_target rules: configuration and
// skills from the base revision, the head as data.
//
// A review comment on a fork's pull request is the exception: GitHub runs
// its workflow as the fork has it, read-only and without secrets, so the
// run only records the command (recordCommand) for the follow-up workflow
// (commandFollowUp).
func (a *runner) command(ctx context.Context, ev Event) (Result, error) {
	data, err := ev.data()
	if err != nil {
		return Result{}, err
	}
	ce, err := bot.ParseEvent(ev.Name, data)
	if err != nil {
		return Result{}, inputErrorf("event file %s: %v", ev.Path, err)
	}
	if ce.ReviewComment && !strings.EqualFold(ce.HeadRepo, a.svc.Owner+"/"+a.svc.Repo) {
		return a.recordCommand(ce)
	}
	return a.runCommand(ctx, ev.Name, ce)
}

// runCommand decides on and runs the command of comment ce.
func (a *runner) runCommand(ctx context.Context, event string, ce bot.Event) (Result, error) {
	d := bot.Decide(ce.Comment, a.commandPolicy())
	if d.Verdict != bot.Ignore {
		if err := a.sealFor(ctx, ce.PullRequest); err != nil {
			return Result{}, err
		}
	}
	if d.Verdict == bot.NeedsPermission {
		d = a.permit(ctx, ce, d)
	}
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
		return a.skip(fmt.Sprintf("%s event: no command to run", event))
	case bot.Refuse:
		if d.Untrusted && a.refusedBefore(ctx, ce) {
			// One reply per pull request for untrusted commenters: a
			// stranger's burst of comments gets no burst of replies.
			return a.skip("command refused, not replied to: an untrusted commenter was already told on this pull request")
		}
		if d.Untrusted {
			d.Reply += "\n\n" + gh.Mark(refusedRecord)
		}
		reply(d.Reply)
		return a.skip("command refused: " + firstLine(d.Reply))
	}
	react(reactStart)
	if why := a.superseded(ctx, ce, d.Command); why != "" {
		reply(why)
		react(reactDone)
		return a.skip(firstLine(why))
	}
	var res Result
	var err error
	failed := false
	switch d.Command.Kind {
	case bot.Help:
		reply(d.Reply)
	case bot.Dismiss:
		failed = !a.dismiss(ctx, ce, d.Command, reply)
	case bot.Accept:
		failed = !a.accept(ctx, ce, d.Command.Reason, reply)
	case bot.Review, bot.Resume:
		res, err = a.commandReview(ctx, ce.PullRequest, d.Command)
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

// commandPolicy is the inputs' part of who may run a command.
func (a *runner) commandPolicy() bot.Policy {
	return bot.Policy{Trusted: a.in.CommandTrust, SelfAccept: a.in.AllowSelfAccept}
}

// permit resolves a command that needs the commenter's permission on the
// repository: it is looked up the way the Resume review button and the
// thumbs-down rule look it up (ghreport.Maintainers, one request), and bot
// decides with the answer. A failed lookup refuses the command (bot's
// reply says so) and the log says why.
func (a *runner) permit(ctx context.Context, ce bot.Event, d bot.Decision) bot.Decision {
	writers := &ghreport.Maintainers{Client: a.svc.GitHub}
	access, err := writers.Access(ctx, ce.Comment.Author)
	if err != nil {
		a.gha.Warningf("warden: %v; the /warden %s command is not run", err, d.Command.Kind)
		return d.Permit("", false)
	}
	return d.Permit(access.Role, access.Writes())
}

// recordCommand is a review comment's run on a fork's pull request: it
// runs the fork's workflow file, with a read-only token and no secrets,
// so it acts on nothing and only records the comment's id (ghbot's
// command record) for action.yml's upload step; the follow-up workflow
// (workflow_run, the default branch's file) acts on it and answers.
func (a *runner) recordCommand(ce bot.Event) (Result, error) {
	if d := bot.Decide(ce.Comment, a.commandPolicy()); d.Verdict == bot.Ignore {
		return a.skip("pull_request_review_comment event: no command to run")
	}
	dir := filepath.Join(cmp.Or(a.svc.RunnerTemp, os.TempDir()), "warden-command")
	if err := ghbot.WriteCommandRecord(dir, ghbot.CommandRecord{CommentID: ce.CommentID}); err != nil {
		return Result{}, fmt.Errorf("recording the command: %w", err)
	}
	a.gha.SetOutput("command-path", dir)
	a.gha.SetOutput("command-artifact", ghbot.CommandArtifact)
	msg := fmt.Sprintf("the command in review comment %d is on a fork's pull request, whose pull_request_review_comment runs execute the fork's workflow file with a read-only token: recorded (artifact %s) for the follow-up workflow, which acts on it with the base repository's workflow and answers in the thread; nothing is done here",
		ce.CommentID, ghbot.CommandArtifact)
	a.gha.Noticef("warden: %s", msg)
	a.gha.AddStepSummary("## warden: command recorded\n\n" + strings.ToUpper(msg[:1]) + msg[1:] + ".\n")
	a.gha.SetOutput("outcome", "skipped")
	return Result{Verdict: VerdictSkipped}, nil
}

// commandFollowUp is the privileged half of a command on a fork's pull
// request: a workflow_run event of the commands workflow's run on a
// pull_request_review_comment. The triggering run must be of the
// commands workflow the inputs name (command-workflow, its file, and
// command-workflow-name): the follow-up workflow's `workflows:` filter
// matches by name, which a fork's own workflow file can take. It reads the
// comment id that run recorded, and everything else from GitHub: the
// comment's text, author and association, and its pull request, which
// must be the one whose head the triggering run ran (a record naming
// another comment is refused). A comment already taken up (takeUp) is not
// run twice.
func (a *runner) commandFollowUp(ctx context.Context, ev Event) (Result, error) {
	data, err := ev.data()
	if err != nil {
		return Result{}, err
	}
	var e struct {
		WorkflowRun *struct {
			ID             int64     `json:"id"`
			Name           string    `json:"name"`
			Path           string    `json:"path"`
			Event          string    `json:"event"`
			CreatedAt      time.Time `json:"created_at"`
			HeadRepository *struct {
				FullName string `json:"full_name"`
			} `json:"head_repository"`
		} `json:"workflow_run"`
		// Workflow is the run's workflow; older payloads carry its path
		// only here.
		Workflow *struct {
			Path string `json:"path"`
		} `json:"workflow"`
	}
	if err := json.Unmarshal(data, &e); err != nil || e.WorkflowRun == nil || e.WorkflowRun.ID == 0 {
		return Result{}, inputErrorf("event file %s: not a workflow_run event with its run (mode full follows up the commands workflow's runs; to publish an analyze run's report, run warden with mode: report)", ev.Path)
	}
	run := e.WorkflowRun
	if run.Event != bot.EventReviewComment {
		return a.skip(fmt.Sprintf("workflow_run of a %s run: nothing to follow up (mode full follows up the commands workflow's pull_request_review_comment runs; mode report publishes an analyze run's report)", run.Event))
	}
	path := run.Path
	if path == "" && e.Workflow != nil {
		path = e.Workflow.Path
	}
	if path != a.in.CommandWorkflow || run.Name != a.in.CommandWorkflowName {
		msg := fmt.Sprintf("run %d is of workflow %q (%s), not the commands workflow the inputs name (command-workflow-name %q, command-workflow %s): nothing was run. The follow-up's `workflows:` filter matches a workflow by name, which a fork's pull request can give a workflow of its own; set both inputs when the commands workflow is called otherwise",
			run.ID, run.Name, cmp.Or(path, "no path"), a.in.CommandWorkflowName, a.in.CommandWorkflow)
		a.gha.Warningf("warden: %s", msg)
		a.gha.AddStepSummary("## warden: follow-up refused\n\n" + strings.ToUpper(msg[:1]) + msg[1:] + ".\n")
		return a.skip("the triggering run is not of the commands workflow")
	}
	store := &ghbot.Store{Client: a.svc.GitHub, Storage: a.svc.Storage}
	rec, ok, err := store.CommandRecorded(ctx, run.ID)
	if err != nil {
		return Result{}, fmt.Errorf("the command record of run %d: %w", run.ID, err)
	}
	if !ok {
		return a.skip(fmt.Sprintf("run %d recorded no command (on a pull request from a branch of this repository the run acts itself)", run.ID))
	}
	c, err := store.GetReviewComment(ctx, rec.CommentID)
	if err != nil {
		return Result{}, fmt.Errorf("the recorded command: %w", err)
	}
	p, err := a.svc.GitHub.PullRequest(ctx, c.PullRequest)
	if err != nil {
		return Result{}, fmt.Errorf("pull request #%d: %w", c.PullRequest, err)
	}
	head := p.GetHead().GetRepo().GetFullName()
	switch {
	case run.HeadRepository == nil || !strings.EqualFold(head, run.HeadRepository.FullName):
		a.gha.Warningf("warden: run %d recorded review comment %d, which is on pull request #%d (head %s), not on the run's head repository: not acted on", run.ID, c.ID, c.PullRequest, head)
		return a.skip("the recorded command is not the triggering run's")
	case c.Created.Before(run.CreatedAt.Add(-time.Hour)) || c.Created.After(run.CreatedAt.Add(time.Minute)):
		a.gha.Warningf("warden: run %d recorded review comment %d, written %s, not when the run started (%s): not acted on", run.ID, c.ID, c.Created.UTC().Format(time.RFC3339), run.CreatedAt.UTC().Format(time.RFC3339))
		return a.skip("the recorded command is not the triggering run's")
	}
	if done, err := a.takeUp(ctx, store, c, run.ID); err != nil || done {
		if err != nil {
			return Result{}, err
		}
		return a.skip(fmt.Sprintf("review comment %d was already taken up", c.ID))
	}
	ce := bot.Event{
		Comment: bot.Comment{Body: c.Body, Author: c.Author, AuthorType: c.AuthorType, Association: c.Association,
			OnPullRequest: true, PullRequestAuthor: p.GetUser().GetLogin(), ReplyTo: c.ReplyTo, Action: "created"},
		PullRequest: c.PullRequest, CommentID: c.ID, ReviewComment: true, HeadRepo: head,
	}
	return a.runCommand(ctx, bot.EventReviewComment, ce)
}

// takeUp marks the command in review comment c taken up, before it runs:
// a sealed reply in its thread (ghbot.TakenRecord), which a re-run of the
// follow-up, or a second one, finds (Store.Handled). done is set when an
// earlier run took it up; an error reading the thread counts as done, so
// that nothing runs twice.
func (a *runner) takeUp(ctx context.Context, store *ghbot.Store, c ghbot.ReviewComment, runID int64) (done bool, err error) {
	if err := a.sealFor(ctx, c.PullRequest); err != nil {
		return false, err
	}
	if done, err := store.Handled(ctx, c.PullRequest, c.ID); err != nil || done {
		if err != nil {
			a.gha.Warningf("warden: review comment %d: %v; not taken up", c.ID, err)
		}
		return true, nil
	}
	gh := a.svc.GitHub
	if !gh.Sealing() {
		a.gha.Warningf("warden: review comment %d: nothing seals warden's records on this run (no state-secret, results-cache-secret or model key), so a re-run could take the command up again", c.ID)
	}
	root := c.ID
	if c.ReplyTo != 0 {
		root = c.ReplyTo
	}
	body := fmt.Sprintf("warden: taking up the command in this thread (workflow run %d).\n\n%s", runID, gh.Mark(ghbot.TakenRecord(c.ID)))
	if err := gh.Reply(ghreport.Essential(ctx), c.PullRequest, root, body); err != nil {
		return false, fmt.Errorf("marking review comment %d taken up: %w", c.ID, err)
	}
	return false, nil
}

// unsealedWhy is why a dismissal or an acceptance is refused on a run that
// cannot seal its record (seal.go).
const unsealedWhy = "nothing seals warden's records on this run (no `state-secret` input, no `results-cache-secret`, and the trusted configuration sends no model key), so a dismissal or acceptance it wrote could not be told from a forged one; a maintainer sets the `state-secret` input to a repository secret"

// refusedRecord is the hidden record that ends the one reply an untrusted
// commenter gets on a pull request (sealed: another workflow's copy of it
// must not silence warden's replies).
const refusedRecord = "untrusted-command-refused"

// refusedBefore reports whether warden already told an untrusted commenter
// on ce's pull request that commands are not theirs to run (a conversation
// comment ending with refusedRecord, sealed, by the token's own account: GitHub's bot for
// the Actions token). When the comments cannot be read it says no: the
// reply is then sent, as before.
func (a *runner) refusedBefore(ctx context.Context, ce bot.Event) bool {
	found, err := a.svc.GitHub.HasRecord(ctx, ce.PullRequest, refusedRecord)
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

// commandReview runs /warden review or /warden resume on pull request
// number, at its current head. A review is fresh (the results cache is not
// read, only written); a resume reads it, so only the items the last
// review did not finish call the model.
func (a *runner) commandReview(ctx context.Context, number int, cmd bot.Command) (Result, error) {
	p, err := a.svc.GitHub.PullRequest(ctx, number)
	if err != nil {
		return Result{}, fmt.Errorf("pull request #%d: %w", number, err)
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
// read (ghreport.Follow) to leave the finding out; or, for a dismissal
// naming a finding's id (cmd.Target), the entry in warden's findings
// comment (dismissByID).
func (a *runner) dismiss(ctx context.Context, ce bot.Event, cmd bot.Command, reply func(string)) bool {
	if !a.svc.GitHub.Sealing() {
		reply("warden: " + unsealedWhy + ". Nothing was dismissed.")
		return false
	}
	if cmd.Target != "" {
		return a.dismissByID(ctx, ce, cmd, reply)
	}
	threads, err := a.svc.GitHub.ReviewThreads(ctx, ce.PullRequest)
	if err != nil {
		a.gha.Warningf("warden: dismiss: reading review threads: %v", err)
		return false
	}
	for _, t := range threads {
		if t.RootID != ce.Comment.ReplyTo {
			continue
		}
		reply(dismissedText(ce.Comment.Author, cmd.Reason) + ". warden will not post this finding again on this pull request." + a.svc.GitHub.DismissedMarker(t.Mark.Fingerprint))
		return true
	}
	reply("warden: `/warden dismiss` works as a reply to one of warden's own review comments; this thread is not one. Nothing was dismissed.")
	return false
}

// dismissedText is "Dismissed by @login: reason", the reason's markup
// made inert.
func dismissedText(login, reason string) string {
	text := fmt.Sprintf("Dismissed by @%s", login)
	if reason != "" {
		text += ": " + strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(reason)
	}
	return text
}

// dismissByID dismisses the finding cmd.Target names: an entry of warden's
// findings comment (marked dismissed there, in warden's own comment), or
// an inline finding whose fingerprint the id starts (the record in its
// thread). The commenter is answered either way.
func (a *runner) dismissByID(ctx context.Context, ce bot.Event, cmd bot.Command, reply func(string)) bool {
	gh := a.svc.GitHub
	ledger, err := ghbot.LoadLedger(ctx, gh, ce.PullRequest)
	if err != nil {
		a.gha.Warningf("warden: dismiss: reading warden's findings comment: %v", err)
		reply("warden: warden's findings comment could not be read, so nothing was dismissed; try again.")
		return false
	}
	if e, ok := ledger.Dismiss(cmd.Target, ce.Comment.Author, cmd.Reason); ok {
		text := fmt.Sprintf("Dismissed `%s` (%s) — %s. warden will not post this finding again on this pull request.",
			e.ID(), report.Neutralize(e.Title, gh.RepoURL()), strings.TrimPrefix(dismissedText(ce.Comment.Author, cmd.Reason), "Dismissed "))
		// The record of the dismissal first, append-only in the
		// conversation: it holds whatever another run's save of the
		// findings comment does; then the findings comment shows it.
		rec, ok := ghbot.DismissalRecord(e, ce.Comment.Author)
		if !ok {
			reply("warden: @" + ce.Comment.Author + " is not a login warden can record; nothing was dismissed.")
			return false
		}
		if _, err := gh.Comment(ghreport.Essential(ctx), ce.PullRequest, text+"\n\n"+gh.Mark(rec)); err != nil {
			a.gha.Warningf("warden: dismiss: recording the dismissal: %v", err)
			reply("warden: the dismissal could not be recorded, so nothing was dismissed; try again.")
			return false
		}
		if err := ledger.Save(ctx, ""); err != nil {
			a.gha.Warningf("warden: dismiss: the dismissal is recorded; updating warden's findings comment failed (the next run shows it): %v", err)
		}
		if ce.ReviewComment {
			reply(text)
		}
		return true
	}
	threads, err := gh.ReviewThreads(ctx, ce.PullRequest)
	if err == nil {
		for _, t := range threads {
			if fp := t.Mark.Fingerprint; len(fp) >= 7 && "w"+fp[:7] == cmd.Target {
				if err := gh.Reply(ghreport.Essential(ctx), ce.PullRequest, t.RootID, dismissedText(ce.Comment.Author, cmd.Reason)+". warden will not post this finding again on this pull request."+gh.DismissedMarker(fp)); err != nil {
					a.gha.Warningf("warden: dismiss: %v", err)
					return false
				}
				reply(fmt.Sprintf("Dismissed `%s` (its review thread records it). warden will not post this finding again on this pull request.", cmd.Target))
				return true
			}
		}
	}
	reply(fmt.Sprintf("warden: no finding `%s` on this pull request (the ids are in warden's findings comment). Nothing was dismissed.", cmd.Target))
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
	case !gh.Sealing():
		why = unsealedWhy
	case !ok:
		why = fmt.Sprintf("there is no `%s` check run on the head commit %s to accept", a.in.CheckName, short)
	case run.Status != "completed":
		why = fmt.Sprintf("the review of %s is still running; accept it when it has ended", short)
	case ghreport.Passes(run.Conclusion):
		why = fmt.Sprintf("the check run on %s already passes (%s)", short, run.Conclusion)
	case !gh.IsAcceptable(run, cmp.Or(a.app, strings.TrimSuffix(a.in.TokenLogin, "[bot]"))):
		why = fmt.Sprintf("the check run on %s does not fail for an incomplete review (%s): findings at or above fail-on are fixed or dismissed (`/warden dismiss`), an error is fixed, not accepted", short, report.Neutralize(report.OneLine(run.Title), ""))
	}
	if why != "" {
		reply("warden: " + why + ". Nothing was accepted.")
		return false
	}
	out := gh.AcceptedOutput(run.Title, run.Summary, ghreport.Acceptance{By: ce.Comment.Author, Commit: head, Reason: reason, At: time.Now()})
	if err := gh.CompleteCheckRun(ctx, run.ID, out); err != nil {
		a.gha.Warningf("warden: accept: %v", err)
		reply("warden: could not update the check run on " + short + "; nothing was accepted.")
		return false
	}
	reply(fmt.Sprintf("warden: @%s accepted the incomplete review of %s: its check run now passes required checks and records who accepted it, when and why. What it did not review stays unreviewed.", ce.Comment.Author, short))
	return true
}
