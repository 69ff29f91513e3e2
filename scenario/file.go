package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/org/warden/execution"
	"github.com/org/warden/review"
)

// Span is a TOML duration: a Go duration string such as "90s" or "2h30m".
type Span time.Duration

func (d *Span) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil || v < 0 {
		return fmt.Errorf("invalid duration %q (want a non-negative Go duration such as \"90s\")", b)
	}
	*d = Span(v)
	return nil
}

// File is one scenario.
type File struct {
	Description string `toml:"description"`
	// Start is the fault schedule's clock when the review starts: windows
	// are times since the incident began, and the review may start late
	// in it (sept6-recovering starts 2h28m into the outage).
	Start  Span        `toml:"start"`
	Items  []ItemGroup `toml:"items"`
	Review Review      `toml:"review"`
	Retry  Retry       `toml:"retry"`
	Routes []Route     `toml:"routes"`
	Expect Bounds      `toml:"expect"`
	Naive  *Bounds     `toml:"naive"` // the naive policy's figures, asserted by TestCompareNaive

	// The rest of warden.toml, accepted so that a configuration pastes
	// as it is, and not used.
	Filters map[string]any `toml:"filters"`
	Skills  []any          `toml:"skills"`
	Version int            `toml:"version"`

	Name string `toml:"-"` // the file's base name without .toml
	Path string `toml:"-"`
	data []byte
}

// ItemGroup is count items whose user message has chars characters.
type ItemGroup struct {
	Count int `toml:"count"`
	Chars int `toml:"chars"`
}

// Review, Retry and Route spell warden.toml's [review], [retry] and
// [[routes]] keys, so that the file decodes strictly with each unknown key's
// line; what the keys mean is config's (ConfigTOML), and
// TestScenarioKeysAreWardenTOMLs keeps the spelling equal to config's.
type Review struct {
	Budget         Span    `toml:"budget"`
	HunkBudget     Span    `toml:"hunk_budget"`
	RequestTimeout Span    `toml:"request_timeout"`
	MinAttempt     Span    `toml:"min_attempt"`
	Reserve        Span    `toml:"reserve"`
	MaxConcurrency int     `toml:"max_concurrency"`
	MaxQueueWait   Span    `toml:"max_queue_wait"`
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
	// Instructions and InstructionsChars: the repository's instructions
	// (issue 23); a scenario's requests carry none, so they only load.
	Instructions      string `toml:"instructions"`
	InstructionsChars int    `toml:"instructions_chars"`
}

type Retry struct {
	MaxPerRoute      *int     `toml:"max_per_route"`
	Backoff          Span     `toml:"backoff"`
	BackoffSchedule  []Span   `toml:"backoff_schedule"`
	RateLimitBackoff Span     `toml:"rate_limit_backoff"`
	MaxRetryAfter    Span     `toml:"max_retry_after"`
	BudgetRatio      *float64 `toml:"budget_ratio"`
	MaxPerItem       *int     `toml:"max_per_item"`
	OutagePatience   Span     `toml:"outage_patience"`
}

// Route is warden.toml's [[routes]] plus the route's fault schedule.
type Route struct {
	Name                    string  `toml:"name"`
	BaseURL                 string  `toml:"base_url"`
	Model                   string  `toml:"model"`
	APIKeyEnv               string  `toml:"api_key_env"`
	ProbeAPIKeyEnv          string  `toml:"probe_api_key_env"`
	ProbeModel              string  `toml:"probe_model"`
	BreakerWindow           Span    `toml:"breaker_window"`
	Profile                 string  `toml:"profile"`
	MaxConcurrency          int     `toml:"max_concurrency"`
	RequestTimeout          Span    `toml:"request_timeout"`
	ResponseHealing         bool    `toml:"response_healing"`
	JSONSchema              *bool   `toml:"json_schema"`
	Stream                  bool    `toml:"stream"`
	FailoverOnAuth          bool    `toml:"failover_on_auth"`
	MinInterval             Span    `toml:"min_interval"`
	FirstTokenTimeout       Span    `toml:"first_token_timeout"`
	IdleTimeout             Span    `toml:"idle_timeout"`
	PriceInputPerMTok       float64 `toml:"price_input_per_mtok"`
	PriceOutputPerMTok      float64 `toml:"price_output_per_mtok"`
	PriceCachedInputPerMTok float64 `toml:"price_cached_input_per_mtok"`
	ContextWindow           int     `toml:"context_window"`

	// Faults is the route's schedule: for each call, the entries whose
	// window holds the call are weighed, and one is drawn (seeded by the
	// route's name and the call's number). A call no entry holds is a
	// healthy answer after 1s.
	Faults []Fault `toml:"faults"`
}

// Fault is one entry of a route's fault schedule.
type Fault struct {
	From      Span `toml:"from"`       // the window, on the schedule's clock: from ≤ t < until
	Until     Span `toml:"until"`      // 0: for ever
	FirstCall int  `toml:"first_call"` // and by the call's number on the route (0-based): first_call ≤ n < last_call
	LastCall  int  `toml:"last_call"`  // 0: no limit
	// InFlightOver holds the call only while more than this many calls
	// (the call included) are in flight on the route: a provider's
	// per-key concurrency limit. 0: any.
	InFlightOver int               `toml:"in_flight_over"`
	Weight       float64           `toml:"weight"`    // the entry's share among those that hold the call; 0: 1
	Delay        Span              `toml:"delay"`     // fixed latency before the answer (or the error)
	Latency      *Latency          `toml:"latency"`   // or a latency distribution
	Status       int               `toml:"status"`    // an error status; 0: a good answer
	Code         string            `toml:"code"`      // the error body's code
	Headers      map[string]string `toml:"headers"`   // e.g. Retry-After
	Hang         bool              `toml:"hang"`      // never answer (no headers)
	Keepalive    Span              `toml:"keepalive"` // streaming hang: a keep-alive comment every keepalive
	Mode         string            `toml:"mode"`      // "stall", "trickle", "empty", "tokens", "stream_error", "truncate"
	Content      string            `toml:"content"`   // a good answer's text (e.g. prose that ignores the output contract); "": the runner's
	Every        Span              `toml:"every"`     // the mode's interval
	Count        int               `toml:"count"`     // "tokens": how many
}

// Latency is a latency distribution: the inverse of a piecewise-linear
// CDF through the points (p[i], values[i]), p from 0 to 1, sampled with a
// seed.
type Latency struct {
	P      []float64 `toml:"p"`
	Values []Span    `toml:"values"`
	Seed   uint64    `toml:"seed"`
}

func (l *Latency) Sample(u float64) time.Duration {
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

// Bounds are a scenario's expected figures. Zero values are not checked
// (use the pointer fields to ask for a zero).
type Bounds struct {
	ConfigError     string                 `toml:"config_error"`       // the configuration is refused at load time with this in its message (config.Parse, Policy.Validate); nothing runs
	Outcome         string                 `toml:"outcome"`            // complete, partial or provider-unavailable (review.Decide)
	MaxWall         Span                   `toml:"max_wall"`           // from the review's start to Run's return
	MinWall         Span                   `toml:"min_wall"`           // (for the naive side: at least this long)
	MinReviewed     float64                `toml:"min_reviewed"`       // share of items with an accepted answer, 0 to 1
	MaxReviewed     *float64               `toml:"max_reviewed"`       //
	MaxCallsPerItem float64                `toml:"max_calls_per_item"` // requests the servers saw ÷ items
	MaxItemWall     Span                   `toml:"max_item_wall"`      // the longest item
	MaxAbandoned    *int                   `toml:"max_abandoned"`      // calls cut by the client that would have completed within abandoned_within
	AbandonedWithin Span                   `toml:"abandoned_within"`   // 0: whenever
	FailedClass     string                 `toml:"failed_class"`       // the class every failed item ends with (timeout, bad_response, ...)
	Routes          map[string]RouteBounds `toml:"route"`
}

// RouteBounds are one route's expected figures.
type RouteBounds struct {
	MaxCalls           *int `toml:"max_calls"`
	MinCalls           int  `toml:"min_calls"`
	MinBreakerOpens    int  `toml:"min_breaker_opens"`
	MaxBreakerOpens    *int `toml:"max_breaker_opens"`
	MaxCallsBeforeOpen int  `toml:"max_calls_before_open"` // requests sent before the breaker first opened
}

// DecodeError is err, from a strict go-toml decoder of the file at path,
// as one line naming the file and the line: "path:5: routes.speed:
// unknown key", "path:2: <go-toml's words>".
func DecodeError(path string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		e := strict.Errors[0]
		row, _ := e.Position()
		return fmt.Errorf("%s:%d: %s: unknown key", path, row, strings.Join(e.Key(), "."))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		return fmt.Errorf("%s:%d: %s", path, row, strings.Join(strings.Fields(de.Error()), " "))
	}
	return fmt.Errorf("%s: %s", path, strings.Join(strings.Fields(err.Error()), " "))
}

// Load reads and checks one scenario file. Its [[items]] are the engine
// runner's business and not checked here; what its warden.toml part means
// is config's (ConfigTOML).
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var sc File
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return nil, DecodeError(path, err)
	}
	sc.Name, sc.Path, sc.data = strings.TrimSuffix(filepath.Base(path), ".toml"), path, data
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
	}
	if len(sc.Routes) == 0 {
		return nil, bad("no [[routes]]")
	}
	for _, g := range sc.Items {
		if g.Count <= 0 || g.Chars < 0 {
			return nil, bad("[[items]] needs count > 0 and chars ≥ 0")
		}
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
			case "", "stall", "trickle", "empty", "tokens", "stream_error", "truncate":
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

// ConfigError is err, an error config.Parse gave about ConfigTOML's
// document, without the line number: the document's lines are not the
// file's (its key names the place).
func (sc *File) ConfigError(err error) error {
	return errors.New(regexp.MustCompile(`^`+regexp.QuoteMeta(sc.Path)+`:\d+: `).ReplaceAllString(err.Error(), sc.Path+": "))
}

// ConfigTOML is the file's warden.toml part, [review], [retry] and
// [[routes]] without their faults, for config.Parse; a route without
// base_url or model gets the harness's (https://NAME.example.com/v1,
// model-NAME).
func (sc *File) ConfigTOML() ([]byte, error) {
	var all map[string]any
	if err := toml.Unmarshal(sc.data, &all); err != nil {
		return nil, fmt.Errorf("%s: %w", sc.Path, err)
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
		return nil, fmt.Errorf("%s: %w", sc.Path, err)
	}
	return doc, nil
}

// LoadAll loads the scenario files paths name: a file as it is, a
// directory's *.toml in name order (a directory with none is an error).
func LoadAll(paths []string) ([]*File, error) {
	var out []*File
	for _, p := range paths {
		files := []string{p}
		if fi, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("scenario %s: %w", p, errors.Unwrap(err))
		} else if fi.IsDir() {
			if files, _ = filepath.Glob(filepath.Join(p, "*.toml")); len(files) == 0 {
				return nil, fmt.Errorf("scenario directory %s: no *.toml scenario in it", p)
			}
		}
		for _, f := range files {
			sc, err := Load(f)
			if err != nil {
				return nil, err
			}
			out = append(out, sc)
		}
	}
	return out, nil
}
