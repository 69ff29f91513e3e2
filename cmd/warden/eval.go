package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/org/warden/cli"
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
	prep, err := eval.Prepare(ec)
	if err != nil {
		return exitUsage, &usageError{err}
	}
	e.warnUnloaded(prep.Unused)
	if o.Replay != "" {
		if fi, err := os.Stat(ec.Replay); err != nil || !fi.IsDir() {
			return exitUsage, usagef("eval: --replay %s: not a directory of recorded answers", o.Replay)
		}
	}
	routes, err := cfg.EngineRoutes(e.getenv, o.Replay == "", wardenBuild().Version)
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
	cmpr, incomplete := prep.Judge(res, o.Thresholds)
	if err := writeEval(e, o, res, cmpr); err != nil {
		return exitUsage, err
	}
	switch {
	case cmpr != nil && len(cmpr.Regressions) > 0:
		fmt.Fprintf(e.stderr, "warden: eval: %d regressions against %s\n", len(cmpr.Regressions), o.Baseline)
		return exitFindings, nil
	case incomplete > 0:
		fmt.Fprintf(e.stderr, "warden: eval: %d items got no answer; the scores are incomplete\n", incomplete)
		return exitIncomplete, nil
	}
	return exitOK, nil
}

// evalConfig is the run's eval.Config: the flags' paths made absolute
// under the working directory, and the configuration's part.
func evalConfig(e *env, o *cli.Eval, cfg *fileConfig) eval.Config {
	abs := e.abs
	for i, p := range o.Corpus {
		o.Corpus[i] = abs(p)
	}
	ec := eval.Config{Corpus: o.Corpus, Baseline: abs(o.Baseline), Skills: os.DirFS(cmp.Or(abs(o.SkillsDir), e.root, e.dir)), Only: o.Skills,
		Setup: cfg.Setup(), Context: cfg.ContextOptions(nil), Replay: abs(o.Replay), Record: abs(o.Record), Logger: e.logger(o.Verbose)}
	return ec
}

func writeEval(e *env, o *cli.Eval, res *eval.Result, c *eval.Comparison) error {
	return writeOutput(e, o.Output, func(w io.Writer) error { return eval.Write(w, o.Format, res, c) })
}
