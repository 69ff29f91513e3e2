package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/org/warden/action"
	"github.com/org/warden/report"
	ghreport "github.com/org/warden/report/github"
	"github.com/org/warden/review"
)

// readInputs reads the Action's inputs: action.yml passes each as an
// INPUT_* variable named by the upper snake case of its kebab-case name
// (fail-on → INPUT_FAIL_ON).
func readInputs(getenv func(string) string) (action.Inputs, error) {
	in, err := action.ParseInputs(func(name string) string {
		return getenv("INPUT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")))
	})
	if err != nil {
		return in, &usageError{err}
	}
	return in, nil
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
func runAction(ctx context.Context, e *env, args []string) (int, error) {
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
	e.root = e.dir
	ev := action.Event{Name: e.getenv("GITHUB_EVENT_NAME"), Path: e.getenv("GITHUB_EVENT_PATH")}
	if ev.Path != "" {
		ev.Data, ev.Err = os.ReadFile(ev.Path)
		ev.Err = unwrapPathError(ev.Err)
	}
	res, err := action.Run(ctx, in, ev, action.Services{
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
// check run already says it is incomplete), and what was not reviewed or
// gates nothing (analyze, a stale report) succeeds.
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
			tel, err := startTelemetry(ctx, e, false)
			if err != nil {
				return nil, err
			}
			return &action.Job{
				Thresholds: job.Thresholds,
				Run: func(ctx context.Context) *review.Report {
					prog := report.NewProgress(e.stderr, isTerminal(e.stderr), len(job.Plan.Items))
					defer prog.Finish()
					return job.Run(ctx, prog.Update)
				},
				Sinks: []review.Publisher{tel},
			}, nil
		},
	}, nil
}
