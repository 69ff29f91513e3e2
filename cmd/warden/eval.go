package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/org/warden/cli"
	"github.com/org/warden/config"
	"github.com/org/warden/eval"
)

// runEval is `warden eval`. Exit codes: 0 scored (and no regression); 1 a
// regression against --baseline; 2 bad input; 3 some items got no answer
// (the scores are incomplete).
func runEval(ctx context.Context, e *env, o *cli.Eval) (int, error) {
	cfg, err := loadConfigFlag(e, o.Config)
	if err != nil {
		return exitUsage, err
	}
	ec := evalConfig(e, o, cfg)
	prep, err := eval.Prepare(ctx, ec)
	if err != nil {
		return evalError(ctx, &usageError{err})
	}
	e.warnUnloaded(prep.Unused)
	if o.Replay != "" {
		if fi, err := os.Stat(ec.Replay); err != nil || !fi.IsDir() {
			return exitUsage, usagef("eval: --replay %s: not a directory of recorded answers", o.Replay)
		}
	}
	if len(o.Faults) > 0 {
		return runFaultEval(ctx, e, o, cfg, ec, prep)
	}
	routes, err := cfg.EngineRoutes(e.getenv, o.Replay == "", version)
	if err != nil {
		return exitUsage, &usageError{err}
	}
	if err := eval.CheckRoutes(routes); err != nil {
		return exitUsage, usagef("eval: %v", err)
	}
	res, err := eval.Run(ctx, prep.Cases, ec.Options(prep, routes))
	if err != nil {
		return evalError(ctx, err)
	}
	cmpr, failed, incomplete := prep.Judge(res, o.Thresholds, o.Baseline)
	if err := writeOutput(e, o.Output, func(w io.Writer) error { return eval.Write(w, o.Format, res, cmpr) }); err != nil {
		return exitUsage, err
	}
	return e.evalExit(failed, incomplete), nil
}

// evalError is a failed eval step's exit: interrupted when ctx ended, else
// err (bad input, exit 2).
func evalError(ctx context.Context, err error) (int, error) {
	if ctx.Err() != nil {
		return exitInterrupted, errInterrupted
	}
	return exitUsage, err
}

// evalExit is the exit code of a scored run: 1 when failed says what a
// gate fails on, 3 when incomplete says the scores are incomplete, else 0;
// the reason goes to standard error.
func (e *env) evalExit(failed, incomplete string) int {
	if msg := cmp.Or(failed, incomplete); msg != "" {
		fmt.Fprintf(e.stderr, "warden: eval: %s\n", msg)
	}
	switch {
	case failed != "":
		return exitFindings
	case incomplete != "":
		return exitIncomplete
	}
	return exitOK
}

// evalConfig is the run's eval.Config: the flags' paths made absolute
// under the working directory, and the configuration's part.
func evalConfig(e *env, o *cli.Eval, cfg *fileConfig) eval.Config {
	for i, p := range o.Corpus {
		o.Corpus[i] = e.abs(p)
	}
	return eval.Config{Corpus: o.Corpus, Baseline: e.abs(o.Baseline), Skills: os.DirFS(cmp.Or(e.abs(o.SkillsDir), e.root, e.dir)), Only: o.Skills,
		Setup: cfg.Setup(), Context: cfg.ContextOptions(nil), Replay: e.abs(o.Replay), Record: e.abs(o.Record), Logger: e.logger(o.Verbose),
		Sources: eval.Sources{Cache: config.EvalCacheDir(e.getenv), GitEnv: eval.GitEnv(os.Environ(), e.getenv),
			Progress: func(msg string) { fmt.Fprintf(e.stderr, "warden: eval: %s\n", msg) }}}
}

// runFaultEval is `warden eval --replay DIR --faults FILE...`: the
// recording of warden.toml's first route replayed under no faults, then
// under each file's schedule on that file's routes and configuration.
func runFaultEval(ctx context.Context, e *env, o *cli.Eval, cfg *fileConfig, ec eval.Config, prep *eval.Prepared) (int, error) {
	faults, err := eval.LoadFaults(o.Faults, e.abs, config.ScenarioReader(e.getenv, version))
	if err != nil {
		return exitUsage, usagef("eval: --faults: %v", err)
	}
	base := eval.Faults{Policy: cfg.Policy(), Routes: cfg.RoutesOver(e.getenv, version)}
	res, err := eval.RunFaults(ctx, prep.Cases, base, faults, ec.FaultOptions(prep))
	if err != nil {
		return evalError(ctx, usagef("eval: %v", err))
	}
	if err := writeOutput(e, o.Output, func(w io.Writer) error { return eval.WriteFaults(w, o.Format, res) }); err != nil {
		return exitUsage, err
	}
	return e.evalExit(res.Verdict()), nil
}
