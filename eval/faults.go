package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/related"
	"github.com/org/warden/review"
	"github.com/org/warden/scenario"
	"github.com/org/warden/skills"
)

// FaultSchema identifies the JSON form of a FaultResult.
const FaultSchema = "warden.eval.faults/v1"

// Faults is one fault schedule the eval plays while it replays the corpus:
// a scenario file's routes, each with its schedule, and its engine policy.
type Faults struct {
	Name        string
	Description string
	// Start is the schedule's clock when each case's review starts.
	Start time.Duration
	// Schedules are the routes' schedules, in the order of the routes
	// Routes builds; none: no faults, one route answering every call at
	// once (the reference the others' recall is compared with).
	Schedules []scenario.Route
	Policy    execution.Policy
	Routes    RoutesOver
}

// RoutesOver builds a schedule's routes, route i sending through
// transports[i] (its schedule, played in memory) with the real
// OpenAI-compatible client. It is called once per case: every case's
// review starts with fresh routes, breakers and schedules.
type RoutesOver func(transports []http.RoundTripper) ([]execution.Route, error)

// LoadFaults reads the scenario files paths name (a directory: its
// *.toml, in name order) into schedules. parse is
// the configuration's reader (config.ScenarioReader): it gets the file's
// warden.toml part (scenario.File.ConfigTOML) and gives the engine's
// policy and the builder of the routes. An error names the file (and, for
// the configuration, the key).
func LoadFaults(paths []string, parse func(name string, doc []byte) (execution.Policy, func([]http.RoundTripper) ([]execution.Route, error), error)) ([]Faults, error) {
	files, err := scenario.LoadAll(paths)
	if err != nil {
		return nil, err
	}
	out := make([]Faults, 0, len(files))
	for _, sc := range files {
		doc, err := sc.ConfigTOML()
		if err != nil {
			return nil, err
		}
		pol, routes, err := parse(sc.Path, doc)
		if err != nil {
			return nil, sc.ConfigError(err)
		}
		out = append(out, Faults{Name: sc.Name, Description: sc.Description, Start: time.Duration(sc.Start), Schedules: sc.Routes, Policy: pol, Routes: routes})
	}
	return out, nil
}

// FaultOptions are what every schedule's run shares.
type FaultOptions struct {
	Skills []*skills.Skill // reviewed together, as `warden review` runs them
	// Tape is the replayed recording every good answer comes from; Model
	// is the model its answers were recorded for (the recording's keys);
	// "": the model of the baseline's first route.
	Tape      *Tape
	Model     string
	MaxTokens int
	Verify    review.VerifyMode
	Context   *related.Options
	Logger    *slog.Logger
	// Parallel is how many case reviews run at once (each on its own
	// routes and schedules); 0: 64.
	Parallel int
}

// FaultResult is the fault-scored eval: one row per schedule, the first
// with no faults.
type FaultResult struct {
	Header
	Rows []FaultRow `json:"scenarios"`
}

// FaultRow is one schedule over the corpus. Ratios are nil when their
// denominator is zero.
type FaultRow struct {
	Scenario    string `json:"scenario"`
	Description string `json:"description"`
	Cases       int    `json:"cases"` // the cases whose review planned an item
	// Outcomes counts the cases' reviews by outcome; Wrong lists those
	// whose outcome claims what did not happen (complete with an item no
	// route answered, provider-unavailable with one answered).
	Outcomes map[review.Outcome]int `json:"outcomes"`
	Wrong    []WrongOutcome         `json:"wrong_outcomes"`
	// WallMS is the longest case's review, from start to report; BudgetMS
	// the review budget; OverBudget the cases whose review took longer.
	WallMS      int64    `json:"longest_case_ms"`
	TotalWallMS int64    `json:"total_case_ms"`
	BudgetMS    int64    `json:"budget_ms"`
	OverBudget  []string `json:"over_budget"`
	Items       int      `json:"items"`
	Reviewed    int      `json:"reviewed"`
	Misses      int      `json:"replay_misses"`
	// Calls are the requests the routes' endpoints saw (probes included).
	Calls            int      `json:"calls"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	CallsPerItem     *float64 `json:"calls_per_item"`
	CallsPerReviewed *float64 `json:"calls_per_reviewed_item"`
	TokensPerItem    *float64 `json:"tokens_per_reviewed_item"`
	Known            int      `json:"known"`
	Detected         int      `json:"detected"`
	Recall           *float64 `json:"recall"`
	// RecallKept is Recall over the no-fault row's recall: what quality
	// survived the faults (nil when the no-fault recall is none).
	RecallKept *float64 `json:"recall_of_no_faults"`
}

// WrongOutcome is a case whose review's outcome is not true.
type WrongOutcome struct {
	Case    string         `json:"case"`
	Outcome review.Outcome `json:"outcome"`
	Problem string         `json:"problem"`
}

// Failed reports whether the run shows a dishonest outcome or a review
// over its budget: what a CI gate fails on.
func (r *FaultResult) Failed() (wrong, over int) {
	for _, row := range r.Rows {
		wrong += len(row.Wrong)
		over += len(row.OverBudget)
	}
	return wrong, over
}

// Misses are the items, over every row, whose answer the recording does
// not have: the scores are incomplete.
func (r *FaultResult) Misses() (n int) {
	for _, row := range r.Rows {
		n += row.Misses
	}
	return n
}

// Verdict says what a CI gate fails on (a wrong outcome, a review over its
// budget) and, else, what makes the scores incomplete (replay misses), each
// as one line; "" for none.
func (r *FaultResult) Verdict() (failed, incomplete string) {
	if wrong, over := r.Failed(); wrong+over > 0 {
		return fmt.Sprintf("%d wrong outcomes and %d reviews over their budget under the fault schedules", wrong, over), ""
	}
	if n := r.Misses(); n > 0 {
		return "", fmt.Sprintf("%d items not in the recording; the scores are incomplete", n)
	}
	return "", ""
}

// RunFaults replays the corpus once per schedule (baseline first, with no
// faults), every case a review of its own with all the skills on the
// schedule's routes, while each route's endpoint plays its schedule; and
// scores what the plain eval cannot: whether each review's outcome is
// true (checked against what the endpoints really delivered, not against
// what the review reports), how long it took against its budget, calls and
// tokens per item, and how much of the recall without faults survived.
// Time is the engine's clock: real time from the command line, virtual
// time under testing/synctest.
func RunFaults(ctx context.Context, cases []*Case, baseline Faults, schedules []Faults, opts FaultOptions) (*FaultResult, error) {
	if opts.Tape == nil || opts.Tape.mode != ModeReplayed {
		return nil, errors.New("fault schedules play over a replayed recording (--replay DIR)")
	}
	if opts.Model == "" {
		rs, err := baseline.Routes([]http.RoundTripper{scenario.Healthy().Transport()})
		if err != nil || len(rs) == 0 || rs[0].Model == "" {
			return nil, errors.New("--faults replays the answers recorded for warden.toml's first route: add [[routes]]")
		}
		opts.Model = rs[0].Model
	}
	baseline.Name = cmp.Or(baseline.Name, "no faults")
	baseline.Description = cmp.Or(baseline.Description, "the recording as it is, answered at once")
	res := &FaultResult{Header: newHeader(FaultSchema, ModeReplayed, cases)}
	for _, f := range append([]Faults{baseline}, schedules...) {
		row, err := runSchedule(ctx, cases, f, opts)
		if err != nil {
			return nil, err
		}
		if base := res.Rows; len(base) > 0 && base[0].Recall != nil && *base[0].Recall > 0 && row.Recall != nil {
			v := *row.Recall / *base[0].Recall
			row.RecallKept = &v
		}
		res.Rows = append(res.Rows, *row)
	}
	if base := res.Rows[0].Recall; base != nil && *base > 0 {
		one := 1.0
		res.Rows[0].RecallKept = &one
	}
	res.Producers = append(res.Producers, opts.Tape.Producers()...)
	return res, nil
}

// caseRun is one case's review under one schedule.
type caseRun struct {
	rep       *review.Report
	wall      time.Duration
	calls     int
	misses    int
	wrong     string
	planned   bool
	planError error
}

// runSchedule reviews every case under f, Parallel at a time, and adds
// them up in the corpus's order.
func runSchedule(ctx context.Context, cases []*Case, f Faults, opts FaultOptions) (*FaultRow, error) {
	runs := make([]caseRun, len(cases))
	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = 64
	}
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() { // ends when the case's review returns; Wait below
			defer wg.Done()
			defer func() { <-sem }()
			runs[i] = runFaultCase(ctx, c, f, opts)
		}()
	}
	wg.Wait()
	row := &FaultRow{Scenario: f.Name, Description: f.Description, Outcomes: map[review.Outcome]int{}, Wrong: []WrongOutcome{}, OverBudget: []string{},
		BudgetMS: f.Policy.Budget.Milliseconds()}
	s := &Score{}
	for i, r := range runs {
		if r.planError != nil {
			return nil, fmt.Errorf("scenario %s: case %s: %w", f.Name, cases[i].Name, r.planError)
		}
		if !r.planned {
			continue
		}
		c := cases[i]
		row.Cases++
		row.Outcomes[r.rep.Outcome]++
		if r.wrong != "" {
			row.Wrong = append(row.Wrong, WrongOutcome{Case: c.Name, Outcome: r.rep.Outcome, Problem: r.wrong})
		}
		row.WallMS = max(row.WallMS, r.wall.Milliseconds())
		row.TotalWallMS += r.wall.Milliseconds()
		if f.Policy.Budget > 0 && r.wall > f.Policy.Budget {
			row.OverBudget = append(row.OverBudget, c.Name)
		}
		row.Calls += r.calls
		row.Misses += r.misses
		for _, it := range r.rep.Items {
			if it.Status == review.StatusReviewed {
				row.Reviewed++
			}
		}
		s.add(c, r.rep, opts.Verify, 0, r.misses)
	}
	s.ratios()
	row.Items, row.PromptTokens, row.CompletionTokens = s.Items, s.PromptTokens, s.CompletionTokens
	row.Known, row.Detected, row.Recall = s.Known, s.Detected, s.Recall
	row.CallsPerItem, row.CallsPerReviewed = ratio(row.Calls, row.Items), ratio(row.Calls, row.Reviewed)
	row.TokensPerItem = ratio(row.PromptTokens+row.CompletionTokens, row.Reviewed)
	return row, nil
}

// runFaultCase reviews case c on f's routes, each behind a player of its
// schedule, and judges the outcome against what the players delivered.
func runFaultCase(ctx context.Context, c *Case, f Faults, opts FaultOptions) caseRun {
	hp, err := hunks.Prepare(c.Files, hunks.Options{Source: c.Source})
	if err != nil {
		return caseRun{planError: err}
	}
	var players []*scenario.Player
	for _, sc := range f.Schedules {
		players = append(players, sc.Player(f.Start))
	}
	if len(f.Schedules) == 0 {
		players = append(players, scenario.Healthy())
	}
	transports := make([]http.RoundTripper, len(players))
	for i, p := range players {
		transports[i] = p.Transport()
	}
	routes, err := f.Routes(transports)
	if err != nil {
		return caseRun{planError: err}
	}
	fp := &faultProvider{tape: opts.Tape, model: opts.Model, items: map[string]bool{}}
	for i := range routes {
		routes[i].Provider = faultRoute{fp, routes[i].Provider}
		routes[i].ProbeProvider = nil
	}
	eng, err := execution.New(routes, f.Policy, execution.Options{Logger: opts.Logger, Rand: rand.New(rand.NewPCG(1, 2))})
	if err != nil {
		return caseRun{planError: err}
	}
	ro := review.Options{Skills: opts.Skills, MaxTokens: opts.MaxTokens, Verify: opts.Verify}
	if opts.Context != nil {
		cx := *opts.Context
		cx.Source, cx.Repo = c.Source, c.files
		ro.Context = &cx
	}
	plan, err := review.NewPlan(hp, eng, ro)
	if err != nil {
		return caseRun{planError: err}
	}
	if len(plan.Items) == 0 {
		return caseRun{}
	}
	keys := make([]string, len(plan.Items))
	for i, wi := range plan.Items {
		keys[i] = keyFor(opts.Model, wi.Request)
		fp.items[keys[i]] = true
	}
	start := time.Now()
	rep := review.Run(ctx, plan, eng, ro)
	r := caseRun{rep: rep, wall: time.Since(start), planned: true, misses: fp.missed()}
	for _, p := range players {
		p.Settle(time.Second) // what each delivered is sure only once its handlers have ended
		r.calls += p.Calls()
	}
	r.wrong = judgeOutcome(rep, func(i int) bool {
		return slices.ContainsFunc(players, func(p *scenario.Player) bool { return p.Delivered(keys[i]) })
	})
	return r
}

// judgeOutcome says what is untrue in the review's outcome, given which
// items a route really answered: "" when nothing is. It does not decide
// the outcome (review.Decide does); it checks the claim against the
// endpoints' side of the story.
func judgeOutcome(rep *review.Report, answered func(i int) bool) string {
	unanswered, truly := 0, 0
	for i, it := range rep.Items {
		if it.Status == review.StatusReviewed && answered(i) {
			truly++
		} else {
			unanswered++
		}
	}
	switch {
	case rep.Outcome == review.OutcomeComplete && unanswered > 0:
		return fmt.Sprintf("complete, but %d of %d items got no answer from any route", unanswered, len(rep.Items))
	case rep.Outcome == review.OutcomeProviderUnavailable && truly > 0:
		return fmt.Sprintf("provider-unavailable, but %d of %d items were answered and reviewed", truly, len(rep.Items))
	}
	return ""
}

// faultProvider gives each route's requests their recorded answers: a
// review item's request carries its answer to the route's endpoint, which
// delivers it or plays a fault instead; an item the recording lacks fails
// as a replay miss without a call. Other requests (the engine's health
// probes) reach the endpoint with no answer.
type faultProvider struct {
	tape  *Tape
	model string
	items map[string]bool // the keys of the case's items; read-only once the review runs

	mu     sync.Mutex
	misses int
}

func (fp *faultProvider) missed() int {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	return fp.misses
}

// faultRoute is one route's provider under the fault provider.
type faultRoute struct {
	fp   *faultProvider
	next execution.Provider
}

func (fr faultRoute) Complete(ctx context.Context, req *execution.Request) (*execution.Response, error) {
	fp := fr.fp
	key := keyFor(fp.model, req)
	if !fp.items[key] {
		return fr.next.Complete(ctx, req)
	}
	e, err := fp.tape.read(key)
	if err != nil {
		fp.mu.Lock()
		fp.misses++
		fp.mu.Unlock()
		return nil, err
	}
	fp.tape.add(0, e.Producer)
	ctx = scenario.WithAnswer(ctx, scenario.Answer{Key: key, Content: e.Content, Model: e.AnswerModel,
		PromptTokens: e.Usage.PromptTokens, CompletionTokens: e.Usage.CompletionTokens})
	return fr.next.Complete(ctx, req)
}
