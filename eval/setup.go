package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"

	"github.com/org/warden/execution"
	"github.com/org/warden/related"
	"github.com/org/warden/review"
	"github.com/org/warden/skills"
)

// Config is what one eval run takes from the wiring: where the corpus,
// the baseline, the skills and the recording are, and the configuration's
// part of a review's setup.
type Config struct {
	Corpus   []string // case directories, directories of cases, or pointer corpus files
	Sources  Sources  // where pointer cases are fetched and kept
	Baseline string   // a JSON result (WriteJSON) to compare with; "" for none
	Skills   fs.FS    // the repository root whose skills are scored, with the built-ins
	Only     []string // score only these skills; none: every configured one
	// Setup is the configuration's part: the configured skills, the
	// engine's policy, the answer cap and the verification mode.
	Setup   review.Setup
	Context *related.Options // context beyond the hunk; nil for none
	Replay  string           // answer every request from this recording
	Record  string           // save every model answer here (not with Replay)
	// Faults are scenario files (or directories of them) whose fault
	// schedules play while Replay is replayed (RunFaults).
	Faults []string
	Logger *slog.Logger
}

// Prepared is what a run scores: the corpus's cases, the chosen skills
// (with the problems of skills not chosen, for warnings) and the baseline.
type Prepared struct {
	Cases    []*Case
	Skills   []*skills.Skill
	Unused   skills.Problems
	Baseline *Result // nil when Config.Baseline is ""
}

// Prepare loads the corpus (fetching the commits of pointer cases not in
// the cache), the baseline and the skills, in that order; the first
// problem is the error.
func Prepare(ctx context.Context, c Config) (*Prepared, error) {
	cases, err := c.Sources.Load(ctx, c.Corpus)
	if err != nil {
		return nil, err
	}
	p := &Prepared{Cases: cases}
	if c.Baseline != "" {
		if p.Baseline, err = ReadResult(c.Baseline); err != nil {
			return nil, err
		}
	}
	if p.Skills, p.Unused, err = review.ChooseSkills(c.Skills, c.Setup.Configured, c.Only); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(c.Replay); c.Replay != "" && (err != nil || !fi.IsDir()) {
		return nil, fmt.Errorf("eval: --replay %s: not a directory of recorded answers", c.Replay)
	}
	return p, nil
}

// Report is a finished run as the command line shows it.
type Report interface {
	// Write renders the run in format, one of Formats.
	Write(w io.Writer, format string) error
	// Verdict says, each as one line ("" for none), what a CI gate fails
	// on and, else, what makes the scores incomplete.
	Verdict() (failed, incomplete string)
}

// scored is a run of Score: its result, its comparison with the baseline
// and the judgement of both.
type scored struct {
	res                *Result
	cmp                *Comparison
	failed, incomplete string
}

func (s scored) Write(w io.Writer, format string) error { return Write(w, format, s.res, s.cmp) }
func (s scored) Verdict() (failed, incomplete string)   { return s.failed, s.incomplete }

// Score runs the prepared eval on routes (Run) and judges it against the
// baseline, if any, with th (Judge).
func (c Config) Score(ctx context.Context, p *Prepared, routes []execution.Route, th Thresholds) (Report, error) {
	if err := CheckRoutes(routes); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	res, err := Run(ctx, p.Cases, c.Options(p, routes))
	if err != nil {
		return nil, err
	}
	cmp, failed, incomplete := p.Judge(res, th, c.Baseline)
	return scored{res, cmp, failed, incomplete}, nil
}

// RunFaults replays the prepared eval with no faults, with base's policy
// and routes, then under each schedule of c.Faults, read by parse
// (LoadFaults, RunFaults).
func (c Config) RunFaults(ctx context.Context, p *Prepared, parse func(name string, doc []byte) (execution.Policy, func([]http.RoundTripper) ([]execution.Route, error), error), base Faults) (Report, error) {
	faults, err := LoadFaults(c.Faults, parse)
	if err != nil {
		return nil, fmt.Errorf("eval: --faults: %w", err)
	}
	res, err := RunFaults(ctx, p.Cases, base, faults, c.FaultOptions(p))
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	return res, nil
}

// Options are the run's options on routes: the prepared skills, the
// configuration's policy, answer cap, verification and context, and a tape
// that replays, records or (neither set) only counts.
func (c Config) Options(p *Prepared, routes []execution.Route) Options {
	tape := NewTape(ModeLive, "", "")
	switch {
	case c.Replay != "":
		tape = NewTape(ModeReplayed, c.Replay, "")
	case c.Record != "":
		tape = NewTape(ModeRecorded, c.Record, "")
	}
	return Options{Skills: p.Skills, Routes: routes, Policy: c.Setup.Policy, MaxTokens: c.Setup.MaxTokens,
		Tape: tape, Logger: c.Logger, Verify: c.Setup.Verify, Context: c.Context}
}

// FaultOptions are a fault-scored run's options: the prepared skills, the
// configuration's answer cap, verification and context, and the replayed
// recording (of the baseline's first route: RunFaults).
func (c Config) FaultOptions(p *Prepared) FaultOptions {
	return FaultOptions{Skills: p.Skills, Tape: NewTape(ModeReplayed, c.Replay, ""), MaxTokens: c.Setup.MaxTokens,
		Verify: c.Setup.Verify, Context: c.Context, Logger: c.Logger}
}

// Judge compares res with the baseline, when there is one (nil otherwise),
// and says, each as one line ("" for none), what a CI gate fails on (a
// regression against the baseline, whose file is named) and, else, what
// makes the scores incomplete (items that got no answer).
func (p *Prepared) Judge(res *Result, th Thresholds, baseline string) (c *Comparison, failed, incomplete string) {
	if p.Baseline != nil {
		cmp := Compare(p.Baseline, res, th)
		c = &cmp
		if n := len(cmp.Regressions); n > 0 {
			return c, fmt.Sprintf("%d regressions against %s", n, baseline), ""
		}
	}
	n := 0
	for _, s := range res.Scores {
		n += s.Failed
	}
	if n > 0 {
		incomplete = fmt.Sprintf("%d items got no answer; the scores are incomplete", n)
	}
	return c, "", incomplete
}

// Formats are the renderings Write knows.
var Formats = []string{"text", "json", "markdown"}

// CheckRoutes refuses a run with no model route to score: config's
// stand-in route "none", when no route is configured.
func CheckRoutes(routes []execution.Route) error {
	if len(routes) == 1 && routes[0].Name == "none" {
		return errors.New("no model route to score: add [[routes]] to warden.toml (--replay needs the routes it was recorded on)")
	}
	return nil
}

// Write renders the result (and the comparison, when there is one) in
// format, one of Formats.
func Write(w io.Writer, format string, r *Result, c *Comparison) error {
	switch format {
	case "text":
		return WriteText(w, r, c)
	case "json":
		return WriteJSON(w, r, c)
	case "markdown":
		return WriteMarkdown(w, r, c)
	}
	return fmt.Errorf("format %q: want text, json or markdown", format)
}
