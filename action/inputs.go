package action

import (
	"fmt"
	"time"

	ghreport "github.com/org/warden/report/github"
	"github.com/org/warden/review"
)

// Mode is what the Action does: the whole job, or one half of the split
// workflow for fork pull requests.
type Mode string

const (
	// ModeFull reviews and publishes (check run, review, annotations).
	ModeFull Mode = "full"
	// ModeAnalyze reviews and writes the report file, and publishes
	// nothing: the unprivileged pull_request half, with a read-only token.
	ModeAnalyze Mode = "analyze"
	// ModeReport publishes the report file of an analyze run: the
	// privileged workflow_run half. It calls no model.
	ModeReport Mode = "report"
)

func (m Mode) String() string { return string(m) }

// Set implements flag.Value.
func (m *Mode) Set(v string) error {
	switch Mode(v) {
	case ModeFull, ModeAnalyze, ModeReport:
		*m = Mode(v)
		return nil
	}
	return fmt.Errorf("%q is not full, analyze or report", v)
}

// Inputs are the Action's inputs (action.yml), parsed. Thresholds left nil
// come from the configuration, else the defaults.
type Inputs struct {
	ConfigPath           string
	Thresholds           review.ThresholdSettings // fail-on, report-on, max-findings
	IncompleteConclusion string
	FailOnIncomplete     bool
	RequestChanges       bool
	CheckName            string
	Skills               []string
	SkipDrafts           bool
	SkipBots             bool
	PRNumber             int
	Budget               time.Duration
	TrustedAuthorsOnly   bool
	Mode                 Mode
	ReportPath           string
}

// DefaultInputs are the inputs' defaults, as action.yml states them.
func DefaultInputs() Inputs {
	return Inputs{CheckName: "warden", IncompleteConclusion: ghreport.DefaultIncompleteConclusion, SkipDrafts: true, SkipBots: true, Mode: ModeFull}
}

// check refuses inputs Run cannot act on.
func (in *Inputs) check() error {
	c, err := ghreport.ParseIncompleteConclusion(in.IncompleteConclusion)
	if err != nil {
		return inputErrorf("input %v", err)
	}
	in.IncompleteConclusion = c
	if in.CheckName == "" {
		in.CheckName = "warden"
	}
	return nil
}

// InputError is bad input: an input, the event, the configuration, a
// report file. Nothing was reviewed.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErrorf(format string, args ...any) error {
	return &InputError{fmt.Errorf(format, args...)}
}
