package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// Publisher publishes a review of a pull request to GitHub: it is the
// Action's review.Publisher. It owns the check run's lifecycle (Begin
// creates it in progress; Publish, or Complete for a run that reviewed
// nothing, completes it once with its conclusion and title), the check
// run's annotations, the pull request review with its 422 fallbacks, the
// read-only fallback to workflow-command annotations when the token cannot
// write, and the publish deadline.
//
// A Publisher publishes one report; it is not safe for concurrent use.
type Publisher struct {
	Client      *Client
	CheckName   string
	HeadSHA     string // the commit the check run is on
	PullRequest int    // the pull request the review is posted on
	// Anchors are the lines of the diff GitHub accepts comments on.
	Anchors    Anchors
	Thresholds review.Thresholds
	// IncompleteConclusion is the conclusion of a partial or
	// provider-unavailable review (IncompleteConclusions).
	IncompleteConclusion string
	// RequestChanges asks for changes when a finding blocks (ReviewEvent).
	RequestChanges bool
	// NoReview publishes the check run alone (a stale report's).
	NoReview bool
	// Stale marks a report of a commit that is no longer the head: its
	// title says so (StaleTitle).
	Stale bool
	// Summary renders the check run's summary (Markdown) of a report.
	Summary func(*review.Report) (string, error)
	// Records, when set, are the hidden records of a report for later
	// runs (CheckOutput.Records): the review's state.
	Records func(*review.Report) []string
	// ExternalID is the check run's reference for the integrator (the
	// pull request it reviews: GitHub gives a fork's check run no
	// pull_requests).
	ExternalID string
	// IncompleteActions are the buttons an incomplete review's check run
	// carries (the Resume review button); none on a complete one.
	IncompleteActions []CheckAction
	// Posted, Dismissed and Overflow are the review's (ReviewOptions):
	// the marks warden's findings comment holds, the findings this run
	// left out as dismissed, and what keeps the findings that do not go
	// inline.
	Posted    []report.Mark
	Dismissed []review.Finding
	Overflow  func(ctx context.Context, fs []review.Finding) (string, error)
	// Budget and Started set the publish deadline: what the review's budget
	// has left after Started, and at least PublishFloor, even when the
	// review was cancelled: what finished is still posted.
	Budget  time.Duration
	Started time.Time
	// ReadOnlyHint is what the warning says when the token cannot create
	// check runs.
	ReadOnlyHint string
	// Commands receives the workflow commands of the read-only fallback;
	// Warn the warnings (workflow commands too); Log one line per posted
	// review.
	Commands io.Writer
	Warn     func(format string, args ...any)
	Log      io.Writer

	checkID   int64
	app       string
	began     bool
	readOnly  bool
	completed bool
}

// App is the GitHub App the check run belongs to (the token's:
// "github-actions" for a workflow's GITHUB_TOKEN); "" before Begin or
// when it could not be created.
func (p *Publisher) App() string { return p.app }

// PublishFloor is the least time publishing gets.
const PublishFloor = time.Minute

// Begin creates the check run, in progress. A token that cannot write
// makes the publisher read-only (findings go to workflow-command
// annotations); any other failure is a warning, and the review goes on.
func (p *Publisher) Begin(ctx context.Context) {
	if p.began {
		return
	}
	p.began = true
	id, app, err := p.Client.StartCheckRun(ctx, p.CheckName, p.HeadSHA, p.ExternalID)
	p.app = app
	switch {
	case errors.Is(err, ErrNoWriteAccess):
		p.readOnly = true
		p.warn("warden: %s", p.ReadOnlyHint)
	case err != nil:
		p.warn("warden: creating the check run failed: %v", err)
	default:
		p.checkID = id
	}
}

// Complete completes the check run (creating it first when Begin was not
// called, within the publish deadline) with out, once: later calls do
// nothing.
func (p *Publisher) Complete(ctx context.Context, out CheckOutput) {
	if p.completed {
		return
	}
	ctx, cancel := p.deadline(ctx)
	defer cancel()
	p.Begin(ctx)
	if p.checkID == 0 {
		return
	}
	p.completed = true
	if err := p.Client.CompleteCheckRun(ctx, p.checkID, out); err != nil {
		p.warn("warden: completing the check run failed: %v", err)
	}
}

// Publish posts the review (unless NoReview), completes the check run with
// the report's conclusion, title, summary and annotations, and when
// the token cannot write, writes the findings as workflow-command
// annotations. A ctx that is done marks the review cancelled; publishing
// runs on to its own deadline. Failures are warnings: Publish returns an
// error only when the summary cannot be rendered.
func (p *Publisher) Publish(ctx context.Context, r *review.Report) error {
	cancelled := ctx.Err() != nil
	// The review goes first, so that what GitHub's write limits kept off
	// the pull request is in the summary (Summary.NotPosted) and in the
	// report that later sinks write.
	if !p.readOnly && !p.NoReview {
		p.postReview(ctx, r, cancelled)
	}
	summary, err := p.Summary(r)
	if err != nil {
		return err
	}
	title := Title(r, cancelled)
	if p.Stale {
		title = StaleTitle(title)
	}
	conclusion := Conclusion(r, p.Thresholds.FailOn, p.IncompleteConclusion, cancelled)
	var records []string
	if p.Records != nil {
		records = p.Records(r)
	}
	if Acceptable(r, p.Thresholds.FailOn, cancelled) && !p.Stale {
		summary = IncompleteNote(conclusion) + "\n\n" + summary
		records = append(records, AcceptableRecord)
	}
	out := CheckOutput{
		Conclusion:  conclusion,
		Title:       title,
		Summary:     summary,
		Annotations: p.Thresholds.Shown(r.Findings),
		Records:     records,
	}
	if !r.Complete() || cancelled {
		out.Actions = p.IncompleteActions
	}
	p.Complete(ctx, out)
	if p.readOnly {
		written, dropped := WriteAnnotations(p.Commands, r.Findings, p.Thresholds.ReportOn)
		if dropped > 0 {
			p.warn("warden: %d findings shown as annotations, %d more only in the job summary (GitHub shows at most 10 warnings and 10 errors per step)", written, dropped)
		}
	}
	return nil
}

// postReview posts the findings as a pull request review; a token that
// cannot write makes the publisher read-only.
func (p *Publisher) postReview(ctx context.Context, r *review.Report, cancelled bool) {
	ctx, cancel := p.deadline(ctx)
	defer cancel()
	res, err := p.Client.PostReview(ctx, p.PullRequest, p.HeadSHA, r.Findings, p.Anchors, ReviewOptions{
		Event:     ReviewEvent(r, p.Thresholds.FailOn, p.RequestChanges),
		FailOn:    p.Thresholds.FailOn,
		ReportOn:  p.Thresholds.ReportOn,
		Body:      Title(r, cancelled),
		Posted:    p.Posted,
		Dismissed: p.Dismissed,
		Overflow:  p.Overflow,
	})
	switch {
	case errors.Is(err, ErrNoWriteAccess):
		p.readOnly = true
		p.warn("warden: the token cannot write pull request reviews (a fork pull request has a read-only token): results go to annotations and the job summary")
	case errors.Is(err, ErrWriteBudget):
		r.Summary.NotPosted = max(0, len(p.Thresholds.Shown(r.Findings))-res.Duplicates)
		p.warn("warden: %v: %d findings are in the check run and the report, not on the pull request", err, r.Summary.NotPosted)
	case err != nil:
		p.warn("warden: posting the review failed: %v", err)
	case p.Log != nil:
		fmt.Fprintf(p.Log, "warden: review posted: %d comments, %d already present, %d in the review body, %d left out of the body for length (they are in the check run), %d below report-on, %d in warden's findings comment\n",
			res.Posted, res.Duplicates, res.InBody, res.Omitted, res.Below, res.Overflow)
	}
}

// deadline is the publish context: detached from ctx's cancellation, ended
// by what the budget has left, and never shorter than PublishFloor.
func (p *Publisher) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	d := max(time.Until(p.Started.Add(p.Budget)), PublishFloor)
	return context.WithTimeout(context.WithoutCancel(ctx), d)
}

func (p *Publisher) warn(format string, args ...any) {
	if p.Warn != nil {
		p.Warn(format, args...)
	}
}

// ReviewEvent is the review event of a report: REQUEST_CHANGES when asked
// for and a finding blocks, else COMMENT. warden never approves.
func ReviewEvent(r *review.Report, failOn review.Severity, requestChanges bool) string {
	if requestChanges && review.Blocking(r.Findings, failOn) {
		return EventRequestChanges
	}
	return EventComment
}
