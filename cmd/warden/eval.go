package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/org/warden/eval"
)

// evalOptions are the flags of `warden eval`.
type evalOptions struct {
	config    string
	skillsDir string
	skills    stringList
	replay    string
	record    string
	baseline  string
	format    string
	output    string
	th        eval.Thresholds
	verbose   bool
	corpus    []string
}

func parseEvalFlags(args []string, stderr io.Writer) (*evalOptions, error) {
	o := &evalOptions{th: eval.DefaultThresholds}
	fs := flag.NewFlagSet("warden eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.config, "config", "", "configuration `FILE` with the [[routes]] to score (default: warden.toml at the repository's top level)")
	fs.StringVar(&o.skillsDir, "skills", "", "the repository root `DIR` whose skills (.warden/skills, ...) are scored, with the built-ins (default: the top level)")
	fs.Var(&o.skills, "skill", "score only this skill `NAME` (repeatable)")
	fs.StringVar(&o.replay, "replay", "", "answer every request from the recording in `DIR`; no model is called, no key needed")
	fs.StringVar(&o.record, "record", "", "save every model answer to `DIR`, for --replay")
	fs.StringVar(&o.baseline, "baseline", "", "compare with the JSON result in `FILE` (from --format json); exit 1 on a regression")
	fs.Float64Var(&o.th.Ratio, "max-regression", eval.DefaultThresholds.Ratio, "the largest drop in recall, precision or localisation --baseline allows, as a `FRACTION`")
	fs.Float64Var(&o.th.Noise, "max-noise-increase", eval.DefaultThresholds.Noise, "the largest rise in findings per 100 changed lines of clean cases --baseline allows (`N`)")
	fs.StringVar(&o.format, "format", "text", "output `FORMAT`: text, json or markdown")
	fs.StringVar(&o.output, "output", "", "write the result to `FILE` instead of standard output")
	fs.BoolVar(&o.verbose, "v", false, "log one line per model call to standard error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, &usageError{err}
	}
	o.corpus = fs.Args()
	switch {
	case len(o.corpus) == 0:
		return nil, usagef("eval: no corpus: name one or more case directories, or directories of cases")
	case o.replay != "" && o.record != "":
		return nil, usagef("eval: --replay and --record cannot be used together")
	case !slices.Contains(eval.Formats, o.format):
		return nil, usagef("eval: --format %q: want text, json or markdown", o.format)
	case o.th.Check() != nil:
		return nil, usagef("eval: %v", o.th.Check())
	}
	return o, nil
}

// runEval is `warden eval`. Exit codes: 0 scored (and no regression); 1 a
// regression against --baseline; 2 bad input; 3 some items got no answer
// (the scores are incomplete).
func runEval(ctx context.Context, e *env, args []string) (int, error) {
	o, err := parseEvalFlags(args, e.stderr)
	if err != nil {
		return exitUsage, err
	}
	cfg, err := loadConfigFlag(e, o.config)
	if err != nil {
		return exitUsage, err
	}
	ec := evalConfig(e, o, cfg)
	prep, err := eval.Prepare(ec)
	if err != nil {
		return exitUsage, &usageError{err}
	}
	for _, p := range prep.Unused {
		fmt.Fprintf(e.stderr, "warden: warning: skill not used, not loaded: %s\n", oneLine(p.Error()))
	}
	if o.replay != "" {
		if fi, err := os.Stat(ec.Replay); err != nil || !fi.IsDir() {
			return exitUsage, usagef("eval: --replay %s: not a directory of recorded answers", o.replay)
		}
	}
	routes, err := cfg.EngineRoutes(e.getenv, o.replay == "", version)
	if err != nil {
		return exitUsage, &usageError{err}
	}
	if err := eval.CheckRoutes(routes); err != nil {
		return exitUsage, usagef("eval: %v", err)
	}
	res, err := eval.Run(ctx, prep.Cases, ec.Options(prep, routes))
	if err != nil {
		if ctx.Err() != nil {
			return exitInterrupted, errInterrupted
		}
		return exitUsage, err
	}
	cmpr, incomplete := prep.Judge(res, o.th)
	if err := writeEval(e, o, res, cmpr); err != nil {
		return exitUsage, err
	}
	switch {
	case cmpr != nil && len(cmpr.Regressions) > 0:
		fmt.Fprintf(e.stderr, "warden: eval: %d regressions against %s\n", len(cmpr.Regressions), o.baseline)
		return exitFindings, nil
	case incomplete > 0:
		fmt.Fprintf(e.stderr, "warden: eval: %d items got no answer; the scores are incomplete\n", incomplete)
		return exitIncomplete, nil
	}
	return exitOK, nil
}

// evalConfig is the run's eval.Config: the flags' paths made absolute
// under the working directory, and the configuration's part.
func evalConfig(e *env, o *evalOptions, cfg *fileConfig) eval.Config {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(e.dir, p)
	}
	for i, p := range o.corpus {
		o.corpus[i] = abs(p)
	}
	ec := eval.Config{Corpus: o.corpus, Baseline: abs(o.baseline), Skills: os.DirFS(cmp.Or(abs(o.skillsDir), e.root, e.dir)), Only: o.skills,
		Setup: cfg.Setup(), Context: cfg.ContextOptions(nil), Replay: abs(o.replay), Record: abs(o.record), Logger: slog.New(slog.DiscardHandler)}
	if o.verbose {
		ec.Logger = slog.New(slog.NewTextHandler(e.stderr, nil))
	}
	return ec
}

func writeEval(e *env, o *evalOptions, res *eval.Result, c *eval.Comparison) error {
	return writeOutput(e, o.output, func(w io.Writer) error { return eval.Write(w, o.format, res, c) })
}
