package cli

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/org/warden/action"
	"github.com/org/warden/eval"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// TestParseOptions: a command line becomes the command's typed options,
// the default command when none is named.
func TestParseOptions(t *testing.T) {
	t.Parallel()
	medium := review.SeverityMedium
	cases := []struct {
		args []string
		def  string
		want Invocation
	}{
		{nil, "review", Invocation{Command: "review", Options: &Review{Format: report.FormatText}}},
		{[]string{"--dry-run"}, "review", Invocation{Command: "review", Options: &Review{Format: report.FormatText, DryRun: true}}},
		{[]string{"review", "--diff", "-", "--skill", "a", "--skill", "b", "--fail-on", "medium", "--format", "sarif", "-v"}, "action",
			Invocation{Command: "review", Options: &Review{Diff: "-", Skills: []string{"a", "b"}, FailOn: review.ThresholdSettings{FailOn: &medium},
				Format: report.FormatSARIF, Verbose: true}}},
		{[]string{"probe", "--format", "json", "--force"}, "review", Invocation{Command: "probe", Options: &Probe{Format: "json", Force: true}}},
		{[]string{"eval", "--replay", "rec", "--max-regression", "0.1", "c1", "c2"}, "review", Invocation{Command: "eval",
			Options: &Eval{Replay: "rec", Format: "text", Thresholds: eval.Thresholds{Ratio: 0.1, Noise: eval.DefaultThresholds.Noise}, Corpus: []string{"c1", "c2"}}}},
		{[]string{"skills", "validate", "dir"}, "review", Invocation{Command: "skills", Options: &Skills{Sub: "validate", Dir: "dir"}}},
		{[]string{"version"}, "review", Invocation{Command: "version"}},
		{[]string{"--version"}, "review", Invocation{Command: "version"}},
		{[]string{"help"}, "review", Invocation{Help: true}},
		{[]string{"help", "eval"}, "review", Invocation{Command: "eval", Help: true}},
		{[]string{"help", "--help"}, "review", Invocation{Command: "help", Help: true}},
		{[]string{"probe", "--force", "-h"}, "review", Invocation{Command: "probe", Help: true}},
		{[]string{"-h"}, "action", Invocation{Help: true}},
		{[]string{"review", "--help=true"}, "action", Invocation{Command: "review", Help: true}},
	}
	for _, c := range cases {
		got, err := Parse(c.args, c.def)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.args, err)
			continue
		}
		if a, ok := got.Options.(*Action); ok {
			a.given = nil
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %+v (options %+v), want %+v (options %+v)", c.args, got, got.Options, c.want, c.want.Options)
		}
	}
}

// TestParseErrors: bad input is one *Error naming the command and the
// problem, with where to read the command's help.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"bogus":                        `unknown command "bogus". Run 'warden help' for usage`,
		"help bogus":                   `help: unknown command "bogus". Run 'warden help' for usage`,
		"review extra":                 `review: unexpected argument "extra". Run 'warden help review' for usage`,
		"review --diff a --base b":     `review: --diff and --base cannot be used together. Run 'warden help review' for usage`,
		"review --nope":                `review: unknown flag --nope. Run 'warden help review' for usage`,
		"review --fail-on bad":         `review: invalid value "bad" for flag -fail-on: unknown severity "bad" (want off, critical, high, medium, low or info). Run 'warden help review' for usage`,
		"probe --format xml":           `probe: unknown format "xml" (want text or json). Run 'warden help probe' for usage`,
		"eval":                         `eval: no corpus: name one or more case directories, or directories of cases. Run 'warden help eval' for usage`,
		"eval --replay a --record b x": `eval: --replay and --record cannot be used together. Run 'warden help eval' for usage`,
		"eval --max-regression 2 x":    `eval: --max-regression 2: want a fraction from 0 to 1. Run 'warden help eval' for usage`,
		"skills":                       `skills: want a subcommand: list or validate. Run 'warden help skills' for usage`,
		"skills list a b":              `skills list: want at most one directory, got 2 arguments. Run 'warden help skills' for usage`,
		"action extra":                 `action: unexpected argument "extra" (the Action is configured through its inputs). Run 'warden help action' for usage`,
		"action --mode bogus":          `action: invalid value "bogus" for flag -mode: "bogus" is not full, analyze or report. Run 'warden help action' for usage`,
		"version extra":                `version: unexpected argument "extra". Run 'warden help version' for usage`,
	}
	for line, want := range cases {
		_, err := Parse(strings.Fields(line), "review")
		var ce *Error
		if !errors.As(err, &ce) || err.Error() != want {
			t.Errorf("Parse(%q): %v (%T), want *Error %q", line, err, err, want)
		}
	}
	if _, _, err := SplitDir([]string{"-C"}); err == nil || err.Error() != "-C needs a directory: warden -C DIR COMMAND. Run 'warden help' for usage" {
		t.Errorf("SplitDir(-C): %v", err)
	}
	for _, args := range [][]string{{"-C", "d", "probe"}, {"-C=d", "probe"}} {
		if dir, rest, err := SplitDir(args); err != nil || dir != "d" || !reflect.DeepEqual(rest, []string{"probe"}) {
			t.Errorf("SplitDir(%q) = %q, %q, %v", args, dir, rest, err)
		}
	}
}

// TestActionFlagsOverrideGivenOnly: --mode and --report-path override the
// inputs only when given, an explicit empty --report-path included.
func TestActionFlagsOverrideGivenOnly(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want action.Inputs
	}{
		{[]string{"action"}, action.Inputs{Mode: action.ModeFull, ReportPath: "in.json"}},
		{[]string{"action", "--mode", "report"}, action.Inputs{Mode: action.ModeReport, ReportPath: "in.json"}},
		{[]string{"action", "--report-path", ""}, action.Inputs{Mode: action.ModeFull}},
		{[]string{"action", "--report-path=r.json", "--mode=analyze"}, action.Inputs{Mode: action.ModeAnalyze, ReportPath: "r.json"}},
	} {
		inv, err := Parse(c.args, "review")
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.args, err)
		}
		in := action.Inputs{Mode: action.ModeFull, ReportPath: "in.json"}
		inv.Options.(*Action).Apply(&in)
		if !reflect.DeepEqual(in, c.want) {
			t.Errorf("%q: inputs %+v, want %+v", c.args, in, c.want)
		}
	}
}

// TestHelpFromTheFlagDefinitions: every command's help has its summary,
// usage and examples, and its flag list comes from the parser's own
// definitions (a flag the parser knows is in the help, with its default).
func TestHelpFromTheFlagDefinitions(t *testing.T) {
	t.Parallel()
	for _, c := range Commands {
		var b strings.Builder
		WriteHelp(&b, c.Name, "v1")
		h := b.String()
		if !strings.HasPrefix(h, "warden "+c.Name+": "+c.Summary+"\n\nUsage:\n  warden "+c.Usage+"\n") || !strings.Contains(h, "\nExamples:\n  ") {
			t.Errorf("help %s:\n%s", c.Name, h)
		}
	}
	var b strings.Builder
	WriteHelp(&b, "eval", "v1")
	for _, want := range []string{"Flags:\n  -baseline FILE", "-max-regression FRACTION", "(default 0.05)", "-format FORMAT", `(default "text")`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("help eval does not say %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	WriteHelp(&b, "", "v1")
	if !strings.HasPrefix(b.String(), "warden v1 reviews code changes") || strings.Count(b.String(), "\n  ") < len(Commands) {
		t.Errorf("the command list:\n%s", b.String())
	}
	b.Reset()
	WriteHelp(&b, "skills", "v1")
	if strings.Contains(b.String(), "Flags:") {
		t.Errorf("help skills lists flags it has none of:\n%s", b.String())
	}
}
