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
		if ctx.Err() != nil {
			return exitInterrupted, errInterrupted
		}
		return exitUsage, &usageError{err}
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
		Setup: cfg.Setup(), Context: cfg.ContextOptions(nil), Replay: abs(o.Replay), Record: abs(o.Record), Logger: e.logger(o.Verbose),
		Sources: eval.Sources{Cache: config.EvalCacheDir(e.getenv), GitEnv: eval.GitEnv(os.Environ(), e.getenv),
			Progress: func(msg string) { fmt.Fprintf(e.stderr, "warden: eval: %s\n", msg) }}}
	return ec
}

// runFaultEval is `warden eval --replay DIR --faults FILE...`: the
// recording of warden.toml's first route replayed under no faults, then
// under each file's schedule on that file's routes and configuration.
func runFaultEval(ctx context.Context, e *env, o *cli.Eval, cfg *fileConfig, ec eval.Config, prep *eval.Prepared) (int, error) {
	rcs, err := cfg.RouteConfigs(e.getenv, false)
	if err != nil || len(rcs) == 0 {
		return exitUsage, usagef("eval: --faults replays the answers recorded for warden.toml's first route: add [[routes]]")
	}
	faults, err := eval.LoadFaults(o.Faults, e.abs, func(name string, doc []byte) (eval.Faults, error) {
		c, err := config.Parse(name, doc)
		if err != nil {
			return eval.Faults{}, err
		}
		return eval.Faults{Policy: c.Policy(), Routes: c.RoutesOver(e.getenv, version)}, nil
	})
	if err != nil {
		return exitUsage, usagef("eval: --faults: %v", err)
	}
	base := eval.Faults{Name: "no faults", Description: "the recording as it is, answered at once", Policy: cfg.Policy(), Routes: cfg.RoutesOver(e.getenv, version)}
	opts := ec.Options(prep, nil)
	res, err := eval.RunFaults(ctx, prep.Cases, base, faults, eval.FaultOptions{Skills: prep.Skills, Tape: opts.Tape, Model: rcs[0].Model,
		MaxTokens: opts.MaxTokens, Verify: opts.Verify, Context: opts.Context, Logger: opts.Logger})
	if err != nil {
		if ctx.Err() != nil {
			return exitInterrupted, errInterrupted
		}
		return exitUsage, err
	}
	if err := writeOutput(e, o.Output, func(w io.Writer) error { return eval.WriteFaults(w, o.Format, res) }); err != nil {
		return exitUsage, err
	}
	wrong, overBudget := res.Failed()
	switch misses := res.Misses(); {
	case wrong+overBudget > 0:
		fmt.Fprintf(e.stderr, "warden: eval: %d wrong outcomes and %d reviews over their budget under the fault schedules\n", wrong, overBudget)
		return exitFindings, nil
	case misses > 0:
		fmt.Fprintf(e.stderr, "warden: eval: %d items not in the recording; the scores are incomplete\n", misses)
		return exitIncomplete, nil
	}
	return exitOK, nil
}

func writeEval(e *env, o *cli.Eval, res *eval.Result, c *eval.Comparison) error {
	return writeOutput(e, o.Output, func(w io.Writer) error { return eval.Write(w, o.Format, res, c) })
}
