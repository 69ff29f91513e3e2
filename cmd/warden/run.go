package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/org/warden/cli"
	"github.com/org/warden/internal/gitrepo"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
	"github.com/org/warden/skills"
)

// Exit codes (DESIGN.md §5, contract). exitCode is the one place that maps
// results and errors to them.
const (
	exitOK          = 0   // complete, no finding at or above --fail-on
	exitFindings    = 1   // a finding at or above --fail-on
	exitUsage       = 2   // usage, configuration or input error; nothing was sent
	exitIncomplete  = 3   // partial or provider-unavailable, no blocking finding
	exitInterrupted = 130 // interrupted by a signal
)

// usageError is bad input from the user: a flag, a file, the configuration.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// errInterrupted reports that a signal stopped the command.
var errInterrupted = errors.New("interrupted")

// env is what a command may know of the process. The context is each
// command's first argument, never stored.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	dir    string // the working directory (-C)
	// root is the repository's top level (git rev-parse --show-toplevel)
	// when dir is inside a git checkout, else dir: warden.toml and the
	// skills are found there, whatever the working directory.
	root string
	// configFile is the configuration file loadConfigFlag read ("" for
	// none), for -v.
	configFile string
}

// abs is path as given on the command line, relative to the working
// directory (-C); "" stays "".
func (e *env) abs(path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(e.dir, path)
}

// logger is -v's logger on standard error, else one that discards.
func (e *env) logger(verbose bool) *slog.Logger {
	if verbose {
		return slog.New(slog.NewTextHandler(e.stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}

// warnUnloaded says which skill files were skipped, and what is odd in the
// skills that run (the review goes on; its report lists them too).
func (e *env) warnUnloaded(problems skills.Problems) {
	for _, p := range problems {
		fmt.Fprintf(e.stderr, "warden: warning: %s\n", oneLine(p.Error()))
	}
}

// run is warden's main, with the process passed in. It returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	// Progress, the logger and errors all write to stderr, from several
	// goroutines: serialize them.
	stderr = &syncWriter{w: stderr}
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	code, err := dispatch(ctx, e, args)
	if err != nil {
		fmt.Fprintf(stderr, "warden: %s\n", oneLine(err.Error()))
	}
	return code
}

func dispatch(ctx context.Context, e *env, args []string) (int, error) {
	dir, args, err := cli.SplitDir(args)
	if err != nil {
		return exitUsage, &usageError{err}
	}
	if err := e.chdir(dir); err != nil {
		return exitUsage, err
	}
	def := "review"
	if e.getenv("GITHUB_ACTIONS") == "true" {
		def = "action"
	}
	inv, err := cli.Parse(args, def)
	switch {
	case err != nil:
		return exitUsage, &usageError{err}
	case inv.Help:
		cli.WriteHelp(e.stdout, inv.Command, wardenBuild().Version)
		return exitOK, nil
	case inv.Command == "version":
		fmt.Fprintln(e.stdout, wardenBuild())
		return exitOK, nil
	}
	e.root = gitrepo.TopLevel(ctx, e.dir)
	switch o := inv.Options.(type) {
	case *cli.Review:
		return exitCode(runReview(ctx, e, o))
	case *cli.Probe:
		return exitCode(runProbe(ctx, e, o))
	case *cli.Eval:
		return exitCode(runEval(ctx, e, o))
	case *cli.Skills:
		return exitCode(0, runSkills(e, o))
	case *cli.Action:
		return exitCode(runAction(ctx, e, o))
	}
	return exitUsage, fmt.Errorf("command %q has no runner", inv.Command)
}

// chdir sets e.dir to dir (-C), the working directory by default.
func (e *env) chdir(dir string) error {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("working directory: %w", err)
		}
		e.dir = wd
		return nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("-C %s: not a directory", dir)
	}
	e.dir = dir
	return nil
}

// exitCode maps a command's result and error to the process exit code.
func exitCode(code int, err error) (int, error) {
	var ue *usageError
	switch {
	case err == nil:
		return code, nil
	case errors.Is(err, errInterrupted):
		return exitInterrupted, err
	case errors.As(err, &ue):
		return exitUsage, err
	default:
		return max(code, exitUsage), err
	}
}

// syncWriter serializes writes to w. It keeps w's terminal-ness visible
// through file, so progress can still tell a terminal from a pipe.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// file returns the *os.File behind s, if any.
func (s *syncWriter) file() (*os.File, bool) {
	f, ok := s.w.(*os.File)
	return f, ok
}

// reviewExit is the exit code of a finished review (DESIGN.md §5).
func reviewExit(r *review.Report, failOn review.Severity) int {
	switch {
	case r.Outcome == review.OutcomeDryRun: // a plan: its secrets' findings block nothing
		return exitOK
	case r.Blocks(failOn):
		return exitFindings
	case r.Complete():
		return exitOK
	default:
		return exitIncomplete
	}
}

// oneLine folds a message onto one line (report.OneLine, the one folding).
var oneLine = report.OneLine
