package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/org/warden/action"
	ghreport "github.com/org/warden/report/github"
	"github.com/org/warden/review"
)

// readInputs reads the Action's inputs. action.yml passes each as an
// INPUT_* variable named by the upper snake case of its kebab-case name
// (fail-on → INPUT_FAIL_ON); they map 1:1 to flags and config keys.
func readInputs(getenv func(string) string) (action.Inputs, error) {
	in, r := action.DefaultInputs(), &inputReader{getenv: getenv}
	in.ConfigPath = r.get("config-path")
	in.Thresholds = review.ThresholdSettings{FailOn: r.severity("fail-on"), ReportOn: r.severity("report-on"),
		MaxFindings: r.number("max-findings", 0, "a non-negative integer")}
	in.IncompleteConclusion = cmp.Or(r.get("incomplete-conclusion"), in.IncompleteConclusion)
	r.boolean("fail-on-incomplete", &in.FailOnIncomplete)
	r.boolean("request-changes", &in.RequestChanges)
	in.CheckName = cmp.Or(r.get("check-name"), in.CheckName)
	for _, s := range strings.Split(r.get("skills"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			in.Skills = append(in.Skills, s)
		}
	}
	r.boolean("skip-drafts", &in.SkipDrafts)
	r.boolean("skip-bots", &in.SkipBots)
	if n := r.number("pr-number", 1, "a pull request number"); n != nil {
		in.PRNumber = *n
	}
	if v := r.get("budget"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			r.bad("input budget: %q is not a positive Go duration such as \"15m\"", v)
		}
		in.Budget = d
	}
	r.boolean("trusted-authors-only", &in.TrustedAuthorsOnly)
	if v := r.get("mode"); v != "" {
		if err := in.Mode.Set(v); err != nil {
			r.bad("input mode: %w", err)
		}
	}
	in.ReportPath = r.get("report-path")
	if err := errors.Join(r.errs...); err != nil {
		return in, &usageError{err}
	}
	return in, nil
}

// inputReader reads INPUT_* variables and collects what is wrong with them.
type inputReader struct {
	getenv func(string) string
	errs   []error
}

func (r *inputReader) get(name string) string {
	return strings.TrimSpace(r.getenv("INPUT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))))
}

func (r *inputReader) bad(format string, args ...any) {
	r.errs = append(r.errs, fmt.Errorf(format, args...))
}

func (r *inputReader) boolean(name string, dst *bool) {
	switch v := strings.ToLower(r.get(name)); v {
	case "":
	case "true", "false":
		*dst = v == "true"
	default:
		r.bad("input %s: %q is not true or false", name, r.get(name))
	}
}

// number is the input as an integer of at least min; nil when unset.
func (r *inputReader) number(name string, min int, want string) *int {
	v := r.get(name)
	if v == "" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min {
		r.bad("input %s: %q is not %s", name, v, want)
	}
	return &n
}

// severity is the input as a severity; nil when unset.
func (r *inputReader) severity(name string) *review.Severity {
	v := r.get(name)
	if v == "" {
		return nil
	}
	s, err := review.ParseSeverity(v)
	if err != nil {
		r.bad("input %s: %w", name, err)
	}
	return &s
}

// parseActionFlags reads `warden action`'s flags, which override the
// inputs of the same name: --mode and --report-path.
func parseActionFlags(args []string, stderr io.Writer, in *action.Inputs) error {
	fs := flag.NewFlagSet("warden action", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&in.Mode, "mode", "full (review and publish), analyze (review and write the report file, publish nothing: the unprivileged half of a fork workflow) or report (publish a report file from analyze: the privileged workflow_run half); default the mode input, else full")
	fs.StringVar(&in.ReportPath, "report-path", in.ReportPath, "the JSON report `FILE`: written by full and analyze (default $RUNNER_TEMP/warden-report.json), read by report")
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

// runAction is `warden action`, the GitHub Action entry point: it reads the
// process (inputs, flags, GITHUB_* variables, the event file), wires the
// services and maps the Action's result to the exit code.
func runAction(e *env, args []string) (int, error) {
	in, err := readInputs(e.getenv)
	if err != nil {
		return exitUsage, err
	}
	if err := parseActionFlags(args, e.stderr, &in); err != nil {
		return exitUsage, err
	}
	gha := githubactions.New(githubactions.WithGetenv(e.getenv), githubactions.WithWriter(e.stdout))
	token := e.getenv("INPUT_GITHUB_TOKEN")
	if token = strings.TrimSpace(token); token != "" {
		gha.AddMask(token)
	}
	if _, err := ghreport.ParseIncompleteConclusion(in.IncompleteConclusion); err != nil {
		return exitUsage, usagef("input %v", err)
	}
	owner, repo, ok := strings.Cut(e.getenv("GITHUB_REPOSITORY"), "/")
	if !ok || owner == "" || repo == "" {
		return exitUsage, usagef("GITHUB_REPOSITORY %q is not owner/name: 'warden action' runs inside GitHub Actions", e.getenv("GITHUB_REPOSITORY"))
	}
	if token == "" {
		return exitUsage, usagef("input github-token is empty: pass ${{ github.token }} or a token with checks: write and pull-requests: write")
	}
	client, err := ghreport.New(ghreport.Config{APIURL: cmp.Or(e.getenv("GITHUB_API_URL"), "https://api.github.com"),
		ServerURL: e.getenv("GITHUB_SERVER_URL"), Token: token, Owner: owner, Repo: repo})
	if err != nil {
		return exitUsage, usagef("GITHUB_API_URL: %v", err)
	}
	e.dir = cmp.Or(e.getenv("GITHUB_WORKSPACE"), e.dir)
	ev := action.Event{Name: e.getenv("GITHUB_EVENT_NAME"), Path: e.getenv("GITHUB_EVENT_PATH")}
	if ev.Path != "" {
		ev.Data, ev.Err = os.ReadFile(ev.Path)
		ev.Err = unwrapPathError(ev.Err)
	}
	res, err := action.Run(e.ctx, in, ev, action.Services{
		GitHub: client, Runner: gha, Stdout: e.stdout, Stderr: e.stderr,
		Workspace: e.dir, RunnerTemp: e.getenv("RUNNER_TEMP"), Owner: owner, Repo: repo, Version: version,
		ReadFile:  os.ReadFile,
		Configure: func(name string, data []byte) (*action.Config, error) { return actionConfig(e, name, data) },
	})
	if err != nil {
		return exitUsage, err
	}
	return actionResultExit(res)
}

// actionResultExit is the Action's exit code: as reviewExit, except that an
// incomplete review fails the step only when fail-on-incomplete is set (the
// check run already says it is incomplete).
func actionResultExit(res action.Result) (int, error) {
	switch res.Verdict {
	case action.VerdictCancelled:
		return exitInterrupted, errInterrupted
	case action.VerdictNotReviewed:
		if res.FailOnIncomplete {
			return exitIncomplete, nil
		}
		return exitOK, nil
	case action.VerdictGate:
		code := reviewExit(res.Report, res.FailOn)
		if code == exitIncomplete && !res.FailOnIncomplete {
			return exitOK, nil
		}
		return code, nil
	}
	return exitOK, nil
}

// actionConfig is the Action's view of a configuration file (name "" and
// data nil: none).
func actionConfig(e *env, name string, data []byte) (*action.Config, error) {
	cfg := &fileConfig{}
	if data != nil {
		var err error
		if cfg, err = parseConfig(name, data); err != nil {
			return nil, err
		}
	}
	secrets := []string{e.getenv("WARDEN_API_KEY"), e.getenv("OPENAI_API_KEY"), e.getenv("OPENROUTER_API_KEY")}
	for _, r := range cfg.Routes {
		if r.APIKeyEnv != "" {
			secrets = append(secrets, e.getenv(r.APIKeyEnv))
		}
	}
	return &action.Config{
		Secrets: secrets, Thresholds: cfg.thresholds(), Budget: cfg.policy().Budget,
		Plan: func(ctx context.Context, r action.PlanRequest) (*action.Job, error) {
			if r.Budget > 0 {
				cfg.Review.Budget = duration(r.Budget)
			}
			job, err := planReview(e, cfg, &change{files: r.Change.Files, source: r.Change.Source, ignored: r.Change.Ignored}, reviewSettings{
				thresholds: r.Thresholds, skills: r.SkillNames, skillsFS: r.Skills, change: r.Info,
			})
			if err != nil {
				return nil, err
			}
			tel, err := startTelemetry(e, false)
			if err != nil {
				return nil, err
			}
			return &action.Job{
				Thresholds: job.thresholds,
				Run: func(ctx context.Context) *review.Report {
					prog := newProgress(e.stderr, len(job.plan.Items))
					defer prog.finish()
					return job.run(ctx, prog.update)
				},
				Sinks: []review.Publisher{tel},
			}, nil
		},
	}, nil
}
