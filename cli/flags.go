package cli

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/org/warden/action"
	"github.com/org/warden/eval"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// Review are the options of `warden review`.
type Review struct {
	Diff   string // a unified diff file, "-" for standard input
	Base   string
	Config string
	Skills []string
	Format report.Format
	Output string
	DryRun bool
	// FailOn is --fail-on as a threshold layer: empty when not given.
	FailOn  review.ThresholdSettings
	Verbose bool
	// AllowEmpty accepts an empty --diff as a change with nothing to
	// review, for pipelines where an empty diff is expected.
	AllowEmpty bool
}

func parseReview(fs *flag.FlagSet, args []string) (any, error) {
	o := &Review{Format: report.FormatText}
	var failOn severityFlag
	fs.StringVar(&o.Diff, "diff", "", "review this unified diff `FILE` (- for standard input)")
	fs.StringVar(&o.Base, "base", "", "review the commits since the branch left `REF` (merge-base of REF and HEAD, to HEAD)")
	fs.StringVar(&o.Config, "config", "", "configuration `FILE` (default: warden.toml at the repository's top level, when present)")
	fs.Var((*stringList)(&o.Skills), "skill", "run only this skill `NAME` (repeatable)")
	fs.Var(&o.Format, "format", "output `FORMAT`: text (the default), json, markdown or sarif")
	fs.StringVar(&o.Output, "output", "", "write the report to `FILE` instead of standard output")
	fs.BoolVar(&o.AllowEmpty, "allow-empty", false, "accept an empty --diff as a change with nothing to review (default: an empty diff is an error, as after a failed command in a pipe)")
	fs.BoolVar(&o.DryRun, "dry-run", false, "print the plan and call no model (needs no API key)")
	fs.Var(&failOn, "fail-on", "exit 1 when a finding is at or above this `SEVERITY`: off, critical, high, medium, low, info (default: review.fail_on in warden.toml, else high)")
	fs.BoolVar(&o.Verbose, "v", false, "log the configuration file and skills used, and one line per model call (route, model, kind, deadline, duration, class, decision), to standard error")
	if err := parseFlags(fs, args, 0); err != nil {
		return nil, err
	}
	if o.Diff != "" && o.Base != "" {
		return nil, errors.New("--diff and --base cannot be used together")
	}
	if failOn.set {
		o.FailOn.FailOn = &failOn.v
	}
	return o, nil
}

// Probe are the options of `warden probe`.
type Probe struct {
	Config string
	Format string // text or json
	Force  bool
}

func parseProbe(fs *flag.FlagSet, args []string) (any, error) {
	o := &Probe{}
	fs.StringVar(&o.Config, "config", "", "configuration `FILE` (default: warden.toml when present)")
	fs.StringVar(&o.Format, "format", "text", "output format: text or json")
	fs.BoolVar(&o.Force, "force", false, "probe even if a route was probed within the hour")
	if err := parseFlags(fs, args, 0); err != nil {
		return nil, err
	}
	if o.Format != "text" && o.Format != "json" {
		return nil, fmt.Errorf("unknown format %q (want text or json)", o.Format)
	}
	return o, nil
}

// Eval are the options of `warden eval`.
type Eval struct {
	Config     string
	SkillsDir  string
	Skills     []string
	Replay     string
	Record     string
	Baseline   string
	Faults     []string // scenario files (or directories of them) whose fault schedules play during a replay
	Format     string   // one of eval.Formats
	Output     string
	Thresholds eval.Thresholds
	Verbose    bool
	Corpus     []string
}

func parseEval(fs *flag.FlagSet, args []string) (any, error) {
	o := &Eval{Thresholds: eval.DefaultThresholds}
	fs.StringVar(&o.Config, "config", "", "configuration `FILE` with the [[routes]] to score (default: warden.toml at the repository's top level)")
	fs.StringVar(&o.SkillsDir, "skills", "", "the repository root `DIR` whose skills (.warden/skills, ...) are scored, with the built-ins (default: the top level)")
	fs.Var((*stringList)(&o.Skills), "skill", "score only this skill `NAME` (repeatable)")
	fs.StringVar(&o.Replay, "replay", "", "answer every request from the recording in `DIR`; no model is called, no key needed")
	fs.StringVar(&o.Record, "record", "", "save every model answer to `DIR`, for --replay")
	fs.StringVar(&o.Baseline, "baseline", "", "compare with the JSON result in `FILE` (from --format json); exit 1 on a regression")
	fs.Var((*stringList)(&o.Faults), "faults", "with --replay: play the fault schedule of the scenario `FILE` (or each *.toml of a directory) against the routes and score outcome, time, calls and recall (repeatable)")
	fs.Float64Var(&o.Thresholds.Ratio, "max-regression", eval.DefaultThresholds.Ratio, "the largest drop in recall, precision or localisation --baseline allows, as a `FRACTION`")
	fs.Float64Var(&o.Thresholds.Noise, "max-noise-increase", eval.DefaultThresholds.Noise, "the largest rise in findings per 100 changed lines of clean cases --baseline allows (`N`)")
	fs.StringVar(&o.Format, "format", "text", "output `FORMAT`: text, json or markdown")
	fs.StringVar(&o.Output, "output", "", "write the result to `FILE` instead of standard output")
	fs.BoolVar(&o.Verbose, "v", false, "log one line per model call to standard error")
	if err := parseFlags(fs, args, -1); err != nil {
		return nil, err
	}
	o.Corpus = fs.Args()
	switch {
	case len(o.Corpus) == 0:
		return nil, errors.New("no corpus: name one or more case directories, or directories of cases")
	case o.Replay != "" && o.Record != "":
		return nil, errors.New("--replay and --record cannot be used together")
	case len(o.Faults) > 0 && o.Replay == "":
		return nil, errors.New("--faults needs --replay DIR: the schedules play over recorded answers")
	case len(o.Faults) > 0 && o.Baseline != "":
		return nil, errors.New("--faults and --baseline cannot be used together: a fault-scored run has no baseline")
	case !slices.Contains(eval.Formats, o.Format):
		return nil, fmt.Errorf("--format %q: want text, json or markdown", o.Format)
	}
	return o, o.Thresholds.Check()
}

// Skills are the options of `warden skills`.
type Skills struct {
	Sub string // list or validate
	Dir string // "" for the repository's top level
}

func parseSkills(fs *flag.FlagSet, args []string) (any, error) {
	if len(args) == 0 {
		return nil, errors.New("want a subcommand: list or validate")
	}
	o := &Skills{Sub: args[0]}
	if subs := []string{"list", "validate"}; !slices.Contains(subs, o.Sub) {
		if len(suggest(o.Sub, subs)) > 0 {
			return nil, unknownWord("subcommand", o.Sub, subs)
		}
		return nil, fmt.Errorf("unknown subcommand %q (want list or validate)", o.Sub)
	}
	if err := fs.Parse(args[1:]); err != nil {
		return nil, fmt.Errorf("skills %s: %w", o.Sub, err)
	}
	if fs.NArg() > 1 {
		return nil, fmt.Errorf("skills %s: want at most one directory, got %d arguments", o.Sub, fs.NArg())
	}
	o.Dir = fs.Arg(0)
	return o, nil
}

// Action are the flags of `warden action`, which override the inputs of the
// same name (Apply).
type Action struct {
	Mode       action.Mode
	ReportPath string
	given      map[string]bool // the flags on the command line
}

func parseAction(fs *flag.FlagSet, args []string) (any, error) {
	o := &Action{}
	fs.Var(&o.Mode, "mode", "full (review and publish), analyze (review and write the report file, publish nothing: the unprivileged half of a fork workflow) or report (publish a report file from analyze: the privileged workflow_run half); default the mode input, else full")
	fs.StringVar(&o.ReportPath, "report-path", "", "the JSON report `FILE`: written by full and analyze (default $RUNNER_TEMP/warden-report.json), read by report")
	err := parseFlags(fs, args, 0)
	if err != nil && strings.HasPrefix(err.Error(), "unexpected argument") {
		err = fmt.Errorf("%w (the Action is configured through its inputs)", err)
	}
	o.given = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.given[f.Name] = true })
	return o, err
}

// Apply overrides the inputs with the flags given.
func (o *Action) Apply(in *action.Inputs) {
	if o.given["mode"] {
		in.Mode = o.Mode
	}
	if o.given["report-path"] {
		in.ReportPath = o.ReportPath
	}
}

// parseFlags parses args with fs and allows at most maxArgs arguments after
// the flags (-1: any number).
func parseFlags(fs *flag.FlagSet, args []string, maxArgs int) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if maxArgs >= 0 && fs.NArg() > maxArgs {
		return fmt.Errorf("unexpected argument %q", fs.Arg(maxArgs))
	}
	return nil
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

func (s *severityFlag) Set(v string) error {
	sev, err := review.ParseSeverity(v)
	if err != nil {
		return err
	}
	*s = severityFlag{true, sev}
	return nil
}
