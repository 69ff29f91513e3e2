package action

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/org/warden/ghbot"
	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/gitrepo"
	"github.com/org/warden/report"
	ghreport "github.com/org/warden/report/github"
	"github.com/org/warden/review"
	"github.com/org/warden/secrets"
)

// Services are what Run needs from the wiring.
type Services struct {
	GitHub *ghreport.Client
	// Runner writes the workflow commands (warnings, masks), the job
	// summary and the step outputs.
	Runner *githubactions.Action
	Stdout io.Writer // workflow commands of the read-only fallback
	Stderr io.Writer // the log
	// Storage downloads workflow artifacts from the storage URLs GitHub
	// redirects to (no token); nil means a plain client.
	Storage *http.Client
	// Workspace is the checkout (GITHUB_WORKSPACE); RunnerTemp the
	// runner's temporary directory (RUNNER_TEMP), "" for the system's.
	Workspace  string
	RunnerTemp string
	// Git is where the checkout fetches what it lacks (the base revision,
	// history down to the merge base): its origin, with the github-token
	// for the GitHub server's URLs (GITHUB_SERVER_URL).
	Git gitrepo.Remote
	// Owner and Repo name the repository (GITHUB_REPOSITORY).
	Owner, Repo string
	Version     string
	// ReadFile reads a config-path outside the workspace.
	ReadFile func(name string) ([]byte, error)
	// Configure makes the configuration of the file name with its data
	// ("" and nil: no file, the defaults). The wiring owns the format.
	Configure func(name string, data []byte) (*Config, error)
}

// Config is what the Action needs of the trusted configuration.
type Config struct {
	Secrets    []secrets.Value          // masked in the log (route keys)
	Thresholds review.ThresholdSettings // the file's fail_on, report_on, max_findings
	Budget     time.Duration            // the file's review budget (or the default)
	// Plan plans the review of a change; an error naming a missing route
	// key is a *review.MissingKeyError.
	Plan func(ctx context.Context, r PlanRequest) (*Job, error)
}

// PlanRequest is what Run asks the wiring to plan.
type PlanRequest struct {
	Skills     fs.FS // the trusted skills (the base revision's)
	Change     *Change
	Info       review.Change
	Thresholds review.ThresholdSettings // the inputs', over the file's
	SkillNames []string                 // the skills input
	Budget     time.Duration            // the budget input; 0: the file's
	// Cache is the results cache; nil for none.
	Cache *review.Cache
	// Narrow, when set, narrows the planned chunks (an incremental
	// review on a push).
	Narrow func(*hunks.Plan) *hunks.Plan
	// Untrusted says the pull request's author is not trusted
	// (authorTrusted): exclusions by convention, which the author
	// controls, do not apply (hunks.Options.Untrusted).
	Untrusted bool
	// Instructions is the base revision's tree the repository's
	// instructions (AGENTS.md, CLAUDE.md, Copilot's, [[instructions]]
	// files) are read from, never the pull request's; InstructionsFrom
	// names it, InstructionsNotRead says why it is nil.
	Instructions        fs.FS
	InstructionsFrom    string
	InstructionsNotRead string
}

// Job is a planned review, ready to run.
type Job struct {
	Thresholds review.Thresholds
	// Run runs the review (the wiring shows progress).
	Run func(ctx context.Context) *review.Report
	// Sinks are published to after the Action's own (telemetry).
	Sinks []review.Publisher
}

// Verdict is what a run means for the step's exit code.
type Verdict int

const (
	// VerdictGate: the report decides (findings, completeness).
	VerdictGate Verdict = iota
	// VerdictSkipped: deliberately not reviewed; the step succeeds.
	VerdictSkipped
	// VerdictNotReviewed: should have been reviewed and was not; the step
	// fails as incomplete only with fail-on-incomplete.
	VerdictNotReviewed
	// VerdictAdvisory: a report that gates nothing here (analyze, stale).
	VerdictAdvisory
	// VerdictCancelled: the run was cancelled.
	VerdictCancelled
)

// Result is a finished run: its verdict and, when it reviewed, the report
// and the thresholds applied.
type Result struct {
	Verdict          Verdict
	Report           *review.Report
	FailOn           review.Severity
	FailOnIncomplete bool
}

// runner is one run of the Action.
type runner struct {
	in      Inputs
	svc     Services
	gha     *githubactions.Action
	started time.Time
	// app is the GitHub App the check run belongs to (the token's), once
	// created: the app whose check runs' review state counts.
	app string
	// sealed is set once the state key is decided (seal.go).
	sealed bool
}

// Run is the Action: in mode full (the default) it reviews the pull
// request the event names and always reports what happened: a check run
// completed whatever the outcome (also on an error, a cancellation or a
// panic), a review with inline comments, the job summary and step outputs.
// In mode analyze it reviews and writes the report file and the job
// summary only; in mode report it publishes such a file. The configuration
// and the skills always come from the pull request's base revision.
func Run(ctx context.Context, in Inputs, ev Event, svc Services) (Result, error) {
	if err := in.check(); err != nil {
		return Result{}, err
	}
	a := &runner{in: in, svc: svc, gha: svc.Runner, started: time.Now()}
	a.sealFromInputs()
	if in.Mode == ModeReport {
		return a.publishReport(ctx, ev)
	}
	switch ev.Name {
	case "workflow_run":
		return a.commandFollowUp(ctx, ev)
	case "check_run":
		return a.buttonPress(ctx, ev)
	}
	if isCommandEvent(ev.Name) {
		return a.command(ctx, ev)
	}
	return a.review(ctx, ev)
}

// skip ends a run that deliberately reviews nothing.
func (a *runner) skip(why string) (Result, error) {
	a.gha.Noticef("warden: %s", why)
	a.gha.SetOutput("outcome", "skipped")
	return Result{Verdict: VerdictSkipped}, nil
}

// review is modes full and analyze.
func (a *runner) review(ctx context.Context, ev Event) (res Result, err error) {
	pr, err := ParsePullRequest(ctx, ev, a.in.PRNumber, a.svc.GitHub, a.svc.Owner, a.svc.Repo)
	var skip *NotReviewedError
	if errors.As(err, &skip) {
		return a.skip(skip.Why)
	}
	if err != nil {
		return Result{}, err
	}
	return a.reviewPR(ctx, ev, pr, reviewOptions{trusted: ev.Name != "pull_request" || !pr.Fork})
}

// reviewPR reviews pr: the steps after the event was read, shared by the
// pull request events and the /warden commands.
func (a *runner) reviewPR(ctx context.Context, ev Event, pr *PullRequest, opts reviewOptions) (res Result, err error) {
	tc, err := a.trust(ctx, pr)
	if err != nil {
		return Result{}, err
	}
	defer tc.close()
	if opts.trusted {
		a.sealFromKeys(tc.cfg.Secrets)
	}
	if ev.Name == "pull_request_target" {
		a.warnHeadCheckout(ctx, pr)
	}
	budget := cmp.Or(a.in.Budget, tc.cfg.Budget)
	// The check run, created first and completed whatever happens next.
	// analyze publishes nothing: no check run, no review, no annotations.
	pub := a.begin(ctx, pr, budget)
	defer func() {
		if v := recover(); v != nil {
			a.complete(ctx, pub, ghreport.InternalErrorOutput())
			res, err = Result{}, fmt.Errorf("internal error: %v", v)
		}
	}()
	fail := func(err error) (Result, error) { return a.fail(ctx, pub, err) }
	// A trusted commenter's /warden review asks for this review by name:
	// the draft, bot and author rules that skip automatic reviews do not
	// apply.
	if why, summary := a.skipped(pr); why != "" && !opts.command {
		out := ghreport.SkippedOutput(why, summary)
		a.complete(ctx, pub, out)
		return a.skip(out.Title)
	}
	if a.in.TrustedAuthorsOnly && !authorTrusted(pr) && !opts.command {
		return a.untrustedAuthor(ctx, pub, pr)
	}
	ch, err := readChange(ctx, a.svc.Workspace, a.svc.Git, pr, a.svc.GitHub, a.svc.Stderr)
	if err != nil {
		return fail(err)
	}
	defer ch.Close()
	bot := a.botSteps(ctx, ev, pr, opts, tc.cfg.Secrets)
	req := PlanRequest{
		Skills: tc.skills, Change: ch, Info: review.Change{Title: pr.Title, Body: pr.Body},
		Thresholds: a.in.Thresholds, SkillNames: orSkills(opts.skills, a.in.Skills), Budget: a.in.Budget,
		Cache: bot.cache, Narrow: bot.narrow, Untrusted: !authorTrusted(pr),
	}
	req.Instructions, req.InstructionsFrom, req.InstructionsNotRead = tc.instructions()
	job, err := tc.cfg.Plan(ctx, req)
	var noKey *review.MissingKeyError
	if errors.As(err, &noKey) && pr.Fork {
		return a.forkWithoutKey(ctx, pub, noKey)
	}
	if err != nil {
		return fail(err)
	}
	rep := job.Run(ctx)
	if n := rep.Summary.CacheRejected; n > 0 {
		// A signed cache that holds entries it cannot verify: planted,
		// written under another secret, or damaged. None was used.
		msg := fmt.Sprintf("%s of the results cache did not verify (unsigned, signed with another secret, or damaged) and %s not used: %s reviewed anew", review.Counted(n, "entry", "entries"), pickWord(n, "was", "were"), pickWord(n, "its item was", "their items were"))
		a.gha.Warningf("warden: %s", msg)
		bot.notes = append(bot.notes, "**Results cache:** "+msg+".")
	}
	if pub != nil {
		pub.Thresholds, pub.Anchors = job.Thresholds, hunks.AnchorsOf(ch.Files)
	}
	return a.finish(ctx, rep, pub, pr, append(tc.notes(), bot.notes...), job)
}

// begin creates the check run in progress (mode full; analyze publishes
// nothing) and returns its publisher, with the Resume review button for
// an incomplete review when a press can start a workflow; nil in analyze.
func (a *runner) begin(ctx context.Context, pr *PullRequest, budget time.Duration) *ghreport.Publisher {
	if a.in.Mode != ModeFull {
		return nil
	}
	pub := a.publisher(pr.HeadSHA, pr.Number, budget)
	pub.Begin(ctx)
	a.app = pub.App()
	if ghbot.ButtonWorks(pub.App()) {
		pub.IncompleteActions = []ghreport.CheckAction{ghbot.ResumeAction}
	}
	return pub
}

// finish follows up on the pull request (threads, warden's findings
// comment) and publishes the review: the notes, then how to resume an
// incomplete one; the findings comment is saved after the review, for
// what the follow-up changed when no finding went to it.
func (a *runner) finish(ctx context.Context, rep *review.Report, pub *ghreport.Publisher, pr *PullRequest, notes []string, job *Job) (Result, error) {
	if pub != nil && (!rep.Complete() || ctx.Err() != nil) {
		notes = append(notes, resumeNote(pub))
	}
	var ledger *ghbot.Ledger
	if pub != nil {
		var more []string
		more, ledger, pub.Dismissed = a.followUp(ctx, pr, rep)
		notes = append(notes, more...)
		if ledger != nil {
			pub.Posted, pub.Overflow = ledger.Posted(), ledger.Overflow(pr.HeadSHA)
		}
	}
	res, err := a.publishReview(ctx, rep, pub, pr, notes, job)
	if ledger != nil {
		if serr := ledger.Save(context.WithoutCancel(ctx), pr.HeadSHA); serr != nil {
			a.gha.Warningf("warden: updating warden's findings comment: %v", serr)
		}
	}
	return res, err
}

// publishReview publishes a finished review to every sink: the check run
// and review (mode full), the job summary, the report file, the step
// outputs, then the wiring's (telemetry); also after a cancellation. The
// summary opens with notes and records the review's state for the next
// push (mode full).
func (a *runner) publishReview(ctx context.Context, rep *review.Report, pub *ghreport.Publisher, pr *PullRequest, notes []string, job *Job) (Result, error) {
	sum := a.summary(notes)
	file := &reportFile{workspace: a.svc.Workspace, runnerTemp: a.svc.RunnerTemp, path: a.in.ReportPath, origin: originOf(pr, a.svc.Version), required: a.in.Mode == ModeAnalyze, log: a.svc.Stderr}
	sinks := []review.Publisher{stepSummary{a.gha, sum}, file, outputs{a.gha, file}}
	if pub != nil {
		pub.Summary = sum
		pub.Records = stateRecords(ctx, pr.HeadSHA, a.in.Mode == ModeFull)
		sinks = append([]review.Publisher{pub}, sinks...)
	}
	if err := publish(ctx, rep, sinks, job.Sinks); err != nil {
		a.gha.SetOutput("outcome", "error")
		return Result{}, err
	}
	switch {
	case ctx.Err() != nil:
		return Result{Verdict: VerdictCancelled, Report: rep}, nil
	case a.in.Mode == ModeAnalyze:
		// The verdict is the report half's to give, from its own
		// configuration: analyze succeeds whenever the report is written.
		fmt.Fprintf(a.svc.Stderr, "warden: analyze: report written to %s; nothing was posted (the report mode publishes it)\n", file.written)
		return Result{Verdict: VerdictAdvisory, Report: rep}, nil
	}
	return Result{Verdict: VerdictGate, Report: rep, FailOn: job.Thresholds.FailOn, FailOnIncomplete: a.in.FailOnIncomplete}, nil
}

// publish gives the report to every sink in order, then to the wiring's;
// a sink's error stops the Action's own sinks, never the wiring's.
func publish(ctx context.Context, rep *review.Report, sinks, after []review.Publisher) error {
	var err error
	for _, s := range sinks {
		if err = s.Publish(ctx, rep); err != nil {
			break
		}
	}
	for _, s := range after {
		_ = s.Publish(ctx, rep) // reports its own failures
	}
	return err
}

// trust loads the trusted configuration, masks its keys and says in the
// log where it came from.
func (a *runner) trust(ctx context.Context, pr *PullRequest) (*trusted, error) {
	tc, err := a.loadTrusted(ctx, pr)
	if err != nil {
		return nil, err
	}
	for _, v := range tc.cfg.Secrets {
		if v.Reveal() != "" {
			a.gha.AddMask(v.Reveal())
		}
	}
	if tc.notRead != "" {
		a.gha.Warningf("warden: %s", tc.notRead)
	} else {
		fmt.Fprintf(a.svc.Stderr, "warden: configuration: %s; skills: the built-ins and those of the base revision; instructions (AGENTS.md, ...): the base revision's (the pull request's own are not used)\n", tc.from)
	}
	for _, w := range tc.warnings {
		a.gha.Warningf("warden: %s", w)
	}
	return tc, nil
}

// notes are the lines the summary opens with.
func (tc *trusted) notes() []string {
	if tc.notRead == "" {
		return nil
	}
	return []string{"**Note:** " + tc.notRead + "."}
}

// warnHeadCheckout warns when a pull_request_target workflow checked out
// the pull request's head.
func (a *runner) warnHeadCheckout(ctx context.Context, pr *PullRequest) {
	if head, err := gitrepo.Output(ctx, a.svc.Workspace, "rev-parse", "HEAD"); err == nil && strings.TrimSpace(string(head)) == pr.HeadSHA {
		a.gha.Warningf("warden: the workspace is checked out at the pull request's head under pull_request_target: warden only reads it as git objects, but no later step may build or run it (it has this workflow's secrets and write token)")
	}
}

// skipped says why pr is deliberately not reviewed ("" when it is), and
// the check run's summary.
func (a *runner) skipped(pr *PullRequest) (why, summary string) {
	switch {
	case pr.Draft && a.in.SkipDrafts:
		return "draft pull request", "Drafts are not reviewed (input skip-drafts). Mark the pull request ready for review to run warden."
	case pr.Bot && a.in.SkipBots:
		return "pull request by " + pr.Author, "Pull requests by bots are not reviewed (input skip-bots)."
	}
	return "", ""
}

// untrustedAuthor ends the review of a pull request whose author the
// trusted-authors-only input leaves unreviewed: nothing was reviewed, so
// the check run gets the incomplete conclusion (by default one that does
// not pass required checks), never a skipped one that would let the
// author's change merge unread. A maintainer's /warden review reviews it.
func (a *runner) untrustedAuthor(ctx context.Context, pub *ghreport.Publisher, pr *PullRequest) (Result, error) {
	msg := fmt.Sprintf("warden did not review this pull request: only pull requests by members, owners and collaborators of the repository are reviewed automatically (input trusted-authors-only), and this author's association is %s. Nothing was reviewed. A maintainer can comment `/warden review` to review it, or `/warden accept [reason]` to accept it unreviewed.",
		cmp.Or(pr.Association, "NONE"))
	a.complete(ctx, pub, ghreport.NotReviewedOutput(a.in.IncompleteConclusion, "the author is not a member, owner or collaborator", msg))
	return a.notReviewed(msg, "skipped", a.in.Mode == ModeFull)
}

// forkWithoutKey ends the review of a fork's pull request whose workflow
// got no model key. GitHub gives workflows of fork pull requests no
// secrets. That is not a reason to fail the contributor's build, nor to
// pass silently: say plainly that nothing was reviewed.
func (a *runner) forkWithoutKey(ctx context.Context, pub *ghreport.Publisher, noKey *review.MissingKeyError) (Result, error) {
	msg := fmt.Sprintf("warden did not review this pull request: it comes from a fork, and GitHub does not pass secrets (%s) to workflows of fork pull requests. Nothing was reviewed; see the README's \"Fork pull requests\" for a workflow that can review forks.", noKey.Env)
	a.complete(ctx, pub, ghreport.NotReviewedOutput(a.in.IncompleteConclusion, "fork pull request without the model key", msg))
	return a.notReviewed(msg, "skipped", a.in.Mode == ModeFull)
}

// notReviewed says in the log and the job summary that nothing was
// reviewed.
func (a *runner) notReviewed(msg, outcome string, gate bool) (Result, error) {
	a.gha.Warningf("%s", report.OneLine(msg))
	a.gha.AddStepSummary("## warden: not reviewed\n\n" + msg + "\n")
	a.gha.SetOutput("outcome", outcome)
	return Result{Verdict: VerdictNotReviewed, FailOnIncomplete: a.in.FailOnIncomplete && gate}, nil
}

// publisher is the GitHub publisher of a check run on headSHA and a review
// on pull request number.
func (a *runner) publisher(headSHA string, number int, budget time.Duration) *ghreport.Publisher {
	return &ghreport.Publisher{
		Client: a.svc.GitHub, CheckName: a.in.CheckName, HeadSHA: headSHA, PullRequest: number, ExternalID: ghbot.ExternalID(number),
		IncompleteConclusion: a.in.IncompleteConclusion, RequestChanges: a.in.RequestChanges,
		Budget: budget, Started: a.started,
		Commands: a.svc.Stdout, Log: a.svc.Stderr, Warn: a.gha.Warningf,
		ReadOnlyHint: "the token cannot create check runs (a fork pull request has a read-only token): results go to annotations and the job summary",
	}
}

// fail ends a review that could not run: the check run says so.
func (a *runner) fail(ctx context.Context, pub *ghreport.Publisher, err error) (Result, error) {
	a.complete(ctx, pub, ghreport.ErrorOutput(err, "warden could not review this pull request", "Nothing was reviewed."))
	a.gha.SetOutput("outcome", "error")
	return Result{}, err
}

// complete completes the check run of pub, when there is one.
func (a *runner) complete(ctx context.Context, pub *ghreport.Publisher, out ghreport.CheckOutput) {
	if pub != nil {
		pub.Complete(ctx, out)
	}
}

// summary renders the job summary and the check run's summary: the notes,
// then the Markdown report. It renders once per report.
func (a *runner) summary(notes []string) func(*review.Report) (string, error) {
	var done *review.Report
	var text string
	return func(r *review.Report) (string, error) {
		if r == done {
			return text, nil
		}
		var b bytes.Buffer
		for _, n := range notes {
			b.WriteString("> " + n + "\n\n")
		}
		if err := report.Write(&b, r, report.FormatMarkdown, report.Options{ToolVersion: a.svc.Version}); err != nil {
			return "", err
		}
		done, text = r, b.String()
		return text, nil
	}
}

// stepSummary is the job summary sink.
type stepSummary struct {
	gha     *githubactions.Action
	summary func(*review.Report) (string, error)
}

func (s stepSummary) Publish(_ context.Context, r *review.Report) error {
	text, err := s.summary(r)
	if err != nil {
		return err
	}
	s.gha.AddStepSummary(text)
	return nil
}

// reportFile is the report file sink: the JSON report with its origin.
// Only analyze requires it; elsewhere a failure is logged.
type reportFile struct {
	workspace, runnerTemp, path string
	origin                      *reportOrigin
	required                    bool
	log                         io.Writer
	written                     string
}

func (f *reportFile) Publish(_ context.Context, r *review.Report) error {
	path, err := writeReportFile(f.workspace, f.runnerTemp, f.path, r, f.origin)
	switch {
	case err != nil && f.required:
		// The report file is what analyze is for.
		return fmt.Errorf("writing the report file: %w", err)
	case err != nil:
		fmt.Fprintf(f.log, "warden: writing the report file: %v\n", err)
	}
	f.written = path
	return nil
}

// outputs is the step outputs sink.
type outputs struct {
	gha  *githubactions.Action
	file *reportFile
}

func (o outputs) Publish(_ context.Context, r *review.Report) error {
	high := 0
	for _, f := range r.Findings {
		if f.Severity >= review.SeverityHigh {
			high++
		}
	}
	o.gha.SetOutput("outcome", string(r.Outcome))
	o.gha.SetOutput("findings-count", strconv.Itoa(len(r.Findings)))
	o.gha.SetOutput("high-count", strconv.Itoa(high))
	o.gha.SetOutput("planned", strconv.Itoa(r.Summary.Planned))
	o.gha.SetOutput("reviewed", strconv.Itoa(r.Summary.Reviewed))
	o.gha.SetOutput("cached", strconv.Itoa(r.Summary.Cached))
	cov := r.Coverage
	o.gha.SetOutput("files-in-scope", strconv.Itoa(cov.InScope.Files))
	o.gha.SetOutput("files-reviewed", strconv.Itoa(cov.Reviewed.Files))
	o.gha.SetOutput("lines-in-scope", strconv.Itoa(cov.InScope.Lines))
	o.gha.SetOutput("lines-reviewed", strconv.Itoa(cov.Reviewed.Lines))
	o.gha.SetOutput("report-file", o.file.written)
	return nil
}

// pickWord is one for n == 1, else many.
func pickWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func orSkills(a, b []string) []string {
	if len(a) > 0 {
		return a
	}
	return b
}
