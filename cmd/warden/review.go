package main

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/org/warden/cli"
	"github.com/org/warden/config"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// runReview is `warden review`. Its int is the exit code when err is nil.
func runReview(ctx context.Context, e *env, o *cli.Review) (int, error) {
	cfg, err := loadConfigFlag(e, o.Config)
	if err != nil {
		return exitUsage, err
	}
	ch, err := readChange(ctx, e, o, cfg.Setup().Instructions.Mode != review.InstructionsOff)
	if err != nil {
		return exitUsage, err
	}
	defer ch.stop() // git's processes live until the review and its report are done
	s := ch.trusted // the instructions' tree, read while planning
	s.Thresholds, s.SkillNames, s.DryRun, s.Cache = o.FailOn, o.Skills, o.DryRun, config.LocalResultsCache(e.getenv)
	job, err := planReview(e, cfg, ch, s, o.Verbose)
	ch.close()
	if err != nil {
		return exitUsage, err
	}
	var rep *review.Report
	if o.DryRun {
		rep = review.DryRun(job.Plan, job.Engine, job.Options)
	} else {
		tel, err := startTelemetry(ctx, e, o.Verbose)
		if err != nil {
			return exitUsage, err
		}
		prog := e.progress(o.Verbose, len(job.Plan.Items))
		stop := prog.Watch(job.Engine.Activity)
		rep = job.Run(ctx, prog.Update)
		stop()
		prog.Finish()
		defer tel.Publish(ctx, rep) // after the report is written, also on an interrupt
	}
	if err := writeReport(e, o, rep); err != nil {
		return exitUsage, err
	}
	if ctx.Err() != nil {
		return exitInterrupted, errInterrupted
	}
	return reviewExit(rep, job.Thresholds.FailOn), nil
}

// planReview plans a review of the change with the configuration and the
// caller's settings (config's PrepareReview), logging under -v and warning
// of skills not loaded. Every error is the user's input and names it.
func planReview(e *env, cfg *fileConfig, ch *change, s config.ReviewSettings, verbose bool) (*review.Job, error) {
	s.Logger = e.logger(verbose)
	s.Logger.Info("config", "file", cmp.Or(e.configFile, "none (defaults)"), "root", cmp.Or(e.root, e.dir))
	s.Root, s.Getenv, s.Version = cmp.Or(e.root, e.dir), e.getenv, wardenBuild().Version
	s.Held = e.held()
	job, err := cfg.PrepareReview(ch.diff, ch.source, ch.ignored, s)
	if job != nil {
		e.warnUnloaded(job.SkillProblems)
	}
	if err != nil {
		return nil, &usageError{err}
	}
	return job, nil
}

// writeReport renders the report to --output or standard output.
func writeReport(e *env, o *cli.Review, r *review.Report) error {
	return writeOutput(e, o.Output, func(w io.Writer) error {
		ropts := report.Options{ToolVersion: wardenBuild().Version}
		if o.Output == "" {
			ropts.Color = isTerminal(e.stdout) && e.getenv("NO_COLOR") == ""
		}
		return report.Write(w, r, o.Format, ropts)
	})
}

// writeOutput writes what render produces to the --output file (under the
// working directory), whole or not at all, or to standard output ("").
func writeOutput(e *env, output string, render func(io.Writer) error) error {
	if output == "" {
		return render(e.stdout)
	}
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	if err := report.WriteFile(e.abs(output), buf.Bytes()); err != nil {
		return usagef("--output %s: %v", output, unwrapPathError(err))
	}
	return nil
}

// progress shows a review's progress on standard error.
func (e *env) progress(verbose bool, total int) *report.Progress {
	return report.NewProgress(e.stderr, report.ProgressModeFor(isTerminal(e.stderr), verbose, e.getenv("GITHUB_ACTIONS") == "true"), total)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if sw, isSync := w.(*syncWriter); isSync {
		f, ok = sw.file()
	}
	return ok && term.IsTerminal(int(f.Fd()))
}
