package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"github.com/org/warden/execution"
	"github.com/org/warden/internal/gitrepo"
	ghreport "github.com/org/warden/report/github"
	"github.com/org/warden/review"
)

// publishReport is mode report, in a workflow_run workflow: it publishes
// the report file that an analyze run on a pull request left, after
// checking that the file is a warden report of this repository, of a pull
// request of the triggering run, of the commit that run was for. The
// report's findings are untrusted: those outside the pull request's
// changed files are dropped, and the text is neutralized when posted. The
// thresholds (fail-on, report-on, max-findings) come from this run's
// inputs and the base revision's configuration, never from the report.
func (a *runner) publishReport(ctx context.Context, ev Event) (Result, error) {
	run, err := ParseWorkflowRun(ev)
	var skip *NotReviewedError
	if errors.As(err, &skip) {
		return a.skip(skip.Why)
	}
	if err != nil {
		return Result{}, err
	}
	repository := a.svc.Owner + "/" + a.svc.Repo
	path, err := a.reportPath(run, repository)
	if err != nil {
		return Result{}, err
	}
	runRef := fmt.Sprintf("workflow run %d", run.GetID())
	if u := run.GetHTMLURL(); u != "" {
		runRef = fmt.Sprintf("[workflow run %d](%s)", run.GetID(), u)
	}
	// Until the configuration is read, the default budget bounds publishing.
	pub := a.publisher(run.GetHeadSHA(), 0, execution.DefaultPolicy().Budget)
	pub.ReadOnlyHint = "the token cannot create check runs: mode report needs checks: write and pull-requests: write; results go to annotations and the job summary"
	doc, err := readReportFile(path, a.svc.Version)
	if errors.Is(err, fs.ErrNotExist) {
		return a.noReport(ctx, pub, run.GetConclusion() == ghreport.ConclusionSuccess, runRef)
	}
	invalid := func(err error) (Result, error) {
		a.complete(ctx, pub, ghreport.ErrorOutput(err, "warden did not publish the analysis report of "+runRef, "Nothing of it was published."))
		a.gha.SetOutput("outcome", "error")
		return Result{}, err
	}
	if err != nil {
		return invalid(err)
	}
	pr, err := a.reportPullRequest(ctx, run, doc.Origin, repository)
	if err != nil {
		return invalid(err)
	}
	tc, err := a.trust(ctx, pr)
	if err != nil {
		return invalid(err)
	}
	defer tc.close()
	th, err := review.ResolveThresholds(tc.cfg.Thresholds, a.in.Thresholds)
	if err != nil {
		return invalid(&InputError{err})
	}
	files, _, err := a.svc.GitHub.PullRequestFiles(ctx, pr.Number)
	if err != nil {
		return invalid(fmt.Errorf("pull request #%d files: %w", pr.Number, err))
	}
	rep := &doc.Report
	dropped := keepFindingsInChange(rep, files)
	capped := th.Apply(rep)
	rep.Diagnoses = review.Diagnose(rep) // from the attempts, not the file's text
	stale := pr.HeadSHA != doc.Origin.HeadSHA
	pub.PullRequest, pub.Thresholds, pub.Stale, pub.NoReview = pr.Number, th, stale, stale
	pub.Anchors, pub.Budget = ghreport.AnchorsFromFiles(files), cmp.Or(a.in.Budget, tc.cfg.Budget)
	sum := a.summary(reportNotes(runRef, doc.Origin.HeadSHA, pr.HeadSHA, dropped, capped, th, tc))
	pub.Summary = sum
	if err := publish(ctx, rep, []review.Publisher{pub, stepSummary{a.gha, sum}, outputs{a.gha, &reportFile{written: path}}}, nil); err != nil {
		return invalid(err)
	}
	if stale {
		// The verdict on an old commit does not gate the new head.
		a.gha.Warningf("warden: the report is stale (of %s; the pull request is now at %s): published on its commit, no review posted", gitrepo.Short(doc.Origin.HeadSHA), gitrepo.Short(pr.HeadSHA))
		return Result{Verdict: VerdictAdvisory, Report: rep}, nil
	}
	return Result{Verdict: VerdictGate, Report: rep, FailOn: th.FailOn, FailOnIncomplete: a.in.FailOnIncomplete}, nil
}

// reportPath checks the triggering run's repository and returns the report
// file's path.
func (a *runner) reportPath(run *gh.WorkflowRun, repository string) (string, error) {
	if got := run.GetRepository().GetFullName(); !strings.EqualFold(got, repository) {
		return "", inputErrorf("the workflow_run event is of repository %q, not %s", got, repository)
	}
	if a.in.ReportPath == "" {
		return "", inputErrorf("mode report needs the report file: set the report-path input (or --report-path) to where the analyze run's artifact was downloaded")
	}
	if filepath.IsAbs(a.in.ReportPath) {
		return a.in.ReportPath, nil
	}
	return filepath.Join(a.svc.Workspace, a.in.ReportPath), nil
}

// reportNotes are the lines a published report's summary opens with: where
// it came from, whether it is stale, what was dropped or capped.
func reportNotes(runRef, analyzed, head string, dropped, capped int, th review.Thresholds, tc *trusted) []string {
	notes := []string{fmt.Sprintf("Published from the analysis report of %s, which ran the pull request's workflow with a read-only token. A pull request from a fork can change that workflow and so this report: for a fork, treat this check as advisory.", runRef)}
	if analyzed != head {
		notes = append(notes, fmt.Sprintf("**Stale:** this report is of commit %s; the pull request's head is now %s. No review was posted: the analysis of the new head will be published when it finishes.", gitrepo.Short(analyzed), gitrepo.Short(head)))
	}
	if dropped > 0 {
		notes = append(notes, fmt.Sprintf("%d %s dropped: not in this pull request's changed files, or without valid lines.", dropped, review.Plural(dropped, "finding of the report was", "findings of the report were")))
	}
	if capped > 0 {
		notes = append(notes, fmt.Sprintf("%d less severe %s left out: max-findings is %d.", capped, review.Plural(capped, "finding was", "findings were"), th.MaxFindings))
	}
	return append(notes, tc.notes()...)
}

// noReport ends mode report when the analysis left no report file: an
// analyze run that skipped (a draft, a bot, a fork without the model key)
// or failed leaves none. It says so on the commit.
func (a *runner) noReport(ctx context.Context, pub *ghreport.Publisher, succeeded bool, runRef string) (Result, error) {
	outcome, why := "error", "it failed or was cancelled before writing one"
	if succeeded {
		outcome, why = "skipped", "it skipped the review (a draft, a bot's pull request, an author not trusted, or a fork without the model key: its log says which)"
	}
	msg := fmt.Sprintf("warden did not review this commit: the analysis (%s) left no report file at %s: %s. Nothing was reviewed.", runRef, a.in.ReportPath, why)
	pub.Complete(ctx, ghreport.NotReviewedOutput(a.in.IncompleteConclusion, "the analysis left no report", msg))
	return a.notReviewed(msg, outcome, true)
}

// reportPullRequest is the pull request a report file names, checked
// against the triggering run: the same repository, head commit, pull
// request, head repository and branch.
func (a *runner) reportPullRequest(ctx context.Context, run *gh.WorkflowRun, origin *reportOrigin, repository string) (*PullRequest, error) {
	switch {
	case !strings.EqualFold(origin.Repository, repository):
		return nil, reportErrorf("it is of repository %q, not %s", clipForMessage(origin.Repository), repository)
	case origin.HeadSHA != run.GetHeadSHA():
		return nil, reportErrorf("it reviewed commit %s, but the triggering run was for %s", gitrepo.Short(origin.HeadSHA), gitrepo.Short(run.GetHeadSHA()))
	case len(run.PullRequests) > 0 && !slices.ContainsFunc(run.PullRequests, func(p *gh.PullRequest) bool { return p.GetNumber() == origin.PullRequest }):
		return nil, reportErrorf("pull request #%d is not one of the triggering run's", origin.PullRequest)
	}
	// GitHub leaves pull_requests[] empty for a fork's run: then the pull
	// request must at least come from the run's head repository and branch.
	p, err := a.svc.GitHub.PullRequest(ctx, origin.PullRequest)
	var notFound *gh.ErrorResponse
	if errors.As(err, &notFound) && notFound.Response != nil && notFound.Response.StatusCode == http.StatusNotFound {
		return nil, reportErrorf("pull request #%d does not exist in %s", origin.PullRequest, repository)
	}
	if err != nil {
		return nil, fmt.Errorf("pull request #%d: %w", origin.PullRequest, err)
	}
	if hr := run.GetHeadRepository().GetFullName(); hr != "" && !strings.EqualFold(p.GetHead().GetRepo().GetFullName(), hr) {
		return nil, reportErrorf("pull request #%d comes from %q, the triggering run from %q", origin.PullRequest, p.GetHead().GetRepo().GetFullName(), hr)
	}
	if hb := run.GetHeadBranch(); hb != "" && p.GetHead().GetRef() != hb {
		return nil, reportErrorf("pull request #%d is of branch %q, the triggering run of %q", origin.PullRequest, p.GetHead().GetRef(), hb)
	}
	return fromGitHub(a.svc.Owner, a.svc.Repo, p), nil
}
