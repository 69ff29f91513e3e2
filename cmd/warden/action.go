package main

import (
	"context"
	"os"

	"github.com/sethvargo/go-githubactions"

	"github.com/org/warden/action"
	"github.com/org/warden/cli"
	"github.com/org/warden/config"
	"github.com/org/warden/hunks"
	"github.com/org/warden/review"
)

// runAction is `warden action`, the GitHub Action entry point: it reads the
// process (inputs, flags, GITHUB_* variables, the event file), wires the
// services and maps the Action's result to the exit code.
func runAction(ctx context.Context, e *env, o *cli.Action) (int, error) {
	gha := githubactions.New(githubactions.WithGetenv(e.getenv), githubactions.WithWriter(e.stdout))
	aenv := action.Env{Getenv: e.getenv, Mask: gha.AddMask, ReadFile: os.ReadFile}
	in, err := aenv.Inputs()
	if err != nil {
		return exitUsage, &usageError{err}
	}
	o.Apply(&in)
	svc, ev, err := aenv.Connect(&in, e.dir)
	if err != nil {
		return exitUsage, &usageError{err}
	}
	e.dir, e.root = svc.Workspace, svc.Workspace
	svc.Runner, svc.Stdout, svc.Stderr, svc.Version = gha, e.stdout, e.stderr, wardenBuild().Version
	svc.Configure = func(name string, data []byte) (*action.Config, error) { return actionConfig(e, name, data) }
	res, err := action.Run(ctx, in, ev, svc)
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
	return &action.Config{
		Secrets: cfg.Secrets(e.getenv), Thresholds: cfg.Thresholds(), Budget: cfg.Policy().Budget,
		Plan: func(ctx context.Context, r action.PlanRequest) (*action.Job, error) {
			if r.Budget > 0 {
				cfg.SetBudget(r.Budget)
			}
			job, err := planReview(e, cfg, &change{diff: hunks.Files(r.Change.Files), source: r.Change.Source, ignored: r.Change.Ignored}, config.ReviewSettings{
				Thresholds: r.Thresholds, SkillNames: r.SkillNames, Skills: r.Skills, Change: r.Info,
				Cache: r.Cache, Narrow: r.Narrow, Untrusted: r.Untrusted, Instructions: r.Instructions,
				InstructionsFrom: r.InstructionsFrom, InstructionsNotRead: r.InstructionsNotRead,
			}, false)
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
					prog := e.progress(false, len(job.Plan.Items))
					defer prog.Finish()
					defer prog.Watch(job.Engine.Activity)()
					return job.Run(ctx, prog.Update)
				},
				Sinks: []review.Publisher{tel},
			}, nil
		},
	}, nil
}
