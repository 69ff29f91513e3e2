package eval

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/related"
	"github.com/org/warden/review"
	"github.com/org/warden/skills"
)

// Schema identifies the JSON form of a Result.
const Schema = "warden.eval/v1"

// Slack is how many lines a reported finding may lie outside a known
// finding's range and still count as finding it (detected); inside the
// range itself it is also localised. Models often point at the line before
// or after the faulty one, and a reviewer reading the comment still finds
// the bug; further than this and the comment is about something else.
const Slack = 3

// Options configure an eval run.
type Options struct {
	Skills    []*skills.Skill   // each is scored on its own
	Routes    []execution.Route // each is scored on its own, with no failover
	Policy    execution.Policy
	MaxTokens int   // per answer; 0: review's default
	Tape      *Tape // where answers come from and go; nil: live, not recorded
	Logger    *slog.Logger
	// Verify runs review's verification pass on each case (its answers are
	// recorded and replayed like the primary ones); rejected findings are
	// not scored, and counted in Score.Rejected.
	Verify review.VerifyMode
	// Context, when set, gives each request context beyond the hunk, found
	// in the case's own files (its Source and Repo are the case's).
	Context *related.Options
}

// Header is what every eval run's result says of itself: its schema,
// where its answers came from and what its corpus is.
type Header struct {
	Schema string `json:"schema"`
	// Mode says where the answers came from: live from the model, recorded
	// (live, and saved), or replayed from a recording with no model.
	Mode Mode `json:"mode"`
	// Producers are who produced the answers (route and model, or a test's
	// scripted model named as such); for a replay, those of the recording.
	Producers []string `json:"producers"`
	// Synthetic is set when every case is synthetic: the run checks the
	// mechanics and says nothing of a model's or skill's quality.
	Synthetic bool       `json:"synthetic"`
	Cases     []CaseInfo `json:"cases"`
}

// newHeader is the header of a run over cases in mode, its producers not
// known yet.
func newHeader(schema string, mode Mode, cases []*Case) Header {
	h := Header{Schema: schema, Mode: mode, Synthetic: true, Producers: []string{}, Cases: []CaseInfo{}}
	for _, c := range cases {
		h.Synthetic = h.Synthetic && c.Meta.Synthetic
		h.Cases = append(h.Cases, caseInfo(c))
	}
	return h
}

// Result is the outcome of an eval run: a score per skill and route.
type Result struct {
	Header
	Scores []Score `json:"scores"`
}

// CaseInfo is a case as the result lists it.
type CaseInfo struct {
	Name      string `json:"name"`
	Clean     bool   `json:"clean"`
	Synthetic bool   `json:"synthetic"`
	Changed   int    `json:"changed_lines"`
	Known     int    `json:"known_findings"`
	// A pointer case's repository and reviewed commit.
	Repository string `json:"repository,omitempty"`
	Commit     string `json:"commit,omitempty"`
}

// Score is one skill on one route over the corpus. The counts are the
// data; the ratios are nil when their denominator is zero (no known
// finding, no finding, no clean case), never a made-up 0 or 1.
type Score struct {
	Skill string `json:"skill"`
	Route string `json:"route"`
	Model string `json:"model"`
	Cases int    `json:"cases"` // the cases the skill's paths select
	// Items are the review's work items; Failed those that got no usable
	// answer (Misses of them: not in the recording). A score with failed
	// items is incomplete.
	Items  int `json:"items"`
	Failed int `json:"failed"`
	Misses int `json:"replay_misses,omitempty"`

	Known     int `json:"known"`     // known findings
	Detected  int `json:"detected"`  // known findings some finding is within Slack lines of
	Localised int `json:"localised"` // known findings some finding overlaps
	Findings  int `json:"findings"`  // findings reported (after verification, when on)
	Rejected  int `json:"rejected_by_verifier,omitempty"`
	Matched   int `json:"matched"` // findings within Slack lines of a known finding
	// CleanFindings are the findings on clean cases, CleanChanged those
	// cases' added lines; CleanRegionHits the findings that overlap a
	// region where nothing should be found, on any case.
	CleanFindings   int `json:"clean_findings"`
	CleanChanged    int `json:"clean_changed_lines"`
	CleanRegionHits int `json:"clean_region_hits"`

	Recall       *float64 `json:"recall"`       // Detected / Known
	Precision    *float64 `json:"precision"`    // Matched / Findings
	Localisation *float64 `json:"localisation"` // Localised / Detected
	NoisePer100  *float64 `json:"noise_per_100_lines"`

	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	// ModelTimeMS is the sum of the answers' wall times, as measured when
	// they were given (a replay reports the recording's): the model's
	// time, not the eval's.
	ModelTimeMS int64 `json:"model_time_ms"`

	PerCase []CaseScore `json:"per_case"`
}

// CaseScore is one skill on one route on one case.
type CaseScore struct {
	Case     string  `json:"case"`
	Findings int     `json:"findings"`
	Matched  int     `json:"matched"`
	Missed   []Known `json:"missed,omitempty"` // known findings nothing detected
	Failed   int     `json:"failed,omitempty"`
}

// Complete reports whether every item of the score got an answer.
func (s *Score) Complete() bool { return s.Failed == 0 }

// Run reviews every case with every skill on every route, one skill and
// one route at a time, and scores the findings against the cases' known
// findings. Cases run one after another; the items of one case run as
// review.Run runs them.
func Run(ctx context.Context, cases []*Case, opts Options) (*Result, error) {
	tape := opts.Tape
	if tape == nil {
		tape = NewTape(ModeLive, "", "")
	}
	res := &Result{Header: newHeader(Schema, tape.mode, cases), Scores: []Score{}}
	for _, rt := range opts.Routes {
		rt.Provider = tape.Wrap(rt)
		for _, sk := range opts.Skills {
			s := Score{Skill: sk.Name, Route: rt.Name, Model: rt.Model, PerCase: []CaseScore{}}
			for _, c := range cases {
				if err := runCase(ctx, c, sk, rt, opts, tape, &s); err != nil {
					return nil, err
				}
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
			}
			s.ratios()
			res.Scores = append(res.Scores, s)
		}
	}
	if err := tape.Err(); err != nil {
		return nil, err
	}
	res.Producers = append(res.Producers, tape.Producers()...)
	return res, nil
}

func caseInfo(c *Case) CaseInfo {
	ci := CaseInfo{Name: c.Name, Clean: c.Clean(), Synthetic: c.Meta.Synthetic, Changed: c.Changed, Known: len(c.Meta.Findings)}
	if c.Pointer != nil {
		ci.Repository, ci.Commit = c.Pointer.Repository, c.Pointer.Commit
	}
	return ci
}

// runCase reviews case c with skill sk on route rt and adds it to s.
func runCase(ctx context.Context, c *Case, sk *skills.Skill, rt execution.Route, opts Options, tape *Tape, s *Score) error {
	hp, err := hunks.Prepare(c.Files, hunks.Options{Source: c.Source})
	if err != nil {
		return fmt.Errorf("case %s: %w", c.Name, err)
	}
	eng, err := execution.New([]execution.Route{rt}, opts.Policy, execution.Options{Logger: opts.Logger})
	if err != nil {
		return err
	}
	// No report_on and no max_findings: every finding the model reported
	// is scored.
	ro := review.Options{Skills: []*skills.Skill{sk}, MaxTokens: opts.MaxTokens, Verify: opts.Verify}
	if opts.Context != nil {
		cx := *opts.Context
		cx.Source, cx.Repo = c.Source, c.files
		ro.Context = &cx
	}
	plan, err := review.NewPlan(hp, eng, ro)
	if err != nil {
		return fmt.Errorf("case %s: %w", c.Name, err)
	}
	if len(plan.Items) == 0 {
		return nil // the skill's paths select nothing of this case
	}
	rep := review.Run(ctx, plan, eng, ro)
	modelMS, misses := tape.take()
	s.add(c, rep, opts.Verify, modelMS, misses)
	return nil
}

// add scores one case's report into s.
func (s *Score) add(c *Case, rep *review.Report, verify review.VerifyMode, modelMS int64, misses int) {
	cs := CaseScore{Case: c.Name}
	s.Cases++
	s.Items += len(rep.Items)
	for _, it := range rep.Items {
		if it.Status != review.StatusReviewed {
			cs.Failed++
		}
	}
	s.Failed += cs.Failed
	s.Misses += misses
	s.PromptTokens += rep.Usage.PromptTokens
	s.CompletionTokens += rep.Usage.CompletionTokens
	s.CostUSD += rep.Usage.CostUSD
	s.ModelTimeMS += modelMS
	if v := rep.Verification; v != nil {
		s.Rejected += v.Rejected
		if verify == review.VerifyRequired {
			for _, it := range rep.Items {
				if it.Status == review.StatusReviewed && it.Unverified > 0 {
					cs.Failed++ // required verification missing: not a complete score
					s.Failed++
				}
			}
		}
	}

	cs.Findings = len(rep.Findings)
	for _, f := range rep.Findings {
		if slices.ContainsFunc(c.Meta.Findings, func(k Known) bool { return near(f, k.Path, k.StartLine, k.EndLine, Slack) }) {
			cs.Matched++
		}
		if slices.ContainsFunc(c.Meta.Clean, func(r Region) bool { return near(f, r.Path, r.StartLine, r.EndLine, 0) }) {
			s.CleanRegionHits++
		}
	}
	for _, k := range c.Meta.Findings {
		s.Known++
		switch {
		case slices.ContainsFunc(rep.Findings, func(f review.Finding) bool { return near(f, k.Path, k.StartLine, k.EndLine, 0) }):
			s.Detected++
			s.Localised++
		case slices.ContainsFunc(rep.Findings, func(f review.Finding) bool { return near(f, k.Path, k.StartLine, k.EndLine, Slack) }):
			s.Detected++
		default:
			cs.Missed = append(cs.Missed, k)
		}
	}
	s.Findings += cs.Findings
	s.Matched += cs.Matched
	if c.Clean() {
		s.CleanFindings += cs.Findings
		s.CleanChanged += c.Changed
	}
	s.PerCase = append(s.PerCase, cs)
}

// near reports whether f's lines come within slack lines of start..end of
// path.
func near(f review.Finding, path string, start, end, slack int) bool {
	return f.Path == path && f.StartLine <= end+slack && f.EndLine >= start-slack
}

func (s *Score) ratios() {
	s.Recall = ratio(s.Detected, s.Known)
	s.Precision = ratio(s.Matched, s.Findings)
	s.Localisation = ratio(s.Localised, s.Detected)
	if s.CleanChanged > 0 {
		v := 100 * float64(s.CleanFindings) / float64(s.CleanChanged)
		s.NoisePer100 = &v
	}
	slices.SortFunc(s.PerCase, func(a, b CaseScore) int { return cmp.Compare(a.Case, b.Case) })
}

func ratio(n, d int) *float64 {
	if d == 0 {
		return nil
	}
	v := float64(n) / float64(d)
	return &v
}
