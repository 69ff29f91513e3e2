package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
	"github.com/sethvargo/go-githubactions"

	"github.com/org/warden/report"
	ghreport "github.com/org/warden/report/github"
	"github.com/org/warden/review"
)

// actionMode is what `warden action` does: the whole job, or one half of
// the split workflow for fork pull requests.
type actionMode string

const (
	// modeFull reviews and publishes (check run, review, annotations).
	modeFull actionMode = "full"
	// modeAnalyze reviews and writes the report file, and publishes
	// nothing: the unprivileged pull_request half, with a read-only token.
	modeAnalyze actionMode = "analyze"
	// modeReport publishes the report file of an analyze run: the
	// privileged workflow_run half. It calls no model.
	modeReport actionMode = "report"
)

func (m actionMode) String() string { return string(m) }

// Set implements flag.Value.
func (m *actionMode) Set(v string) error {
	switch actionMode(v) {
	case modeFull, modeAnalyze, modeReport:
		*m = actionMode(v)
		return nil
	}
	return fmt.Errorf("%q is not full, analyze or report", v)
}

// reportOrigin says which pull request and commit a report file reviewed.
// The Action writes it into the report file (additive to warden.report/v1);
// mode report checks it against its workflow_run event and the pull request
// before it publishes anything.
type reportOrigin struct {
	Repository    string `json:"repository"`   // owner/name, GITHUB_REPOSITORY of the run
	PullRequest   int    `json:"pull_request"` // the pull request's number
	HeadSHA       string `json:"head_sha"`     // the commit reviewed
	BaseSHA       string `json:"base_sha"`     // whose configuration and skills were used
	WardenVersion string `json:"warden_version"`
}

// originReport is the Action's report file: the JSON report with its
// origin.
type originReport struct {
	review.Report
	Origin *reportOrigin `json:"origin,omitempty"`
}

func originOf(owner, repo string, pr *pullRequest) *reportOrigin {
	return &reportOrigin{Repository: owner + "/" + repo, PullRequest: pr.number, HeadSHA: pr.headSHA, BaseSHA: pr.baseSHA, WardenVersion: version}
}

// writeReportFile writes the JSON report, with its origin, where later
// steps can read it: reportPath (relative to the workspace), else
// $RUNNER_TEMP/warden-report.json. The file is written whole or not at all.
func writeReportFile(e *env, reportPath string, rep *review.Report, origin *reportOrigin) (string, error) {
	path := reportPath
	switch {
	case path == "":
		path = filepath.Join(cmp.Or(e.getenv("RUNNER_TEMP"), os.TempDir()), "warden-report.json")
	case !filepath.IsAbs(path):
		path = filepath.Join(e.dir, path)
	}
	var canonical bytes.Buffer
	if err := report.Write(&canonical, rep, report.FormatJSON, report.Options{ToolVersion: version}); err != nil {
		return "", err
	}
	// Through the contract's own rendering, so lists are [] and not null.
	var doc originReport
	if err := json.Unmarshal(canonical.Bytes(), &doc.Report); err != nil {
		return "", err
	}
	doc.Origin = origin
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&doc); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".warden-report-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return path, os.Rename(tmp.Name(), path)
}

// Bounds on a report file that mode report reads. The file comes from a
// workflow that ran on the pull request's code, so it is untrusted input:
// a report warden wrote stays far below each (review caps a title at 200
// characters, a description at 4,000 and a suggestion at 8,000; at most 4
// bytes each).
const (
	maxReportFileBytes  = 64 << 20
	maxReportFindings   = 10_000
	maxReportItems      = 200_000
	maxReportTitle      = 1 << 10
	maxReportText       = 16 << 10 // description
	maxReportSuggestion = 32 << 10
	maxReportName       = 256 // skill, route and model names
	maxReportPath       = 4096
	maxReportLine       = 10_000_000
)

// reportError is a report file that fails validation: nothing of it is
// published.
type reportError struct{ msg string }

func (e *reportError) Error() string { return "the analysis report is not valid: " + e.msg }

func reportErrorf(format string, args ...any) error {
	return &reportError{fmt.Sprintf(format, args...)}
}

// readReportFile reads and strictly decodes a report file: one JSON
// object of schema warden.report/v1 with an origin, no unknown field, no
// trailing data, within the bounds above.
func readReportFile(path string) (*originReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReportFileBytes+1))
	if err != nil {
		return nil, reportErrorf("reading it: %v", err)
	}
	if len(data) > maxReportFileBytes {
		return nil, reportErrorf("larger than %d MiB", maxReportFileBytes>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc originReport
	if err := dec.Decode(&doc); err != nil {
		return nil, reportErrorf("not a warden report of this version (%s; use the same warden version in both workflows): %v", version, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, reportErrorf("data after the report object")
	}
	if err := checkReport(&doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// checkReport checks what decoding cannot: the schema, the origin's form,
// the outcome, counts and lengths.
func checkReport(doc *originReport) error {
	switch {
	case doc.Schema != review.Schema:
		return reportErrorf("schema %q, want %q", clipForMessage(doc.Schema), review.Schema)
	case doc.Origin == nil:
		return reportErrorf("no origin: it was not written by 'warden action --mode analyze'")
	case doc.Origin.PullRequest <= 0:
		return reportErrorf("origin.pull_request %d is not a pull request number", doc.Origin.PullRequest)
	case !isSHA(doc.Origin.HeadSHA) || !isSHA(doc.Origin.BaseSHA):
		return reportErrorf("origin.head_sha and origin.base_sha must be full commit ids")
	case len(doc.Findings) > maxReportFindings:
		return reportErrorf("%d findings, more than %d", len(doc.Findings), maxReportFindings)
	case len(doc.Items) > maxReportItems || len(doc.Ignored) > maxReportItems:
		return reportErrorf("more than %d items", maxReportItems)
	}
	switch doc.Outcome {
	case review.OutcomeComplete, review.OutcomePartial, review.OutcomeProviderUnavailable:
	default:
		return reportErrorf("outcome %q is not complete, partial or provider-unavailable", clipForMessage(string(doc.Outcome)))
	}
	for i, f := range doc.Findings {
		switch {
		case f.Severity < review.SeverityInfo || f.Severity > review.SeverityCritical:
			return reportErrorf("findings[%d]: severity %d", i, f.Severity)
		case len(f.Title) > maxReportTitle, len(f.Description) > maxReportText, len(f.Suggestion) > maxReportSuggestion:
			return reportErrorf("findings[%d]: text longer than warden writes", i)
		case len(f.Skill) > maxReportName, len(f.Route) > maxReportName, len(f.Model) > maxReportName, len(f.Path) > maxReportPath:
			return reportErrorf("findings[%d]: a name longer than warden writes", i)
		}
	}
	for i, it := range doc.Items {
		if len(it.Skill) > maxReportName || len(it.Route) > maxReportName || len(it.Reason) > maxReportName || len(it.Path) > maxReportPath {
			return reportErrorf("items[%d]: a name longer than warden writes", i)
		}
	}
	for i, ig := range doc.Ignored {
		if len(ig.Path) > maxReportPath || len(ig.Reason) > maxReportName {
			return reportErrorf("ignored[%d]: a name longer than warden writes", i)
		}
	}
	return nil
}

func clipForMessage(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// readWorkflowRun decodes the workflow_run event that started mode report.
func readWorkflowRun(getenv func(string) string) (*gh.WorkflowRun, error) {
	name, path := getenv("GITHUB_EVENT_NAME"), getenv("GITHUB_EVENT_PATH")
	if name != "workflow_run" {
		return nil, usagef("mode report publishes the report of an analyze run: run it on workflow_run, not %q", name)
	}
	if path == "" {
		return nil, usagef("GITHUB_EVENT_PATH is not set: 'warden action' runs inside GitHub Actions")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("event file %s: %v", path, unwrapPathError(err))
	}
	var ev gh.WorkflowRunEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, usagef("event file %s: not a workflow_run event: %v", path, err)
	}
	run := ev.GetWorkflowRun()
	switch {
	case run == nil || !isSHA(run.GetHeadSHA()):
		return nil, usagef("event file %s: workflow_run event without the run's head commit", path)
	case ev.GetAction() != "completed":
		return nil, &errNotReviewed{fmt.Sprintf("workflow_run action %q: only a completed run's report is published", ev.GetAction())}
	case run.GetEvent() != "pull_request":
		return nil, &errNotReviewed{fmt.Sprintf("the run that triggered this workflow ran on %q, not pull_request: it reviewed no pull request", run.GetEvent())}
	}
	return run, nil
}

// runReportMode is `warden action --mode report`, in a workflow_run
// workflow: it publishes the report file that an analyze run on a pull
// request left, after checking that the file is a warden report of this
// repository, of a pull request of the triggering run, of the commit that
// run was for. The report's findings are untrusted: those outside the pull
// request's changed files are dropped, and the text is neutralized when
// posted. The thresholds (fail-on, report-on, max-findings) come from this
// run's inputs and the base revision's configuration, never from the report.
func runReportMode(e *env, in *actionInputs, gha *githubactions.Action, client *ghreport.Client, owner, repo string) (int, error) {
	run, err := readWorkflowRun(e.getenv)
	var skip *errNotReviewed
	if errors.As(err, &skip) {
		gha.Noticef("warden: %s", skip.why)
		gha.SetOutput("outcome", "skipped")
		return exitOK, nil
	}
	if err != nil {
		return exitUsage, err
	}
	repository := owner + "/" + repo
	if got := run.GetRepository().GetFullName(); !strings.EqualFold(got, repository) {
		return exitUsage, usagef("the workflow_run event is of repository %q, not %s", got, repository)
	}
	if in.reportPath == "" {
		return exitUsage, usagef("mode report needs the report file: set the report-path input (or --report-path) to where the analyze run's artifact was downloaded")
	}
	path := in.reportPath
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.dir, path)
	}
	started := time.Now()
	headSHA := run.GetHeadSHA()
	checkRun := func(out ghreport.CheckOutput, sha string) {
		id, err := client.CreateCheckRun(e.ctx, in.checkName, sha)
		if err != nil {
			gha.Warningf("warden: creating the check run failed: %v", err)
			return
		}
		ctx, cancel := publishContext(e.ctx, started, 5*time.Minute)
		defer cancel()
		if err := client.CompleteCheckRun(ctx, id, out); err != nil {
			gha.Warningf("warden: completing the check run failed: %v", err)
		}
	}
	runRef := fmt.Sprintf("workflow run %d", run.GetID())
	if u := run.GetHTMLURL(); u != "" {
		runRef = fmt.Sprintf("[workflow run %d](%s)", run.GetID(), u)
	}

	doc, err := readReportFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		// An analyze run that skipped (a draft, a bot, a fork without the
		// model key) or failed leaves no report: say so on the commit.
		outcome, why := "error", "it failed or was cancelled before writing one"
		if run.GetConclusion() == "success" {
			outcome, why = "skipped", "it skipped the review (a draft, a bot's pull request, an author not trusted, or a fork without the model key: its log says which)"
		}
		msg := fmt.Sprintf("warden did not review this commit: the analysis (%s) left no report file at %s: %s. Nothing was reviewed.", runRef, in.reportPath, why)
		checkRun(ghreport.CheckOutput{Conclusion: in.incompleteConclusion, Title: "Not reviewed: the analysis left no report", Summary: msg}, headSHA)
		gha.Warningf("%s", oneLine(msg))
		gha.AddStepSummary("## warden: not reviewed\n\n" + msg + "\n")
		gha.SetOutput("outcome", outcome)
		if in.failOnIncomplete {
			return exitIncomplete, nil
		}
		return exitOK, nil
	}
	invalid := func(err error) (int, error) {
		checkRun(ghreport.CheckOutput{Conclusion: "failure", Title: truncateTitle("Error: " + oneLine(err.Error())),
			Summary: "warden did not publish the analysis report of " + runRef + ":\n\n    " + oneLine(err.Error()) + "\n\nNothing of it was published."}, headSHA)
		gha.SetOutput("outcome", "error")
		return exitUsage, err
	}
	if err != nil {
		return invalid(err)
	}
	origin := doc.Origin
	switch {
	case !strings.EqualFold(origin.Repository, repository):
		return invalid(reportErrorf("it is of repository %q, not %s", clipForMessage(origin.Repository), repository))
	case origin.HeadSHA != headSHA:
		return invalid(reportErrorf("it reviewed commit %s, but the triggering run was for %s", shortSHA(origin.HeadSHA), shortSHA(headSHA)))
	case len(run.PullRequests) > 0 && !slices.ContainsFunc(run.PullRequests, func(p *gh.PullRequest) bool { return p.GetNumber() == origin.PullRequest }):
		return invalid(reportErrorf("pull request #%d is not one of the triggering run's", origin.PullRequest))
	}
	// GitHub leaves pull_requests[] empty for a fork's run: then the pull
	// request must at least come from the run's head repository and branch.
	p, err := client.PullRequest(e.ctx, origin.PullRequest)
	var notFound *gh.ErrorResponse
	if errors.As(err, &notFound) && notFound.Response != nil && notFound.Response.StatusCode == http.StatusNotFound {
		return invalid(reportErrorf("pull request #%d does not exist in %s", origin.PullRequest, repository))
	}
	if err != nil {
		return invalid(fmt.Errorf("pull request #%d: %w", origin.PullRequest, err))
	}
	if hr := run.GetHeadRepository().GetFullName(); hr != "" && !strings.EqualFold(p.GetHead().GetRepo().GetFullName(), hr) {
		return invalid(reportErrorf("pull request #%d comes from %q, the triggering run from %q", origin.PullRequest, p.GetHead().GetRepo().GetFullName(), hr))
	}
	if hb := run.GetHeadBranch(); hb != "" && p.GetHead().GetRef() != hb {
		return invalid(reportErrorf("pull request #%d is of branch %q, the triggering run of %q", origin.PullRequest, p.GetHead().GetRef(), hb))
	}
	pr := fromGitHub(owner, repo, p)
	stale := pr.headSHA != origin.HeadSHA

	tc, err := loadTrustedConfig(e.ctx, e, in.configPath, pr)
	if err != nil {
		return invalid(err)
	}
	defer tc.close()
	maskRouteKeys(tc.cfg, e.getenv, gha)
	announceConfig(e, gha, tc)
	failOn, reportOn, maxFindings, err := thresholds(tc.cfg, in)
	if err != nil {
		return invalid(err)
	}
	files, _, err := client.PullRequestFiles(e.ctx, pr.number)
	if err != nil {
		return invalid(fmt.Errorf("pull request #%d files: %w", pr.number, err))
	}
	rep := &doc.Report
	dropped := keepFindingsInChange(rep, files)
	var capped int
	if maxFindings > 0 && len(rep.Findings) > maxFindings {
		slices.SortStableFunc(rep.Findings, func(a, b review.Finding) int { return cmp.Compare(b.Severity, a.Severity) })
		capped = len(rep.Findings) - maxFindings
		rep.Findings = rep.Findings[:maxFindings]
	}
	rep.Summary.Findings = len(rep.Findings)
	rep.Diagnoses = review.Diagnose(rep) // from the attempts, not the file's text
	// The thresholds shown are the ones applied here, not the analysis's.
	rep.Policy.FailOn, rep.Policy.ReportOn, rep.Policy.MaxFindings = failOn.String(), reportOn.String(), maxFindings

	var summary bytes.Buffer
	fmt.Fprintf(&summary, "> Published from the analysis report of %s, which ran the pull request's workflow with a read-only token. A pull request from a fork can change that workflow and so this report: for a fork, treat this check as advisory.\n\n", runRef)
	if stale {
		fmt.Fprintf(&summary, "> **Stale:** this report is of commit %s; the pull request's head is now %s. No review was posted: the analysis of the new head will be published when it finishes.\n\n", shortSHA(origin.HeadSHA), shortSHA(pr.headSHA))
	}
	if dropped > 0 {
		fmt.Fprintf(&summary, "> %d %s dropped: not in this pull request's changed files, or without valid lines.\n\n", dropped, pluralWord(dropped, "finding of the report was", "findings of the report were"))
	}
	if capped > 0 {
		fmt.Fprintf(&summary, "> %d less severe %s left out: max-findings is %d.\n\n", capped, pluralWord(capped, "finding was", "findings were"), maxFindings)
	}
	if tc.notRead != "" {
		summary.WriteString("> **Note:** " + tc.notRead + ".\n\n")
	}
	if err := report.Write(&summary, rep, report.FormatMarkdown, report.Options{ToolVersion: version}); err != nil {
		return invalid(err)
	}
	var annotations []review.Finding
	for _, f := range rep.Findings {
		if f.Severity.ShownAt(reportOn) {
			annotations = append(annotations, f)
		}
	}
	title := ghreport.Title(rep, false)
	if stale {
		title = truncateTitle("Stale: " + title)
	}
	readOnly := false
	id, err := client.CreateCheckRun(e.ctx, in.checkName, origin.HeadSHA)
	switch {
	case errors.Is(err, ghreport.ErrNoWriteAccess):
		readOnly = true
		gha.Warningf("warden: the token cannot create check runs: mode report needs checks: write and pull-requests: write; results go to annotations and the job summary")
	case err != nil:
		gha.Warningf("warden: creating the check run failed: %v", err)
	default:
		ctx, cancel := publishContext(e.ctx, started, 5*time.Minute)
		err := client.CompleteCheckRun(ctx, id, ghreport.CheckOutput{
			Conclusion:  ghreport.Conclusion(rep, failOn, in.incompleteConclusion, false),
			Title:       title,
			Summary:     summary.String(),
			Annotations: annotations,
		})
		cancel()
		if err != nil {
			gha.Warningf("warden: completing the check run failed: %v", err)
		}
	}
	if !readOnly && !stale {
		readOnly = postReview(e, gha, client, started, 5*time.Minute, pr.number, origin.HeadSHA, rep, ghreport.AnchorsFromFiles(files), in, failOn, reportOn, false)
	}
	if readOnly {
		ghreport.WriteAnnotations(e.stdout, rep.Findings, reportOn)
	}
	gha.AddStepSummary(summary.String())
	setOutputs(gha, rep, path)
	if stale {
		// The verdict on an old commit does not gate the new head.
		gha.Warningf("warden: the report is stale (of %s; the pull request is now at %s): published on its commit, no review posted", shortSHA(origin.HeadSHA), shortSHA(pr.headSHA))
		return exitOK, nil
	}
	return actionExit(rep, failOn, in.failOnIncomplete), nil
}

// keepFindingsInChange drops the findings of rep that do not name a file
// the pull request changes (and still has) with sane lines, and returns how
// many it dropped. An end line of 0 is the start line.
func keepFindingsInChange(rep *review.Report, files []ghreport.File) int {
	changed := map[string]bool{}
	for _, f := range files {
		if f.Status != "removed" {
			changed[f.Path] = true
		}
	}
	kept := rep.Findings[:0]
	for _, f := range rep.Findings {
		if f.EndLine == 0 {
			f.EndLine = f.StartLine
		}
		if !changed[f.Path] || f.StartLine < 1 || f.EndLine < f.StartLine || f.EndLine > maxReportLine {
			continue
		}
		kept = append(kept, f)
	}
	dropped := len(rep.Findings) - len(kept)
	clear(rep.Findings[len(kept):])
	rep.Findings = kept
	return dropped
}

// thresholds are fail-on, report-on and max-findings as planReview resolves
// them: the input, else the configuration, else the default.
func thresholds(cfg *fileConfig, in *actionInputs) (failOn, reportOn review.Severity, maxFindings int, err error) {
	failOn, reportOn, maxFindings = review.SeverityHigh, review.SeverityNone, 50
	if cfg.Review.FailOn.set {
		failOn = cfg.Review.FailOn.v
	}
	if in.failOn.set {
		failOn = in.failOn.v
	}
	if cfg.Review.ReportOn.set {
		reportOn = cfg.Review.ReportOn.v
	}
	if in.reportOn.set {
		reportOn = in.reportOn.v
	}
	if failOn != review.SeverityNone && reportOn > failOn {
		return 0, 0, 0, usagef("report_on (%s) is above fail_on (%s): a blocking finding would not be reported", reportOn, failOn)
	}
	if cfg.Review.MaxFindings != nil {
		maxFindings = *cfg.Review.MaxFindings
	}
	if in.maxFindings != nil {
		maxFindings = *in.maxFindings
	}
	return failOn, reportOn, maxFindings, nil
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
