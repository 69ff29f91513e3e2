package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/org/warden/config"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// reviewOptions are the flags of `warden review`.
type reviewOptions struct {
	diff    string
	base    string
	config  string
	skills  stringList
	format  report.Format
	output  string
	dryRun  bool
	failOn  severityFlag
	verbose bool
	// allowEmpty accepts an empty --diff as a change with nothing to
	// review, for pipelines where an empty diff is expected.
	allowEmpty bool
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// severityFlag is a severity that remembers whether it was set.
type severityFlag struct {
	set bool
	v   review.Severity
}

func (s *severityFlag) String() string { return s.v.String() }

// settings is the flag as a threshold layer: set or not.
func (s severityFlag) settings() review.ThresholdSettings {
	if !s.set {
		return review.ThresholdSettings{}
	}
	return review.ThresholdSettings{FailOn: &s.v}
}
func (s *severityFlag) Set(v string) error {
	sev, err := review.ParseSeverity(v)
	if err != nil {
		return err
	}
	*s = severityFlag{true, sev}
	return nil
}

func parseReviewFlags(args []string, stderr io.Writer) (*reviewOptions, error) {
	o := &reviewOptions{format: report.FormatText}
	fs := flag.NewFlagSet("warden review", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.diff, "diff", "", "review this unified diff `FILE` (- for standard input)")
	fs.StringVar(&o.base, "base", "", "review the commits since the branch left `REF` (merge-base of REF and HEAD, to HEAD)")
	fs.StringVar(&o.config, "config", "", "configuration `FILE` (default: warden.toml at the repository's top level, when present)")
	fs.Var(&o.skills, "skill", "run only this skill `NAME` (repeatable)")
	fs.Var(&o.format, "format", "output `FORMAT`: text (the default), json, markdown or sarif")
	fs.StringVar(&o.output, "output", "", "write the report to `FILE` instead of standard output")
	fs.BoolVar(&o.allowEmpty, "allow-empty", false, "accept an empty --diff as a change with nothing to review (default: an empty diff is an error, as after a failed command in a pipe)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the plan and call no model (needs no API key)")
	fs.Var(&o.failOn, "fail-on", "exit 1 when a finding is at or above this `SEVERITY`: off, critical, high, medium, low, info (default: review.fail_on in warden.toml, else high)")
	fs.BoolVar(&o.verbose, "v", false, "log the configuration file and skills used, and one line per model call (route, model, kind, deadline, duration, class, decision), to standard error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, &usageError{err}
	}
	if fs.NArg() > 0 {
		return nil, usagef("review: unexpected argument %q", fs.Arg(0))
	}
	if o.diff != "" && o.base != "" {
		return nil, usagef("review: --diff and --base cannot be used together")
	}
	return o, nil
}

// runReview is `warden review`. Its int is the exit code when err is nil.
func runReview(ctx context.Context, e *env, args []string) (int, error) {
	o, err := parseReviewFlags(args, e.stderr)
	if err != nil {
		return exitUsage, err
	}
	cfg, err := loadConfigFlag(e, o.config)
	if err != nil {
		return exitUsage, err
	}
	ch, err := readChange(ctx, e, o)
	if err != nil {
		return exitUsage, err
	}
	job, err := planReview(e, cfg, ch, config.ReviewSettings{Thresholds: o.failOn.settings(), SkillNames: o.skills, DryRun: o.dryRun,
		Cache: config.LocalResultsCache(e.getenv)}, o.verbose)
	if err != nil {
		return exitUsage, err
	}
	var rep *review.Report
	if o.dryRun {
		rep = review.DryRun(job.Plan, job.Engine, job.Options)
	} else {
		tel, err := startTelemetry(ctx, e, o.verbose)
		if err != nil {
			return exitUsage, err
		}
		prog := report.NewProgress(e.stderr, isTerminal(e.stderr), len(job.Plan.Items))
		rep = job.Run(ctx, prog.Update)
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
	s.Logger = slog.New(slog.DiscardHandler)
	if verbose {
		s.Logger = slog.New(slog.NewTextHandler(e.stderr, nil))
	}
	s.Logger.Info("config", "file", cmp.Or(e.configFile, "none (defaults)"), "root", cmp.Or(e.root, e.dir))
	s.Root, s.Getenv, s.Version = cmp.Or(e.root, e.dir), e.getenv, version
	job, err := cfg.PrepareReview(ch.files, ch.source, ch.ignored, s)
	if job != nil {
		for _, p := range job.SkillProblems {
			fmt.Fprintf(e.stderr, "warden: warning: skill not used, not loaded: %s\n", oneLine(p.Error()))
		}
	}
	if err != nil {
		return nil, &usageError{err}
	}
	return job, nil
}

// writeReport renders the report to --output or standard output.
func writeReport(e *env, o *reviewOptions, r *review.Report) error {
	return writeOutput(e, o.output, func(w io.Writer) error {
		ropts := report.Options{ToolVersion: version}
		if o.output == "" {
			ropts.Color = isTerminal(e.stdout) && e.getenv("NO_COLOR") == ""
		}
		return report.Write(w, r, o.format, ropts)
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
	path := output
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.dir, path)
	}
	if err := report.WriteFile(path, buf.Bytes()); err != nil {
		return usagef("--output %s: %v", output, unwrapPathError(err))
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if sw, isSync := w.(*syncWriter); isSync {
		f, ok = sw.file()
	}
	return ok && term.IsTerminal(int(f.Fd()))
}
