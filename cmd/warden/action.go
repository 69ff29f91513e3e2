package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
	"github.com/sethvargo/go-githubactions"

	"github.com/org/warden/hunks"
	"github.com/org/warden/report"
	ghreport "github.com/org/warden/report/github"
	"github.com/org/warden/review"
)

// actionInputs are the Action's inputs. action.yml passes each as an
// INPUT_* variable named by the upper snake case of its kebab-case name
// (fail-on → INPUT_FAIL_ON); they map 1:1 to flags and config keys.
type actionInputs struct {
	configPath           string
	token                string
	failOn               severityFlag
	reportOn             severityFlag
	maxFindings          *int
	incompleteConclusion string
	failOnIncomplete     bool
	requestChanges       bool
	checkName            string
	skills               []string
	skipDrafts           bool
	skipBots             bool
	prNumber             int
	budget               time.Duration
	trustedAuthorsOnly   bool
	mode                 actionMode
	reportPath           string
}

func readInputs(getenv func(string) string) (*actionInputs, error) {
	in := &actionInputs{checkName: "warden", incompleteConclusion: "neutral", skipDrafts: true, skipBots: true, mode: modeFull}
	get := func(name string) string {
		return strings.TrimSpace(getenv("INPUT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))))
	}
	var errs []error
	boolean := func(name string, dst *bool) {
		switch v := strings.ToLower(get(name)); v {
		case "":
		case "true":
			*dst = true
		case "false":
			*dst = false
		default:
			errs = append(errs, fmt.Errorf("input %s: %q is not true or false", name, get(name)))
		}
	}
	in.configPath = get("config-path")
	in.token = get("github-token")
	if v := get("fail-on"); v != "" {
		if err := in.failOn.Set(v); err != nil {
			errs = append(errs, fmt.Errorf("input fail-on: %w", err))
		}
	}
	if v := get("report-on"); v != "" {
		if err := in.reportOn.Set(v); err != nil {
			errs = append(errs, fmt.Errorf("input report-on: %w", err))
		}
	}
	if v := get("max-findings"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("input max-findings: %q is not a non-negative integer", v))
		}
		in.maxFindings = &n
	}
	if v := get("incomplete-conclusion"); v != "" {
		in.incompleteConclusion = v
	}
	boolean("fail-on-incomplete", &in.failOnIncomplete)
	boolean("request-changes", &in.requestChanges)
	if v := get("check-name"); v != "" {
		in.checkName = v
	}
	for _, s := range strings.Split(get("skills"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			in.skills = append(in.skills, s)
		}
	}
	boolean("skip-drafts", &in.skipDrafts)
	boolean("skip-bots", &in.skipBots)
	if v := get("pr-number"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("input pr-number: %q is not a pull request number", v))
		}
		in.prNumber = n
	}
	if v := get("budget"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("input budget: %q is not a positive Go duration such as \"15m\"", v))
		}
		in.budget = d
	}
	boolean("trusted-authors-only", &in.trustedAuthorsOnly)
	if v := get("mode"); v != "" {
		if err := in.mode.Set(v); err != nil {
			errs = append(errs, fmt.Errorf("input mode: %w", err))
		}
	}
	in.reportPath = get("report-path")
	if err := errors.Join(errs...); err != nil {
		return nil, &usageError{err}
	}
	return in, nil
}

// parseActionFlags reads `warden action`'s flags, which override the
// inputs of the same name: --mode and --report-path.
func parseActionFlags(args []string, stderr io.Writer, in *actionInputs) error {
	fs := flag.NewFlagSet("warden action", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&in.mode, "mode", "full (review and publish), analyze (review and write the report file, publish nothing: the unprivileged half of a fork workflow) or report (publish a report file from analyze: the privileged workflow_run half); default the mode input, else full")
	fs.StringVar(&in.reportPath, "report-path", in.reportPath, "the JSON report `FILE`: written by full and analyze (default $RUNNER_TEMP/warden-report.json), read by report")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("action: unexpected argument %q (the Action is configured through its inputs)", fs.Arg(0))
	}
	return nil
}

// pullRequest is what the Action needs to know of the pull request.
type pullRequest struct {
	owner, repo      string
	number           int
	headSHA, baseSHA string
	title, body      string
	draft            bool
	author           string
	bot              bool
	fork             bool   // the head is in another repository
	association      string // author_association: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, ...
}

func fromGitHub(owner, repo string, p *gh.PullRequest) *pullRequest {
	pr := &pullRequest{
		owner: owner, repo: repo,
		number:      p.GetNumber(),
		headSHA:     p.GetHead().GetSHA(),
		baseSHA:     p.GetBase().GetSHA(),
		title:       p.GetTitle(),
		body:        p.GetBody(),
		draft:       p.GetDraft(),
		author:      p.GetUser().GetLogin(),
		association: strings.ToUpper(p.GetAuthorAssociation()),
		// A deleted fork comes back as a null head repository; GitHub gives
		// its workflows no secrets either.
		fork: p.GetHead().GetRepo() == nil || p.GetHead().GetRepo().GetFullName() != p.GetBase().GetRepo().GetFullName(),
	}
	pr.bot = p.GetUser().GetType() == "Bot" || strings.HasSuffix(pr.author, "[bot]")
	return pr
}

// reviewedActions are the pull_request event actions that start a review.
var reviewedActions = map[string]bool{"opened": true, "synchronize": true, "reopened": true, "ready_for_review": true}

// errNotReviewed marks an event the Action deliberately does not review.
type errNotReviewed struct{ why string }

func (e *errNotReviewed) Error() string { return e.why }

// readEvent decodes the event that started the workflow into the pull
// request to review.
func readEvent(ctx context.Context, getenv func(string) string, in *actionInputs, client *ghreport.Client, owner, repo string) (*pullRequest, error) {
	name, path := getenv("GITHUB_EVENT_NAME"), getenv("GITHUB_EVENT_PATH")
	if path == "" {
		return nil, usagef("GITHUB_EVENT_PATH is not set: 'warden action' runs inside GitHub Actions")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("event file %s: %v", path, unwrapPathError(err))
	}
	switch name {
	case "pull_request", "pull_request_target":
		// pull_request_target has pull_request's payload; it runs with the
		// base repository's secrets and a write token on a fork's change,
		// which warden never builds or runs: it diffs git objects and reads
		// its configuration from the base revision (loadTrustedConfig).
		var ev gh.PullRequestEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return nil, usagef("event file %s: not a %s event: %v", path, name, err)
		}
		if ev.PullRequest == nil || ev.PullRequest.GetHead().GetSHA() == "" {
			return nil, usagef("event file %s: %s event without a pull request head", path, name)
		}
		if !reviewedActions[ev.GetAction()] {
			return nil, &errNotReviewed{fmt.Sprintf("%s action %q is not reviewed (only opened, synchronize, reopened, ready_for_review)", name, ev.GetAction())}
		}
		return fromGitHub(owner, repo, ev.PullRequest), nil
	case "workflow_dispatch":
		var ev gh.WorkflowDispatchEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return nil, usagef("event file %s: not a workflow_dispatch event: %v", path, err)
		}
		number := in.prNumber
		if number == 0 {
			var inputs map[string]any
			_ = json.Unmarshal(ev.Inputs, &inputs)
			for _, k := range []string{"pr-number", "pr_number", "pull_request"} {
				if v, ok := inputs[k]; ok {
					number, _ = strconv.Atoi(strings.TrimSpace(fmt.Sprint(v)))
				}
			}
		}
		if number <= 0 {
			return nil, usagef("workflow_dispatch needs the pull request number: set the pr-number input")
		}
		p, err := client.PullRequest(ctx, number)
		if err != nil {
			return nil, fmt.Errorf("pull request #%d: %w", number, err)
		}
		return fromGitHub(owner, repo, p), nil
	case "":
		return nil, usagef("GITHUB_EVENT_NAME is not set: 'warden action' runs inside GitHub Actions")
	case "workflow_run":
		return nil, usagef("event workflow_run: run warden with mode: report there, to publish the report of an analyze run")
	default:
		return nil, usagef("event %q is not supported: run warden on pull_request, pull_request_target or workflow_dispatch", name)
	}
}

// actionChange reads the pull request's change: from the checkout in the
// workspace when there is one (merge-base of base and head to head,
// fetching what is missing, so GitHub's diff size limits do not apply), or
// else from the paginated files API.
func actionChange(ctx context.Context, dir string, pr *pullRequest, client *ghreport.Client, logf func(string, ...any)) (*change, error) {
	if _, err := gitOutput(ctx, dir, "rev-parse", "--git-dir"); err == nil {
		ch, err := checkoutChange(ctx, dir, pr)
		if err == nil {
			return ch, nil
		}
		logf("warden: the checkout cannot give the change (%v); using the pull request files API", err)
	}
	files, truncated, err := client.PullRequestFiles(ctx, pr.number)
	if err != nil {
		return nil, fmt.Errorf("pull request #%d files: %w", pr.number, err)
	}
	var diff bytes.Buffer
	var ignored []review.Ignored
	for _, f := range files {
		if f.Patch == "" {
			if f.Status != "removed" && f.Additions+f.Deletions > 0 {
				ignored = append(ignored, review.Ignored{Path: f.Path, Reason: "github:no-patch"})
			}
			continue
		}
		old, status := f.Path, ""
		switch f.Status {
		case "renamed", "copied":
			old = f.PreviousPath
			status = fmt.Sprintf("similarity index 50%%\n%s from %s\n%s to %s\n", f.Status[:len(f.Status)-2], old, f.Status[:len(f.Status)-2], f.Path)
		}
		from, to := "a/"+old, "b/"+f.Path
		switch f.Status {
		case "added":
			from = "/dev/null"
			status = "new file mode 100644\n"
		case "removed":
			to = "/dev/null"
			status = "deleted file mode 100644\n"
		}
		fmt.Fprintf(&diff, "diff --git a/%s b/%s\n%s--- %s\n+++ %s\n%s\n", old, f.Path, status, from, to, strings.TrimRight(f.Patch, "\n"))
	}
	if truncated {
		ignored = append(ignored, review.Ignored{Path: "(files beyond GitHub's 3,000-file limit)", Reason: "github:file-limit"})
	}
	parsed, err := hunks.Parse(&diff)
	if err != nil {
		return nil, fmt.Errorf("pull request #%d files API patches: %w", pr.number, err)
	}
	return &change{files: parsed, ignored: ignored}, nil
}

// checkoutChange diffs the pull request in a local checkout.
func checkoutChange(ctx context.Context, dir string, pr *pullRequest) (*change, error) {
	for _, sha := range []string{pr.baseSHA, pr.headSHA} {
		if _, err := gitOutput(ctx, dir, "cat-file", "-e", sha+"^{commit}"); err == nil {
			continue
		}
		if _, err := gitOutput(ctx, dir, "fetch", "--no-tags", "--quiet", "origin", sha); err != nil {
			if sha != pr.headSHA {
				return nil, err
			}
			// A fork's head is reachable through the pull request's ref.
			if _, err := gitOutput(ctx, dir, "fetch", "--no-tags", "--quiet", "origin", fmt.Sprintf("refs/pull/%d/head", pr.number)); err != nil {
				return nil, err
			}
		}
	}
	mb, err := gitOutput(ctx, dir, "merge-base", pr.baseSHA, pr.headSHA)
	if err != nil {
		if shallow, _ := gitOutput(ctx, dir, "rev-parse", "--is-shallow-repository"); strings.TrimSpace(string(shallow)) == "true" {
			if _, ferr := gitOutput(ctx, dir, "fetch", "--no-tags", "--quiet", "--unshallow", "origin"); ferr == nil {
				mb, err = gitOutput(ctx, dir, "merge-base", pr.baseSHA, pr.headSHA)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	diff, err := gitOutput(ctx, dir, append(gitDiffArgs, strings.TrimSpace(string(mb)), pr.headSHA, "--")...)
	if err != nil {
		return nil, err
	}
	files, err := hunks.Parse(bytes.NewReader(diff))
	if err != nil {
		return nil, fmt.Errorf("git diff of pull request #%d: %w", pr.number, err)
	}
	read := func(path string) ([]byte, error) { return gitOutput(ctx, dir, "show", pr.headSHA+":"+path) }
	return &change{files: files, source: verifiedSource(files, read)}, nil
}

// anchorsOf lists, per path, the new-side line ranges of the diff's hunks:
// the only lines GitHub accepts review comments on.
func anchorsOf(files []*hunks.File) ghreport.Anchors {
	a := ghreport.Anchors{}
	for _, f := range files {
		if f.NewPath == "" {
			continue
		}
		for _, fr := range f.Fragments {
			if fr.NewLines > 0 {
				a[f.NewPath] = append(a[f.NewPath], ghreport.LineRange{Start: fr.NewStart, End: fr.NewStart + fr.NewLines - 1})
			}
		}
	}
	return a
}

// incompleteConclusions are the check-run conclusions a partial or
// provider-unavailable review may get: never success.
var incompleteConclusions = map[string]bool{"neutral": true, "failure": true, "action_required": true, "cancelled": true, "timed_out": true}

// runAction is `warden action`, the GitHub Action entry point. In mode full
// (the default) it reviews the pull request the event names and always
// reports what happened: a check run completed whatever the outcome (also
// on an error, a cancellation or a panic), a review with inline comments,
// the job summary and step outputs. In mode analyze it reviews and writes
// the report file and the job summary only; in mode report it publishes
// such a file (runReportMode). The configuration and the skills always
// come from the pull request's base revision (loadTrustedConfig).
func runAction(e *env, args []string) (code int, err error) {
	in, err := readInputs(e.getenv)
	if err != nil {
		return exitUsage, err
	}
	if err := parseActionFlags(args, e.stderr, in); err != nil {
		return exitUsage, err
	}
	if !incompleteConclusions[in.incompleteConclusion] {
		return exitUsage, usagef("input incomplete-conclusion: %q is not one of neutral, failure, action_required, cancelled, timed_out", in.incompleteConclusion)
	}
	gha := githubactions.New(githubactions.WithGetenv(e.getenv), githubactions.WithWriter(e.stdout))
	if in.token != "" {
		gha.AddMask(in.token)
	}
	owner, repo, ok := strings.Cut(e.getenv("GITHUB_REPOSITORY"), "/")
	if !ok || owner == "" || repo == "" {
		return exitUsage, usagef("GITHUB_REPOSITORY %q is not owner/name: 'warden action' runs inside GitHub Actions", e.getenv("GITHUB_REPOSITORY"))
	}
	if in.token == "" {
		return exitUsage, usagef("input github-token is empty: pass ${{ github.token }} or a token with checks: write and pull-requests: write")
	}
	apiURL := cmp.Or(e.getenv("GITHUB_API_URL"), "https://api.github.com")
	client, err := ghreport.New(ghreport.Config{APIURL: apiURL, ServerURL: e.getenv("GITHUB_SERVER_URL"), Token: in.token, Owner: owner, Repo: repo})
	if err != nil {
		return exitUsage, usagef("GITHUB_API_URL: %v", err)
	}
	if ws := e.getenv("GITHUB_WORKSPACE"); ws != "" {
		e.dir = ws
	}
	if in.mode == modeReport {
		return runReportMode(e, in, gha, client, owner, repo)
	}

	pr, err := readEvent(e.ctx, e.getenv, in, client, owner, repo)
	var skip *errNotReviewed
	if errors.As(err, &skip) {
		gha.Noticef("warden: %s", skip.why)
		gha.SetOutput("outcome", "skipped")
		return exitOK, nil
	}
	if err != nil {
		return exitUsage, err
	}

	// Configuration and skills from the base revision, and the keys the
	// configuration names masked, before anything runs.
	tc, err := loadTrustedConfig(e.ctx, e, in.configPath, pr)
	if err != nil {
		return exitUsage, err
	}
	defer tc.close()
	cfg := tc.cfg
	maskRouteKeys(cfg, e.getenv, gha)
	announceConfig(e, gha, tc)
	if e.getenv("GITHUB_EVENT_NAME") == "pull_request_target" {
		if head, err := gitOutput(e.ctx, e.dir, "rev-parse", "HEAD"); err == nil && strings.TrimSpace(string(head)) == pr.headSHA {
			gha.Warningf("warden: the workspace is checked out at the pull request's head under pull_request_target: warden only reads it as git objects, but no later step may build or run it (it has this workflow's secrets and write token)")
		}
	}
	if in.budget > 0 {
		cfg.Review.Budget = duration(in.budget)
	}
	policy := cfg.policy()

	// The check run, created first and completed whatever happens next.
	// analyze publishes nothing: no check run, no review, no annotations.
	publish := in.mode == modeFull
	started := time.Now()
	var checkID int64
	readOnly := false
	if publish {
		checkID, err = client.CreateCheckRun(e.ctx, in.checkName, pr.headSHA)
		readOnly = errors.Is(err, ghreport.ErrNoWriteAccess)
		switch {
		case readOnly:
			gha.Warningf("warden: the token cannot create check runs (a fork pull request has a read-only token): results go to annotations and the job summary")
		case err != nil:
			gha.Warningf("warden: creating the check run failed: %v", err)
		}
	}
	completed := false
	complete := func(out ghreport.CheckOutput) {
		if checkID == 0 || completed {
			return
		}
		completed = true
		ctx, cancel := publishContext(e.ctx, started, policy.Budget)
		defer cancel()
		if err := client.CompleteCheckRun(ctx, checkID, out); err != nil {
			gha.Warningf("warden: completing the check run failed: %v", err)
		}
	}
	defer func() {
		if v := recover(); v != nil {
			complete(ghreport.CheckOutput{Conclusion: "failure", Title: "Error: warden stopped on an internal error", Summary: "warden stopped on an internal error before it could report; nothing was reviewed as clean."})
			code, err = exitUsage, fmt.Errorf("internal error: %v", v)
		}
	}()
	fail := func(err error) (int, error) {
		complete(ghreport.CheckOutput{Conclusion: "failure", Title: truncateTitle("Error: " + oneLine(err.Error())), Summary: "warden could not review this pull request:\n\n    " + oneLine(err.Error()) + "\n\nNothing was reviewed."})
		gha.SetOutput("outcome", "error")
		return exitCode(exitUsage, err)
	}

	switch {
	case pr.draft && in.skipDrafts:
		return skipReview(gha, complete, "Skipped: draft pull request", "Drafts are not reviewed (input skip-drafts). Mark the pull request ready for review to run warden.")
	case pr.bot && in.skipBots:
		return skipReview(gha, complete, "Skipped: pull request by "+pr.author, "Pull requests by bots are not reviewed (input skip-bots).")
	case in.trustedAuthorsOnly && !trustedAssociations[pr.association]:
		return skipReview(gha, complete, "Skipped: the author is not a member, owner or collaborator",
			fmt.Sprintf("Only pull requests by members, owners and collaborators of the repository are reviewed (input trusted-authors-only); this author's association is %s.", cmp.Or(pr.association, "NONE")))
	}

	ch, err := actionChange(e.ctx, e.dir, pr, client, func(f string, a ...any) { fmt.Fprintf(e.stderr, f+"\n", a...) })
	if err != nil {
		return fail(err)
	}
	// chooseSkills discovers the repository's skills in e.dir: give it the
	// copy of the base revision's, never the workspace's.
	skillEnv := *e
	skillEnv.dir = tc.skillsDir
	job, err := planReview(&skillEnv, cfg, ch, reviewSettings{
		failOn: in.failOn, reportOn: in.reportOn, maxFindings: in.maxFindings, skills: in.skills,
		change: review.Change{Title: pr.title, Body: pr.body},
	})
	var noKey *missingKeyError
	if errors.As(err, &noKey) && pr.fork {
		// GitHub gives workflows of fork pull requests no secrets. That
		// is not a reason to fail the contributor's build, nor to pass
		// silently: say plainly that nothing was reviewed.
		msg := fmt.Sprintf("warden did not review this pull request: it comes from a fork, and GitHub does not pass secrets (%s) to workflows of fork pull requests. Nothing was reviewed; see the README's \"Fork pull requests\" for a workflow that can review forks.", noKey.env)
		complete(ghreport.CheckOutput{Conclusion: in.incompleteConclusion, Title: "Not reviewed: fork pull request without the model key", Summary: msg})
		gha.Warningf("%s", msg)
		gha.AddStepSummary("## warden: not reviewed\n\n" + msg + "\n")
		gha.SetOutput("outcome", "skipped")
		if in.failOnIncomplete && publish {
			return exitIncomplete, nil
		}
		return exitOK, nil
	}
	if err != nil {
		return fail(err)
	}
	tel, err := startTelemetry(e, false)
	if err != nil {
		return fail(err)
	}
	prog := newProgress(e.stderr, len(job.plan.Items))
	rep := job.run(e.ctx, prog.update)
	prog.finish()
	defer tel.finish(e.ctx, rep) // after publishing, also on a cancellation
	cancelled := e.ctx.Err() != nil

	// Publish: every sink gets the same report, also after a cancellation.
	var summary bytes.Buffer
	if tc.notRead != "" {
		summary.WriteString("> **Note:** " + tc.notRead + ".\n\n")
	}
	if err := report.Write(&summary, rep, report.FormatMarkdown, report.Options{ToolVersion: version}); err != nil {
		return fail(err)
	}
	failOn, reportOn := job.opts.FailOn, job.opts.ReportOn
	if publish {
		var annotations []review.Finding
		for _, f := range rep.Findings {
			if f.Severity.ShownAt(reportOn) {
				annotations = append(annotations, f)
			}
		}
		complete(ghreport.CheckOutput{
			Conclusion:  ghreport.Conclusion(rep, failOn, in.incompleteConclusion, cancelled),
			Title:       ghreport.Title(rep, cancelled),
			Summary:     summary.String(),
			Annotations: annotations,
		})
		if !readOnly {
			readOnly = postReview(e, gha, client, started, policy.Budget, pr.number, pr.headSHA, rep, anchorsOf(ch.files), in, failOn, reportOn, cancelled)
		}
		if readOnly {
			written, dropped := ghreport.WriteAnnotations(e.stdout, rep.Findings, reportOn)
			if dropped > 0 {
				gha.Warningf("warden: %d findings shown as annotations, %d more only in the job summary (GitHub shows at most 10 warnings and 10 errors per step)", written, dropped)
			}
		}
	}
	gha.AddStepSummary(summary.String())
	reportFile, err := writeReportFile(e, in.reportPath, rep, originOf(owner, repo, pr))
	if err != nil {
		if in.mode == modeAnalyze {
			// The report file is what analyze is for.
			gha.SetOutput("outcome", "error")
			return exitUsage, fmt.Errorf("writing the report file: %w", err)
		}
		fmt.Fprintf(e.stderr, "warden: writing the report file: %v\n", err)
	}
	setOutputs(gha, rep, reportFile)
	switch {
	case cancelled:
		return exitInterrupted, errInterrupted
	case in.mode == modeAnalyze:
		// The verdict is the report half's to give, from its own
		// configuration: analyze succeeds whenever the report is written.
		fmt.Fprintf(e.stderr, "warden: analyze: report written to %s; nothing was posted (the report mode publishes it)\n", reportFile)
		return exitOK, nil
	}
	return actionExit(rep, failOn, in.failOnIncomplete), nil
}

// trustedAssociations are the author_association values the
// trusted-authors-only input lets through.
var trustedAssociations = map[string]bool{"OWNER": true, "MEMBER": true, "COLLABORATOR": true}

// announceConfig says in the log where the configuration came from, and
// warns when it could not be read from the base revision.
func announceConfig(e *env, gha *githubactions.Action, tc *trustedConfig) {
	if tc.notRead != "" {
		gha.Warningf("warden: %s", tc.notRead)
	} else {
		fmt.Fprintf(e.stderr, "warden: configuration: %s; skills: the built-ins and those of the base revision (the pull request's own are not used)\n", tc.from)
	}
	for _, w := range tc.warnings {
		gha.Warningf("warden: %s", w)
	}
}

// postReview posts the findings as a pull request review and reports
// whether the token turned out to be read-only.
func postReview(e *env, gha *githubactions.Action, client *ghreport.Client, started time.Time, budget time.Duration, number int, headSHA string,
	rep *review.Report, anchors ghreport.Anchors, in *actionInputs, failOn, reportOn review.Severity, cancelled bool) (readOnly bool) {
	ctx, cancel := publishContext(e.ctx, started, budget)
	defer cancel()
	event := "COMMENT"
	if in.requestChanges && reviewExit(rep, failOn) == exitFindings {
		event = "REQUEST_CHANGES"
	}
	res, err := client.PostReview(ctx, number, headSHA, rep.Findings, anchors, ghreport.ReviewOptions{
		Event: event, FailOn: failOn, ReportOn: reportOn, Body: ghreport.Title(rep, cancelled),
	})
	switch {
	case errors.Is(err, ghreport.ErrNoWriteAccess):
		gha.Warningf("warden: the token cannot write pull request reviews (a fork pull request has a read-only token): results go to annotations and the job summary")
		return true
	case err != nil:
		gha.Warningf("warden: posting the review failed: %v", err)
	default:
		fmt.Fprintf(e.stderr, "warden: review posted: %d comments, %d already present, %d in the review body, %d left out of the body for length (they are in the check run), %d below report-on\n",
			res.Posted, res.Duplicates, res.InBody, res.Omitted, res.Below)
	}
	return false
}

// skipReview completes the check run as skipped, without a model call.
func skipReview(gha *githubactions.Action, complete func(ghreport.CheckOutput), title, summary string) (int, error) {
	complete(ghreport.CheckOutput{Conclusion: "skipped", Title: title, Summary: summary})
	gha.Noticef("warden: %s", title)
	gha.SetOutput("outcome", "skipped")
	return exitOK, nil
}

// publishContext gives publishing the review's remaining budget, and at
// least a minute, even when the review itself was cancelled: what finished
// is still posted.
func publishContext(ctx context.Context, started time.Time, budget time.Duration) (context.Context, context.CancelFunc) {
	deadline := max(time.Until(started.Add(budget)), time.Minute)
	return context.WithTimeout(context.WithoutCancel(ctx), deadline)
}

// maskRouteKeys tells the runner to mask every route key in the log.
func maskRouteKeys(cfg *fileConfig, getenv func(string) string, gha *githubactions.Action) {
	names := []string{"WARDEN_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"}
	for _, r := range cfg.Routes {
		names = append(names, r.APIKeyEnv)
	}
	for _, n := range names {
		if v := getenv(n); n != "" && v != "" {
			gha.AddMask(v)
		}
	}
}

func setOutputs(gha *githubactions.Action, rep *review.Report, reportFile string) {
	high := 0
	for _, f := range rep.Findings {
		if f.Severity >= review.SeverityHigh {
			high++
		}
	}
	gha.SetOutput("outcome", string(rep.Outcome))
	gha.SetOutput("findings-count", strconv.Itoa(len(rep.Findings)))
	gha.SetOutput("high-count", strconv.Itoa(high))
	gha.SetOutput("planned", strconv.Itoa(rep.Summary.Planned))
	gha.SetOutput("reviewed", strconv.Itoa(rep.Summary.Reviewed))
	gha.SetOutput("report-file", reportFile)
}

// truncateTitle keeps a check-run title short.
func truncateTitle(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:199]) + "…"
	}
	return s
}
