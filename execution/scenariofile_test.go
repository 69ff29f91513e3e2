package execution_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/org/warden/config"
	"github.com/org/warden/execution"
	"github.com/org/warden/review"
)

// This file runs the scenario suite: one TOML file per scenario in
// testdata/scenarios and in every directory of WARDEN_SCENARIOS
// (colon-separated), each run in virtual time through the real engine and
// the real go-openai adapter. The format is documented in the README
// ("Scenario files") and in the types below; [review], [retry] and
// [[routes]] take warden.toml's keys, so a user can paste their own.

// scenarioDirs is where the scenario files are: the repository's own, then
// every directory of the documented user hook WARDEN_SCENARIOS (read
// through getenv; the tests pass os.Getenv).
func scenarioDirs(getenv func(string) string) []string {
	dirs := []string{filepath.Join("testdata", "scenarios")}
	for _, d := range strings.Split(getenv("WARDEN_SCENARIOS"), ":") {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// span is a TOML duration: a Go duration string such as "90s" or "2h30m".
type span time.Duration

func (d *span) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil || v < 0 {
		return fmt.Errorf("invalid duration %q (want a non-negative Go duration such as \"90s\")", b)
	}
	*d = span(v)
	return nil
}

// scenarioFile is one scenario.
type scenarioFile struct {
	Description string `toml:"description"`
	// Start is the fault schedule's clock when the review starts: windows
	// are times since the incident began, and the review may start late
	// in it (sept6-recovering starts 2h28m into the outage).
	Start  span        `toml:"start"`
	Items  []itemGroup `toml:"items"`
	Review scReview    `toml:"review"`
	Retry  scRetry     `toml:"retry"`
	Routes []scRoute   `toml:"routes"`
	Expect scBounds    `toml:"expect"`
	Naive  *scBounds   `toml:"naive"` // the naive policy's figures, asserted by TestCompareNaive

	// The rest of warden.toml, accepted so that a configuration pastes
	// as it is, and not used.
	Filters map[string]any `toml:"filters"`
	Skills  []any          `toml:"skills"`
	Version int            `toml:"version"`

	name   string
	path   string
	cfg    *config.File // the warden.toml part, as config reads it
	cfgErr error        // why config refused it, when [expect] config_error asks for a refusal
}

// itemGroup is count items whose user message has chars characters.
type itemGroup struct {
	Count int `toml:"count"`
	Chars int `toml:"chars"`
}

// scReview, scRetry and scRoute spell warden.toml's [review], [retry] and
// [[routes]] keys, so that the file decodes strictly with each unknown key's
// line; what the keys mean is config's (configOf), and
// TestScenarioKeysAreWardenTOMLs keeps the spelling equal to config's.
type scReview struct {
	Budget         span    `toml:"budget"`
	HunkBudget     span    `toml:"hunk_budget"`
	RequestTimeout span    `toml:"request_timeout"`
	MinAttempt     span    `toml:"min_attempt"`
	Reserve        span    `toml:"reserve"`
	MaxConcurrency int     `toml:"max_concurrency"`
	MaxQueueWait   span    `toml:"max_queue_wait"`
	MaxTokens      int     `toml:"max_tokens"`
	FailOn         string  `toml:"fail_on"`
	ReportOn       string  `toml:"report_on"`
	MaxFindings    int     `toml:"max_findings"`
	BatchSkills    bool    `toml:"batch_skills"`
	MaxCostUSD     float64 `toml:"max_cost_usd"`
	MaxTotalTokens int     `toml:"max_total_tokens"`
	Verify         string  `toml:"verify"`
	VerifyRoute    string  `toml:"verify_route"`
	Context        string  `toml:"context"`
	ContextChars   int     `toml:"context_chars"`
}

type scRetry struct {
	MaxPerRoute      *int     `toml:"max_per_route"`
	Backoff          span     `toml:"backoff"`
	BackoffSchedule  []span   `toml:"backoff_schedule"`
	RateLimitBackoff span     `toml:"rate_limit_backoff"`
	MaxRetryAfter    span     `toml:"max_retry_after"`
	BudgetRatio      *float64 `toml:"budget_ratio"`
	MaxPerItem       *int     `toml:"max_per_item"`
}

// scRoute is warden.toml's [[routes]] plus the route's fault schedule.
type scRoute struct {
	Name                    string  `toml:"name"`
	BaseURL                 string  `toml:"base_url"`
	Model                   string  `toml:"model"`
	APIKeyEnv               string  `toml:"api_key_env"`
	ProbeAPIKeyEnv          string  `toml:"probe_api_key_env"`
	ProbeModel              string  `toml:"probe_model"`
	BreakerWindow           span    `toml:"breaker_window"`
	Profile                 string  `toml:"profile"`
	MaxConcurrency          int     `toml:"max_concurrency"`
	RequestTimeout          span    `toml:"request_timeout"`
	ResponseHealing         bool    `toml:"response_healing"`
	JSONSchema              *bool   `toml:"json_schema"`
	Stream                  bool    `toml:"stream"`
	FailoverOnAuth          bool    `toml:"failover_on_auth"`
	MinInterval             span    `toml:"min_interval"`
	FirstTokenTimeout       span    `toml:"first_token_timeout"`
	IdleTimeout             span    `toml:"idle_timeout"`
	PriceInputPerMTok       float64 `toml:"price_input_per_mtok"`
	PriceOutputPerMTok      float64 `toml:"price_output_per_mtok"`
	PriceCachedInputPerMTok float64 `toml:"price_cached_input_per_mtok"`
	ContextWindow           int     `toml:"context_window"`

	// Faults is the route's schedule: for each call, the entries whose
	// window holds the call are weighed, and one is drawn (seeded by the
	// route's name and the call's number). A call no entry holds is a
	// healthy answer after 1s.
	Faults []scFault `toml:"faults"`
}

// scFault is one entry of a route's fault schedule.
type scFault struct {
	From      span `toml:"from"`       // the window, on the schedule's clock: from ≤ t < until
	Until     span `toml:"until"`      // 0: for ever
	FirstCall int  `toml:"first_call"` // and by the call's number on the route (0-based): first_call ≤ n < last_call
	LastCall  int  `toml:"last_call"`  // 0: no limit
	// InFlightOver holds the call only while more than this many calls
	// (the call included) are in flight on the route: a provider's
	// per-key concurrency limit. 0: any.
	InFlightOver int               `toml:"in_flight_over"`
	Weight       float64           `toml:"weight"`    // the entry's share among those that hold the call; 0: 1
	Delay        span              `toml:"delay"`     // fixed latency before the answer (or the error)
	Latency      *scLatency        `toml:"latency"`   // or a latency distribution
	Status       int               `toml:"status"`    // an error status; 0: a good answer
	Code         string            `toml:"code"`      // the error body's code
	Headers      map[string]string `toml:"headers"`   // e.g. Retry-After
	Hang         bool              `toml:"hang"`      // never answer (no headers)
	Keepalive    span              `toml:"keepalive"` // streaming hang: a keep-alive comment every keepalive
	Mode         string            `toml:"mode"`      // "stall", "trickle", "empty", "tokens", "stream_error"
	Every        span              `toml:"every"`     // the mode's interval
	Count        int               `toml:"count"`     // "tokens": how many
}

// scLatency is a latency distribution: the inverse of a piecewise-linear
// CDF through the points (p[i], values[i]), p from 0 to 1, sampled with a
// seed.
type scLatency struct {
	P      []float64 `toml:"p"`
	Values []span    `toml:"values"`
	Seed   uint64    `toml:"seed"`
}

func (l *scLatency) sample(u float64) time.Duration {
	for i := 1; i < len(l.P); i++ {
		if u <= l.P[i] || i == len(l.P)-1 {
			lo, hi := float64(l.Values[i-1]), float64(l.Values[i])
			f := 0.0
			if l.P[i] > l.P[i-1] {
				f = min(1, max(0, (u-l.P[i-1])/(l.P[i]-l.P[i-1])))
			}
			return time.Duration(lo + f*(hi-lo))
		}
	}
	return time.Duration(l.Values[0])
}

// scBounds are a scenario's expected figures. Zero values are not checked
// (use the pointer fields to ask for a zero).
type scBounds struct {
	ConfigError     string                   `toml:"config_error"`       // the configuration is refused at load time with this in its message (config.Parse, Policy.Validate); nothing runs
	Outcome         string                   `toml:"outcome"`            // complete, partial or provider-unavailable (review.Decide)
	MaxWall         span                     `toml:"max_wall"`           // from the review's start to Run's return
	MinWall         span                     `toml:"min_wall"`           // (for the naive side: at least this long)
	MinReviewed     float64                  `toml:"min_reviewed"`       // share of items with an accepted answer, 0 to 1
	MaxReviewed     *float64                 `toml:"max_reviewed"`       //
	MaxCallsPerItem float64                  `toml:"max_calls_per_item"` // requests the servers saw ÷ items
	MaxItemWall     span                     `toml:"max_item_wall"`      // the longest item
	MaxAbandoned    *int                     `toml:"max_abandoned"`      // calls cut by the client that would have completed within abandoned_within
	AbandonedWithin span                     `toml:"abandoned_within"`   // 0: whenever
	Routes          map[string]scRouteBounds `toml:"route"`
}

// scRouteBounds are one route's expected figures.
type scRouteBounds struct {
	MaxCalls           *int `toml:"max_calls"`
	MinCalls           int  `toml:"min_calls"`
	MinBreakerOpens    int  `toml:"min_breaker_opens"`
	MaxBreakerOpens    *int `toml:"max_breaker_opens"`
	MaxCallsBeforeOpen int  `toml:"max_calls_before_open"` // requests sent before the breaker first opened
}

// loadScenario reads and checks one scenario file.
func loadScenario(path string) (*scenarioFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var sc scenarioFile
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) && len(strict.Errors) > 0 {
			e := strict.Errors[0]
			row, _ := e.Position()
			return nil, fmt.Errorf("%s:%d: %s: unknown key", path, row, strings.Join(e.Key(), "."))
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return nil, fmt.Errorf("%s:%d: %s", path, row, de.Error())
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sc.name, sc.path = strings.TrimSuffix(filepath.Base(path), ".toml"), path
	if sc.cfg, err = configOf(path, data); err != nil {
		if sc.Expect.ConfigError == "" {
			return nil, err
		}
		sc.cfgErr = err // refused at load time, as the file expects: runScenario checks the message
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
	}
	if len(sc.Routes) == 0 {
		return nil, bad("no [[routes]]")
	}
	n := 0
	for _, g := range sc.Items {
		if g.Count <= 0 || g.Chars < 0 {
			return nil, bad("[[items]] needs count > 0 and chars ≥ 0")
		}
		n += g.Count
	}
	if n == 0 {
		return nil, bad("no [[items]]")
	}
	for _, r := range sc.Routes {
		if r.Name == "" {
			return nil, bad("a route has no name")
		}
		if _, err := execution.ParseProfile(r.Profile); err != nil {
			return nil, bad("route %q: %v", r.Name, err)
		}
		for i, f := range r.Faults {
			if l := f.Latency; l != nil && (len(l.P) < 2 || len(l.P) != len(l.Values) || l.P[0] != 0 || l.P[len(l.P)-1] != 1 || !slices.IsSorted(l.P)) {
				return nil, bad("route %q fault %d: latency needs p and values of the same length ≥ 2, p rising from 0 to 1", r.Name, i+1)
			}
			switch f.Mode {
			case "", "stall", "trickle", "empty", "tokens", "stream_error":
			default:
				return nil, bad("route %q fault %d: unknown mode %q", r.Name, i+1, f.Mode)
			}
		}
	}
	switch sc.Expect.Outcome {
	case "", string(review.OutcomeComplete), string(review.OutcomePartial), string(review.OutcomeProviderUnavailable):
	default:
		return nil, bad("expect.outcome %q: want complete, partial or provider-unavailable", sc.Expect.Outcome)
	}
	return &sc, nil
}

// loadScenarios reads every scenario of every directory; a directory of
// WARDEN_SCENARIOS that does not exist or holds no scenario is an error,
// not an empty suite.
func loadScenarios(t *testing.T) []*scenarioFile {
	t.Helper()
	out, err := readScenarios(scenarioDirs(os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readScenarios(dirs []string) ([]*scenarioFile, error) {
	var out []*scenarioFile
	for _, dir := range dirs {
		paths, err := filepath.Glob(filepath.Join(dir, "*.toml"))
		if err == nil && len(paths) == 0 {
			if _, err = os.Stat(dir); err == nil {
				err = errors.New("no *.toml scenario in it")
			}
		}
		if err != nil {
			return nil, fmt.Errorf("scenario directory %s: %w", dir, err)
		}
		for _, p := range paths {
			sc, err := loadScenario(p)
			if err != nil {
				return nil, err
			}
			out = append(out, sc)
		}
	}
	return out, nil
}

// WARDEN_SCENARIOS adds directories after the repository's, in order; an
// empty entry is skipped; a missing or empty directory is an error.
func TestScenarioDirs(t *testing.T) {
	t.Parallel()
	user := t.TempDir()
	body := "[[items]]\ncount = 1\n[[routes]]\nname = \"a\"\n"
	if err := os.WriteFile(filepath.Join(user, "mine.toml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "WARDEN_SCENARIOS" {
				return v
			}
			return ""
		}
	}
	dirs := scenarioDirs(env(user + "::" + empty))
	if want := []string{filepath.Join("testdata", "scenarios"), user, empty}; !slices.Equal(dirs, want) {
		t.Errorf("scenarioDirs = %q, want %q", dirs, want)
	}
	got, err := readScenarios(dirs[:2])
	if err != nil || got[len(got)-1].name != "mine" || got[len(got)-1].path != filepath.Join(user, "mine.toml") {
		t.Errorf("readScenarios(repository, user) = %d files, %v; want the user's last", len(got), err)
	}
	for _, bad := range []string{empty, filepath.Join(user, "missing")} {
		if _, err := readScenarios([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("readScenarios(%s) = %v, want an error naming it", bad, err)
		}
	}
}

// policy is the engine policy of the file's [review] and [retry], read by
// warden's own configuration loader (config.Parse) so that a scenario
// gets exactly what the same keys give in warden.toml.
func (sc *scenarioFile) policy() execution.Policy { return sc.cfg.Policy() }

// configOf reads a scenario file's warden.toml part, [review], [retry] and
// [[routes]] without their faults, through config.Parse, with its checks
// and defaults; a route without base_url or model gets the harness's. Its
// errors name the key (the line is the file's own decoder's business).
func configOf(path string, data []byte) (*config.File, error) {
	var all map[string]any
	if err := toml.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	part := map[string]any{}
	for _, k := range []string{"review", "retry"} {
		if v, ok := all[k]; ok {
			part[k] = v
		}
	}
	if routes, ok := all["routes"].([]any); ok {
		var rs []any
		for _, r := range routes {
			m, _ := r.(map[string]any)
			rc := map[string]any{}
			for k, v := range m {
				if k != "faults" {
					rc[k] = v
				}
			}
			name, _ := rc["name"].(string)
			if _, ok := rc["base_url"]; !ok {
				rc["base_url"] = "https://" + name + ".example.com/v1"
			}
			if _, ok := rc["model"]; !ok {
				rc["model"] = "model-" + name
			}
			rs = append(rs, rc)
		}
		part["routes"] = rs
	}
	doc, err := toml.Marshal(part)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg, err := config.Parse(path, doc)
	if err != nil {
		return nil, errors.New(regexp.MustCompile(`^`+regexp.QuoteMeta(path)+`:\d+: `).ReplaceAllString(err.Error(), path+": "))
	}
	return cfg, nil
}

// items builds the file's items: a system message and a user message of
// the group's size.
func (sc *scenarioFile) items() []execution.Item {
	var out []execution.Item
	maxTokens := sc.cfg.Setup().MaxTokens
	if maxTokens == 0 {
		maxTokens = 2000
	}
	for _, g := range sc.Items {
		for range g.Count {
			head := fmt.Sprintf("Review hunk %d:\n", len(out))
			body := strings.Repeat("+ line\n", max(g.Chars-len(head), 0)/7+1)[:max(g.Chars-len(head), 0)]
			out = append(out, execution.Item{Request: &execution.Request{
				Messages: []execution.Message{
					{Role: "system", Content: "You are a code reviewer."},
					{Role: "user", Content: head + body},
				},
				MaxTokens: maxTokens,
			}})
		}
	}
	return out
}

// script is a route's fault schedule as the harness's server runs it.
func (r scRoute) script(start time.Duration, inFlight func() int) func(n int, at time.Duration) reply {
	seed := uint64(0)
	for _, c := range r.Name {
		seed = seed*31 + uint64(c)
	}
	return func(n int, at time.Duration) reply {
		at += start
		var held []scFault
		total := 0.0
		for _, f := range r.Faults {
			if at < time.Duration(f.From) || (f.Until > 0 && at >= time.Duration(f.Until)) ||
				n < f.FirstCall || (f.LastCall > 0 && n >= f.LastCall) || (f.InFlightOver > 0 && inFlight() <= f.InFlightOver) {
				continue
			}
			held = append(held, f)
			total += cmp.Or(f.Weight, 1)
		}
		if len(held) == 0 {
			return reply{Delay: time.Second}
		}
		pick := unit(seed, n) * total
		f := held[len(held)-1]
		for _, h := range held {
			if pick < cmp.Or(h.Weight, 1) {
				f = h
				break
			}
			pick -= cmp.Or(h.Weight, 1)
		}
		rp := reply{
			Delay: time.Duration(f.Delay), Hang: f.Hang, Keepalive: time.Duration(f.Keepalive), Status: f.Status, Header: f.Headers,
			Code: f.Code, Mode: f.Mode, Every: time.Duration(f.Every), Count: f.Count, StreamError: f.Mode == "stream_error",
		}
		if f.Latency != nil {
			rp.Delay = f.Latency.sample(unit(f.Latency.Seed, n))
		}
		return rp
	}
}

// unit is a uniform draw in [0, 1) for call n of a seeded schedule: the
// splitmix64 finalizer of seed and n, so that draws of neighbouring calls
// are independent and a call's draw does not depend on the calls before it.
func unit(seed uint64, n int) float64 {
	z := seed + uint64(n+1)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// world builds the scenario's routes and servers (inside a bubble) and the
// engine policy.
func (sc *scenarioFile) world(t testing.TB) (*world, execution.Policy) {
	t.Helper()
	specs := make([]routeSpec, len(sc.Routes))
	servers := make([]*server, len(sc.Routes)) // filled below, read only while a call is served
	for i, r := range sc.Routes {
		specs[i] = routeSpec{name: r.Name, script: r.script(time.Duration(sc.Start), func() int { return servers[i].inFlight() })}
	}
	w := newWorld(t, specs)
	copy(servers, w.servers)
	p := sc.policy()
	for i := range sc.Routes {
		rt := sc.cfg.Routes[i].EngineRoute() // every key of the route as warden.toml gives it
		rt.Provider = w.routes[i].Provider
		w.routes[i] = rt
	}
	return w, p
}

// figures are what a run of a scenario measured, for either policy.
type figures struct {
	wall, maxItem   time.Duration
	items, reviewed int
	failed          int
	calls           int
	outcome         review.Outcome
	killed          bool           // naive: the job timeout ended it
	routeCalls      map[string]int // requests each route's server saw
	opens           map[string]int // breaker openings (warden only)
	beforeOpen      map[string]int // requests sent before the first opening (warden only)
	abandoned       []time.Duration
}

func (f *figures) share() float64 { return float64(f.reviewed) / float64(f.items) }

// measure fills the figures the servers know.
func measure(w *world, f *figures) {
	f.routeCalls = map[string]int{}
	for i, s := range w.servers {
		f.routeCalls[w.routes[i].Name] = s.count()
		f.calls += s.count()
		f.abandoned = append(f.abandoned, s.abandoned()...)
	}
	items := make([]review.Item, f.items)
	for i := range items {
		switch {
		case i < f.reviewed:
			items[i].Status = review.StatusReviewed
		case i < f.reviewed+f.failed:
			items[i].Status = review.StatusFailed
		default:
			items[i].Status = review.StatusSkipped
		}
	}
	f.outcome = review.Decide(items, nil)
}

// runScenario runs the scenario through the engine; call it in a bubble.
func runScenario(t *testing.T, sc *scenarioFile) *figures {
	t.Helper()
	if sc.cfgErr != nil {
		if want := sc.Expect.ConfigError; !strings.Contains(sc.cfgErr.Error(), want) {
			t.Fatalf("%s: loading the configuration says %v, want an error containing %q", sc.name, sc.cfgErr, want)
		}
		return nil
	}
	w, p := sc.world(t)
	// What warden does when it loads a configuration: refuse one whose
	// time scales cannot compose (config.Parse already did, with the key).
	err := p.Validate(w.routes)
	if want := sc.Expect.ConfigError; want != "" || err != nil {
		if err == nil || want == "" || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: the configuration's check says %v, want an error containing %q", sc.name, err, want)
		}
		return nil
	}
	e, err := execution.New(w.routes, p, execution.Options{Rand: rand.New(rand.NewPCG(1, 2)), OnRouteEvent: w.onEvent})
	if err != nil {
		t.Fatalf("%s: %v", sc.name, err)
	}
	its := sc.items()
	results := e.Run(t.Context(), its, nil)
	f := &figures{wall: time.Since(w.origin), items: len(its), opens: map[string]int{}, beforeOpen: map[string]int{}}
	// What holds in every scenario: no call inside a cool-down or after
	// the route was disabled, none while its breaker was open (but the
	// one probe), one result per item.
	checkCooldowns(t, w)
	for i := range w.routes {
		if msg := breakerViolations(w, i, results); msg != "" {
			t.Errorf("%s: %s", sc.name, msg)
		}
	}
	if len(results) != len(its) {
		t.Errorf("%s: %d results for %d items", sc.name, len(results), len(its))
	}
	for _, r := range results {
		f.maxItem = max(f.maxItem, r.Duration)
		switch r.Status {
		case execution.StatusDone:
			f.reviewed++
		case execution.StatusFailed:
			f.failed++
		}
	}
	firstOpen := map[string]time.Duration{}
	for _, ev := range w.routeEvents() {
		if ev.Kind == execution.EventBreaker && ev.To == execution.BreakerOpen {
			f.opens[ev.Route]++
			if _, ok := firstOpen[ev.Route]; !ok {
				firstOpen[ev.Route] = ev.At.Sub(w.origin)
			}
		}
	}
	for i, s := range w.servers {
		name := w.routes[i].Name
		if at, ok := firstOpen[name]; ok {
			for _, c := range s.calls() {
				if c <= at {
					f.beforeOpen[name]++
				}
			}
		}
	}
	measure(w, f)
	return f
}

// check compares figures with bounds; warden says whether the route
// bounds that only the engine has (breaker openings) apply.
func (b *scBounds) check(f *figures, warden bool) []string {
	var bad []string
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	if b.Outcome != "" && string(f.outcome) != b.Outcome {
		fail("outcome %s, want %s", f.outcome, b.Outcome)
	}
	if b.MaxWall > 0 && f.wall > time.Duration(b.MaxWall) {
		fail("wall %v, want ≤ %v", f.wall, time.Duration(b.MaxWall))
	}
	if b.MinWall > 0 && f.wall < time.Duration(b.MinWall) {
		fail("wall %v, want ≥ %v", f.wall, time.Duration(b.MinWall))
	}
	if f.share() < b.MinReviewed {
		fail("reviewed %d of %d (%.1f%%), want ≥ %.1f%%", f.reviewed, f.items, 100*f.share(), 100*b.MinReviewed)
	}
	if b.MaxReviewed != nil && f.share() > *b.MaxReviewed {
		fail("reviewed %d of %d (%.1f%%), want ≤ %.1f%%", f.reviewed, f.items, 100*f.share(), 100**b.MaxReviewed)
	}
	if per := float64(f.calls) / float64(f.items); b.MaxCallsPerItem > 0 && per > b.MaxCallsPerItem {
		fail("%d calls for %d items (%.2f per item), want ≤ %.2f", f.calls, f.items, per, b.MaxCallsPerItem)
	}
	if b.MaxItemWall > 0 && f.maxItem > time.Duration(b.MaxItemWall) {
		fail("longest item %v, want ≤ %v", f.maxItem, time.Duration(b.MaxItemWall))
	}
	if b.MaxAbandoned != nil {
		n := 0
		for _, p := range f.abandoned {
			if b.AbandonedWithin == 0 || p <= time.Duration(b.AbandonedWithin) {
				n++
			}
		}
		if n > *b.MaxAbandoned {
			fail("%d calls abandoned that would have answered within %v (%v), want ≤ %d", n, time.Duration(b.AbandonedWithin), f.abandoned, *b.MaxAbandoned)
		}
	}
	names := make([]string, 0, len(b.Routes))
	for name := range b.Routes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		rb := b.Routes[name]
		calls, ok := f.routeCalls[name]
		if !ok {
			fail("expect.route.%s: no such route", name)
			continue
		}
		if rb.MaxCalls != nil && calls > *rb.MaxCalls {
			fail("route %s: %d calls, want ≤ %d", name, calls, *rb.MaxCalls)
		}
		if calls < rb.MinCalls {
			fail("route %s: %d calls, want ≥ %d", name, calls, rb.MinCalls)
		}
		if !warden {
			continue
		}
		if f.opens[name] < rb.MinBreakerOpens {
			fail("route %s: breaker opened %d times, want ≥ %d", name, f.opens[name], rb.MinBreakerOpens)
		}
		if rb.MaxBreakerOpens != nil && f.opens[name] > *rb.MaxBreakerOpens {
			fail("route %s: breaker opened %d times, want ≤ %d", name, f.opens[name], *rb.MaxBreakerOpens)
		}
		if rb.MaxCallsBeforeOpen > 0 && f.opens[name] > 0 && f.beforeOpen[name] > rb.MaxCallsBeforeOpen {
			fail("route %s: %d calls before its breaker opened, want ≤ %d", name, f.beforeOpen[name], rb.MaxCallsBeforeOpen)
		}
	}
	return bad
}

func (f *figures) String() string {
	return fmt.Sprintf("wall %v, reviewed %d/%d, failed %d, %s, %d calls %v, breaker opens %v, longest item %v, %d abandoned",
		f.wall, f.reviewed, f.items, f.failed, f.outcome, f.calls, f.routeCalls, f.opens, f.maxItem, len(f.abandoned))
}

// TestScenarioFiles runs every scenario file through the engine and checks
// its [expect] bounds.
func TestScenarioFiles(t *testing.T) {
	t.Parallel()
	for _, sc := range loadScenarios(t) {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := runScenario(t, sc)
				if f == nil {
					return // refused at load time, as expected
				}
				t.Logf("warden: %s", f)
				for _, msg := range sc.Expect.check(f, true) {
					t.Errorf("%s: %s", sc.name, msg)
				}
			})
		})
	}
}

// A scenario file with a key warden.toml does not have, or a bad value,
// is one clear error naming the file and the line.
func TestScenarioFileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, want string }{
		{"unknown key", "[[items]]\ncount = 1\n[[routes]]\nname = \"a\"\nspeed = 3\n", "bad.toml:5: routes.speed: unknown key"},
		{"no routes", "[[items]]\ncount = 1\n", "no [[routes]]"},
		{"no items", "[[routes]]\nname = \"a\"\n", "no [[items]]"},
		{"bad duration", "[review]\nbudget = \"soon\"\n", "invalid duration \"soon\""},
		{"bad latency", "[[items]]\ncount = 1\n[[routes]]\nname = \"a\"\n[[routes.faults]]\nlatency = { p = [0.5, 1], values = [\"1s\", \"2s\"] }\n", "p rising from 0 to 1"},
		{"bad mode", "[[items]]\ncount = 1\n[[routes]]\nname = \"a\"\n[[routes.faults]]\nmode = \"slow\"\n", "unknown mode \"slow\""},
		{"bad profile", "[[items]]\ncount = 1\n[[routes]]\nname = \"a\"\nprofile = \"vllm\"\n", "unknown profile \"vllm\""},
		{"bad outcome", "[[items]]\ncount = 1\n[[routes]]\nname = \"a\"\n[expect]\noutcome = \"fine\"\n", "expect.outcome \"fine\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "bad.toml")
			if err := os.WriteFile(path, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadScenario(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("loadScenario(%q) = %v, want one line containing %q", tt.body, err, tt.want)
			}
		})
	}
}

// A real warden.toml is a scenario's configuration as it is: the
// repository's LiteLLM profile, with items added, decodes strictly.
func TestScenarioTakesWardenTOML(t *testing.T) {
	t.Parallel()
	cfg, err := os.ReadFile(filepath.Join("..", "testdata", "litellm-profile.toml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mine.toml")
	if err := os.WriteFile(path, append(cfg, "\n[[items]]\ncount = 1\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	sc, err := loadScenario(path)
	if err != nil {
		t.Fatalf("loadScenario(testdata/litellm-profile.toml + items) = %v", err)
	}
	if got := sc.Routes[0].Profile; got != "litellm" {
		t.Errorf("route profile %q, want litellm", got)
	}
}

// The latency distributions sample what they say: the provider tail of
// the scenario files has p95 6.2 min and max 42.6 min.
func TestScenarioLatencyShape(t *testing.T) {
	t.Parallel()
	sc, err := loadScenario(filepath.Join("testdata", "scenarios", "provider-tail.toml"))
	if err != nil {
		t.Fatal(err)
	}
	l := sc.Routes[0].Faults[0].Latency
	var d []time.Duration
	for n := range 10_000 {
		d = append(d, l.sample(unit(l.Seed, n)))
	}
	slices.Sort(d)
	if p95, m := d[9499], d[9999]; p95 < 6*time.Minute || p95 > 6*time.Minute+24*time.Second || m > 42*time.Minute+36*time.Second || m < 40*time.Minute {
		t.Errorf("provider tail p95 %v, max %v; want ≈ 6.2 min and ≤ 42.6 min", p95, m)
	}
}

// TestScenarioKeysAreWardenTOMLs: a scenario file's [review], [retry] and
// [[routes]] spell exactly warden.toml's keys (and a route's faults), so a
// configuration pastes into a scenario as it is and a new key cannot be
// missing here.
func TestScenarioKeysAreWardenTOMLs(t *testing.T) {
	t.Parallel()
	keys := func(v any, extra ...string) []string {
		typ := reflect.TypeOf(v)
		out := slices.Clone(extra)
		for i := range typ.NumField() {
			if tag := typ.Field(i).Tag.Get("toml"); tag != "" && tag != "-" {
				out = append(out, tag)
			}
		}
		slices.Sort(out)
		return out
	}
	var f config.File
	for _, c := range []struct {
		table     string
		got, want []string
	}{
		{"[review]", keys(scReview{}), keys(f.Review)},
		{"[retry]", keys(scRetry{}), keys(f.Retry)},
		{"[[routes]]", keys(scRoute{}), keys(config.Route{}, "faults")},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("a scenario's %s keys %v, warden.toml's %v", c.table, c.got, c.want)
		}
	}
}
