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

// runEval is `warden eval`: scored on the configured routes, or with
// --faults replayed under fault schedules. Exit codes: 0 scored (and no
// regression); 1 a regression against --baseline, or under --faults a
// wrong outcome or a review over its budget; 2 bad input; 3 some items got
// no answer (the scores are incomplete).
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
	v := wardenBuild().Version
	var rep eval.Report
	if len(o.Faults) > 0 {
		rep, err = ec.RunFaults(ctx, prep, config.ScenarioReader(e.getenv, v), eval.Faults{Policy: cfg.Policy(), Routes: cfg.RoutesOver(e.getenv, v)})
	} else if routes, rerr := cfg.EngineRoutes(e.getenv, o.Replay == "", v); rerr != nil {
		return exitUsage, &usageError{rerr}
	} else {
		rep, err = ec.Score(ctx, prep, routes, o.Thresholds)
	}
	if err != nil {
		return evalError(ctx, &usageError{err})
	}
	if err := writeOutput(e, o.Output, func(w io.Writer) error { return rep.Write(w, o.Format) }); err != nil {
		return exitUsage, err
	}
	failed, incomplete := rep.Verdict()
	if msg := cmp.Or(failed, incomplete); msg != "" {
		fmt.Fprintf(e.stderr, "warden: eval: %s\n", msg)
	}
	switch {
	case failed != "":
		return exitFindings, nil
	case incomplete != "":
		return exitIncomplete, nil
	}
	return exitOK, nil
}

// evalError is a failed eval step's exit: interrupted when ctx ended, else
// err (exit 2).
func evalError(ctx context.Context, err error) (int, error) {
	if ctx.Err() != nil {
		return exitInterrupted, errInterrupted
	}
	return exitUsage, err
}

// evalConfig is the run's eval.Config: the flags' paths made absolute
// under the working directory, the configuration's part, and where
// pointer corpora are fetched (git with the user's own configuration).
func evalConfig(e *env, o *cli.Eval, cfg *fileConfig) eval.Config {
	for _, paths := range [][]string{o.Corpus, o.Faults} {
		for i, p := range paths {
			paths[i] = e.abs(p)
		}
	}
	return eval.Config{Corpus: o.Corpus, Faults: o.Faults, Baseline: e.abs(o.Baseline), Skills: os.DirFS(cmp.Or(e.abs(o.SkillsDir), e.root, e.dir)),
		Only: o.Skills, Setup: cfg.Setup(), Context: cfg.ContextOptions(nil), Replay: e.abs(o.Replay), Record: e.abs(o.Record), Logger: e.logger(o.Verbose),
		Sources: eval.Sources{Cache: config.EvalCacheDir(e.getenv), GitEnv: eval.GitEnv(os.Environ(), e.getenv),
			Progress: func(msg string) { fmt.Fprintf(e.stderr, "warden: eval: %s\n", msg) }}}
}
