package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

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
		Sources: eval.Sources{Cache: config.EvalCacheDir(e.getenv), GitEnv: gitEnv(e.getenv),
			Progress: func(msg string) { fmt.Fprintf(e.stderr, "warden: eval: %s\n", msg) }}}
	return ec
}

// gitConfigVars are the variables git reads its configuration from.
var gitConfigVars = []string{"HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"}

// gitEnv is the environment of the git that fetches pointer corpora: the
// process's, with the variables git reads its configuration from as getenv
// gives them, so that the user's url.<base>.insteadOf (a local mirror,
// offline) applies as it does to their own git, and a test can give git a
// configuration of its own.
func gitEnv(getenv func(string) string) []string {
	names := slices.Clone(gitConfigVars)
	n, _ := strconv.Atoi(getenv("GIT_CONFIG_COUNT"))
	for i := range max(n, 0) {
		names = append(names, fmt.Sprintf("GIT_CONFIG_KEY_%d", i), fmt.Sprintf("GIT_CONFIG_VALUE_%d", i))
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, k) && !strings.HasPrefix(k, "GIT_CONFIG_KEY_") && !strings.HasPrefix(k, "GIT_CONFIG_VALUE_") {
			env = append(env, kv)
		}
	}
	for _, k := range names {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func writeEval(e *env, o *cli.Eval, res *eval.Result, c *eval.Comparison) error {
	return writeOutput(e, o.Output, func(w io.Writer) error { return eval.Write(w, o.Format, res, c) })
}
