package action

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/org/warden/bot"
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
	// ResultsCacheDir holds the results cache (WARDEN_RESULTS_CACHE_DIR,
	// a directory of the runner's that action.yml names when input
	// results-cache is true; warden fills it from earlier runs' workflow
	// artifacts and action.yml uploads it as this run's); "" means none.
	// Each trust domain has its own subdirectory.
	ResultsCacheDir string
	// ResultsCacheSecret signs the trusted domain's entries (input
	// results-cache-secret); empty: a hash of the trusted configuration's
	// model keys (derivedCacheSecret), unsigned without one.
	ResultsCacheSecret []byte
	// StateSecret seals warden's hidden records on GitHub (input
	// state-secret): the findings comment's state, dismissals, acceptances
	// and the review state (ghreport.Client.SetStateKey). Empty: the
	// results cache's secret, else a hash of the trusted configuration's
	// model keys; with none of them nothing is sealed and no record can
	// change the gate.
	StateSecret []byte
	// CommandTrust are the author associations whose /warden commands run
	// (input command-associations); nil means bot.DefaultTrusted.
	CommandTrust []string
	// AllowSelfAccept lets a pull request's author `/warden accept` its
	// incomplete review (input allow-self-accept), for a repository with
	// one maintainer; by default someone else accepts it.
	AllowSelfAccept bool
	// CommandWorkflow and CommandWorkflowName are the commands workflow's
	// file and name (inputs command-workflow, command-workflow-name): the
	// workflow_run follow-up acts only on a run of that workflow.
	CommandWorkflow, CommandWorkflowName string
	// TokenLogin is the login the token posts as (input
	// github-token-login); "" means ask GitHub (ghreport.Client.Identity).
	TokenLogin string
}

// DefaultInputs are the inputs' defaults, as action.yml states them.
func DefaultInputs() Inputs {
	return Inputs{CheckName: "warden", IncompleteConclusion: ghreport.DefaultIncompleteConclusion, SkipDrafts: true, SkipBots: true, Mode: ModeFull,
		CommandWorkflow: DefaultCommandWorkflow, CommandWorkflowName: DefaultCommandWorkflowName}
}

// The commands workflow of the README (`.github/workflows/warden-commands.yml`,
// `name: warden commands`), which its follow-up workflow follows.
const (
	DefaultCommandWorkflow     = ".github/workflows/warden-commands.yml"
	DefaultCommandWorkflowName = "warden commands"
)

// workflowFile is a workflow's path as GitHub gives it in a run
// (workflow_run.path): a file directly under .github/workflows.
var workflowFile = regexp.MustCompile(`^\.github/workflows/[^/]+\.ya?ml$`)

// ParseInputs reads the Action's inputs by their kebab-case names (get
// returns "" for an input not set); they map 1:1 to flags and config keys.
// Every bad input is named in the error.
func ParseInputs(get func(name string) string) (Inputs, error) {
	in, r := DefaultInputs(), &inputReader{get0: get}
	in.ConfigPath = r.get("config-path")
	in.Thresholds = review.ThresholdSettings{FailOn: r.severity("fail-on"), ReportOn: r.severity("report-on"),
		MaxFindings: r.number("max-findings", 0, "a non-negative integer")}
	in.IncompleteConclusion = cmp.Or(r.get("incomplete-conclusion"), in.IncompleteConclusion)
	r.boolean("fail-on-incomplete", &in.FailOnIncomplete)
	r.boolean("request-changes", &in.RequestChanges)
	in.CheckName = cmp.Or(r.get("check-name"), in.CheckName)
	for _, s := range strings.Split(r.get("skills"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			in.Skills = append(in.Skills, s)
		}
	}
	r.boolean("skip-drafts", &in.SkipDrafts)
	r.boolean("skip-bots", &in.SkipBots)
	if n := r.number("pr-number", 1, "a pull request number"); n != nil {
		in.PRNumber = *n
	}
	if v := r.get("budget"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			r.bad("input budget: %q is not a positive Go duration such as \"15m\"", v)
		}
		in.Budget = d
	}
	r.boolean("trusted-authors-only", &in.TrustedAuthorsOnly)
	if v := r.get("mode"); v != "" {
		if err := in.Mode.Set(v); err != nil {
			r.bad("input mode: %w", err)
		}
	}
	in.ReportPath = r.get("report-path")
	in.TokenLogin = r.get("github-token-login")
	if strings.ContainsAny(in.TokenLogin, " /\t\n<>") {
		r.bad("input github-token-login: %q is not a GitHub login", in.TokenLogin)
	}
	if v := r.get("results-cache-secret"); v != "" {
		in.ResultsCacheSecret = []byte(v)
	}
	if v := r.get("state-secret"); v != "" {
		if len(v) < 16 {
			r.bad("input state-secret: %d characters is too short to seal anything (want at least 16; use a random repository secret)", len(v))
		}
		in.StateSecret = []byte(v)
	}
	if v := r.get("command-associations"); v != "" {
		trust, err := bot.ParseTrusted(v)
		if err != nil {
			r.bad("input command-associations: %w", err)
		}
		in.CommandTrust = trust
	}
	r.boolean("allow-self-accept", &in.AllowSelfAccept)
	if v := r.get("command-workflow"); v != "" {
		if !workflowFile.MatchString(v) {
			r.bad("input command-workflow: %q is not a workflow file's path (want .github/workflows/NAME.yml, the commands workflow's file)", v)
		}
		in.CommandWorkflow = v
	}
	in.CommandWorkflowName = cmp.Or(r.get("command-workflow-name"), in.CommandWorkflowName)
	return in, errors.Join(r.errs...)
}

// inputReader reads inputs and collects what is wrong with them.
type inputReader struct {
	get0 func(string) string
	errs []error
}

func (r *inputReader) get(name string) string { return strings.TrimSpace(r.get0(name)) }

func (r *inputReader) bad(format string, args ...any) {
	r.errs = append(r.errs, fmt.Errorf(format, args...))
}

func (r *inputReader) boolean(name string, dst *bool) {
	switch v := strings.ToLower(r.get(name)); v {
	case "":
	case "true", "false":
		*dst = v == "true"
	default:
		r.bad("input %s: %q is not true or false", name, r.get(name))
	}
}

// number is the input as an integer of at least min; nil when unset.
func (r *inputReader) number(name string, min int, want string) *int {
	v := r.get(name)
	if v == "" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min {
		r.bad("input %s: %q is not %s", name, v, want)
	}
	return &n
}

// severity is the input as a severity; nil when unset.
func (r *inputReader) severity(name string) *review.Severity {
	v := r.get(name)
	if v == "" {
		return nil
	}
	s, err := review.ParseSeverity(v)
	if err != nil {
		r.bad("input %s: %w", name, err)
	}
	return &s
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
