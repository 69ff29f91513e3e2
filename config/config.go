// Package config owns the warden.toml format: it decodes a file strictly
// (unknown keys, wrong types, bad durations and severities are errors naming
// the file, the key and its line) and turns it into the library packages'
// plain values: execution's policy and routes (the engine's and the
// probe's, on execution/openai's provider), review's thresholds and skill
// settings, hunks' filters. It reads no environment and no process state:
// callers pass bytes (or an fs.FS) and a name, and a getenv for the route
// keys, the environment's quick route and the local results cache. It must
// not import cmd/warden, action or any sink.
package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/review"
)

// duration is a TOML duration: a Go duration string such as "90s" or "5m".
type duration time.Duration

func (d *duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q (want a Go duration such as \"90s\" or \"5m\")", b)
	}
	if v < 0 {
		return fmt.Errorf("invalid duration %q: must not be negative", b)
	}
	*d = duration(v)
	return nil
}

// severity is a TOML severity with its own error message.
type severity struct {
	set bool
	v   review.Severity
}

func (s *severity) UnmarshalText(b []byte) error {
	v, err := review.ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = severity{set: true, v: v}
	return nil
}

// fileConfig is warden.toml (DESIGN.md §6). Zero values mean "not set".
type fileConfig struct {
	Version int           `toml:"version"`
	Review  reviewConfig  `toml:"review"`
	Retry   retryConfig   `toml:"retry"`
	Routes  []routeConfig `toml:"routes"`
	Filters filterConfig  `toml:"filters"`
	Skills  []skillConfig `toml:"skills"`
	// Instructions are the repository's own instructions for reviewers
	// ([[instructions]], instructions.go).
	Instructions []instructionConfig `toml:"instructions"`

	file         string // the file it was read from, for errors found later
	reportOnLine int    // the line of review.report_on; 0 when not set
}

type reviewConfig struct {
	Budget         duration `toml:"budget"`
	HunkBudget     duration `toml:"hunk_budget"`
	RequestTimeout duration `toml:"request_timeout"`
	MinAttempt     duration `toml:"min_attempt"`
	Reserve        duration `toml:"reserve"`
	MaxConcurrency int      `toml:"max_concurrency"`
	MaxQueueWait   duration `toml:"max_queue_wait"`
	MaxTokens      int      `toml:"max_tokens"`
	FailOn         severity `toml:"fail_on"`
	ReportOn       severity `toml:"report_on"`
	MaxFindings    *int     `toml:"max_findings"`
	BatchSkills    bool     `toml:"batch_skills"`
	// MaxCostUSD and MaxTotalTokens cap the review's spend (0: no cap). The
	// token cap is max_total_tokens, not max_tokens as issue 7 first named
	// it: max_tokens already is the completion cap of one answer, and one
	// name with two meanings in one table would be a trap.
	MaxCostUSD     float64 `toml:"max_cost_usd"`
	MaxTotalTokens int     `toml:"max_total_tokens"`
	// Verify and VerifyRoute: the optional verification pass (verify.go).
	Verify      string `toml:"verify"`
	VerifyRoute string `toml:"verify_route"`
	// Context and ContextChars: context beyond the hunk (verify.go).
	Context      string `toml:"context"`
	ContextChars int    `toml:"context_chars"`
	// Instructions and InstructionsChars: the repository's instructions
	// sent with each request, and how many characters (instructions.go).
	Instructions      string `toml:"instructions"`
	InstructionsChars int    `toml:"instructions_chars"`
}

type retryConfig struct {
	MaxPerRoute      *int       `toml:"max_per_route"`
	Backoff          duration   `toml:"backoff"`
	BackoffSchedule  []duration `toml:"backoff_schedule"`
	RateLimitBackoff duration   `toml:"rate_limit_backoff"`
	MaxRetryAfter    duration   `toml:"max_retry_after"`
	BudgetRatio      *float64   `toml:"budget_ratio"`
	MaxPerItem       *int       `toml:"max_per_item"` // retries per item across all routes (issue 11)
	// OutagePatience is how long the last route may go without an answer
	// before its items stop waiting for it (execution's outage patience,
	// issue 22); unset: the hunk budget.
	OutagePatience duration `toml:"outage_patience"`
}

type routeConfig struct {
	Name      string `toml:"name"`
	BaseURL   string `toml:"base_url"`
	Model     string `toml:"model"`
	APIKeyEnv string `toml:"api_key_env"`
	// ProbeAPIKeyEnv and ProbeModel are what `warden probe` sends with (a
	// probe-designated key, as the LiteLLM standard asks); empty: the
	// route's own, with a warning.
	ProbeAPIKeyEnv  string   `toml:"probe_api_key_env"`
	ProbeModel      string   `toml:"probe_model"`
	MaxConcurrency  int      `toml:"max_concurrency"`
	RequestTimeout  duration `toml:"request_timeout"`
	ResponseHealing bool     `toml:"response_healing"`
	JSONSchema      *bool    `toml:"json_schema"`
	Stream          bool     `toml:"stream"`
	FailoverOnAuth  bool     `toml:"failover_on_auth"`
	// ContextWindow is the model's context in tokens (0: unknown): a
	// request refused as too long fails over to a later route with a
	// larger one (execution.Route.ContextWindow).
	ContextWindow      int      `toml:"context_window"`
	MinInterval        duration `toml:"min_interval"`
	FirstTokenTimeout  duration `toml:"first_token_timeout"`
	IdleTimeout        duration `toml:"idle_timeout"`
	PriceInputPerMTok  float64  `toml:"price_input_per_mtok"`
	PriceOutputPerMTok float64  `toml:"price_output_per_mtok"`
	// PriceCachedInputPerMTok prices prompt tokens served from the
	// provider's cache; 0 (or unset) bills them at price_input_per_mtok.
	PriceCachedInputPerMTok float64 `toml:"price_cached_input_per_mtok"`
	// Profile and BreakerWindow are issue 11's: a named standard the route
	// follows ("litellm", "litellm-aux") and the breaker's window.
	Profile       string   `toml:"profile"`
	BreakerWindow duration `toml:"breaker_window"`

	line int // where the route starts, for errors found after decoding
}

type filterConfig struct {
	Ignore          []string `toml:"ignore"`
	MaxFiles        int      `toml:"max_files"`
	MaxChangedLines int      `toml:"max_changed_lines"`
	MaxFileBytes    int64    `toml:"max_file_bytes"`
	// LimitsOutOfScope puts what the limits above drop out of the review's
	// scope: a review that reviewed the rest is complete (the report says
	// what was left out). Default false: it is partial.
	LimitsOutOfScope bool `toml:"limits_out_of_scope"`
}

type skillConfig struct {
	Name   string   `toml:"name"`
	Paths  []string `toml:"paths"`
	Ignore []string `toml:"ignore"`
}

// configError is an error in a configuration file, with the key and line.
type configError struct {
	file string
	line int
	key  string
	msg  string
}

func (e *configError) Error() string {
	var b strings.Builder
	b.WriteString(e.file)
	if e.line > 0 {
		fmt.Fprintf(&b, ":%d", e.line)
	}
	b.WriteString(": ")
	if e.key != "" {
		b.WriteString(e.key + ": ")
	}
	b.WriteString(e.msg)
	return b.String()
}

var goTypeNoise = regexp.MustCompile(`into struct field .* of type (\S+)$`)

// parseConfig decodes warden.toml strictly: unknown keys, wrong types, bad
// durations and unknown severities are errors naming the key and its line.
func parseConfig(name string, data []byte) (*fileConfig, error) {
	var c fileConfig
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		var strict *toml.StrictMissingError
		var de *toml.DecodeError
		switch {
		case errors.As(err, &strict) && len(strict.Errors) > 0:
			e := strict.Errors[0]
			row, _ := e.Position()
			return nil, &configError{file: name, line: row, key: strings.Join(e.Key(), "."), msg: "unknown key"}
		case errors.As(err, &de):
			row, _ := de.Position()
			msg := strings.TrimPrefix(de.Error(), "toml: ")
			msg = goTypeNoise.ReplaceAllString(msg, "into $1")
			return nil, &configError{file: name, line: row, key: strings.Join(de.Key(), "."), msg: msg}
		default:
			return nil, &configError{file: name, msg: err.Error()}
		}
	}
	lines := routeLines(data)
	for i := range c.Routes {
		if i < len(lines) {
			c.Routes[i].line = lines[i]
		}
	}
	c.instructionLines(data)
	c.file, c.reportOnLine = name, keyLine(data, "review.report_on")
	if err := checkZeros(name, data, &c); err != nil {
		return nil, err
	}
	if err := c.check(name); err != nil {
		var ce *configError
		if errors.As(err, &ce) && ce.line == 0 {
			ce.line = keyLine(data, ce.key)
		}
		return nil, err
	}
	return &c, nil
}

// checkZeros rejects a zero the file sets where zero would silently mean
// "the default": a 0s budget or request timeout, max_concurrency = 0. Left
// out, each takes its default; set, it must be usable.
func checkZeros(file string, data []byte, c *fileConfig) error {
	var raw struct {
		Review map[string]any   `toml:"review"`
		Retry  map[string]any   `toml:"retry"`
		Routes []map[string]any `toml:"routes"`
	}
	if err := toml.Unmarshal(data, &raw); err != nil {
		return nil // decoding already succeeded strictly; nothing more to learn
	}
	zero := func(v any) bool {
		switch v := v.(type) {
		case int64:
			return v == 0
		case string:
			d, err := time.ParseDuration(v)
			return err == nil && d == 0
		}
		return false
	}
	why := map[string]string{
		"budget":          "a 0s review budget leaves no time to review: leave it out for the default (15m) or give a duration such as \"10m\"",
		"hunk_budget":     "a 0s hunk budget leaves no time for any item: leave it out for the default (5m) or give a duration",
		"request_timeout": "a 0s request timeout would time out every call: leave it out for the default or give a duration such as \"120s\"",
		"min_attempt":     "a 0s minimum attempt would start attempts with no time left: leave it out for the default or give a duration",
		"max_concurrency": "0 would run nothing: leave it out for the default or give at least 1",
		"outage_patience": "a 0s outage patience would fail every item at the route's first failure: leave it out for the default (the hunk budget) or give a duration",
	}
	for _, k := range []string{"budget", "hunk_budget", "request_timeout", "min_attempt", "max_concurrency"} {
		if v, ok := raw.Review[k]; ok && zero(v) {
			return &configError{file: file, line: keyLine(data, "review."+k), key: "review." + k, msg: why[k]}
		}
	}
	if v, ok := raw.Retry["outage_patience"]; ok && zero(v) {
		return &configError{file: file, line: keyLine(data, "retry.outage_patience"), key: "retry.outage_patience", msg: why["outage_patience"]}
	}
	for i, r := range raw.Routes {
		for _, k := range []string{"request_timeout", "max_concurrency"} {
			if v, ok := r[k]; ok && zero(v) {
				line := 0
				if i < len(c.Routes) {
					line = c.Routes[i].line
				}
				return &configError{file: file, line: line, key: fmt.Sprintf("routes[%d].%s", i, k), msg: why[k]}
			}
		}
	}
	return nil
}

// routeLines returns the line of each [[routes]] header, in order.
func routeLines(data []byte) []int {
	var out []int
	for i, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == "[[routes]]" {
			out = append(out, i+1)
		}
	}
	return out
}

// keyLine finds the line of a dotted key such as "review.max_concurrency"
// (a table and a key) in data; 0 when it cannot.
func keyLine(data []byte, dotted string) int {
	table, key := "", dotted
	if i := strings.LastIndexByte(dotted, '.'); i >= 0 {
		table, key = dotted[:i], dotted[i+1:]
	}
	if i := strings.IndexByte(table, '['); i >= 0 {
		table = table[:i]
	}
	current := ""
	for n, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			current = strings.Trim(l, "[] ")
			continue
		}
		k, _, ok := strings.Cut(l, "=")
		if ok && current == table && strings.TrimSpace(k) == key {
			return n + 1
		}
	}
	return 0
}

// check validates what decoding cannot: required keys, ranges, names.
func (c *fileConfig) check(file string) error {
	bad := func(line int, key, format string, args ...any) error {
		return &configError{file: file, line: line, key: key, msg: fmt.Sprintf(format, args...)}
	}
	if c.Version != 0 && c.Version != 1 {
		return bad(0, "version", "unsupported version %d (this warden reads version 1)", c.Version)
	}
	if err := c.checkLimits(bad); err != nil {
		return err
	}
	if err := c.checkRoutes(bad); err != nil {
		return err
	}
	if err := c.checkVerify(bad); err != nil {
		return err
	}
	if err := c.checkInstructions(bad); err != nil {
		return err
	}
	return c.checkGlobsAndThresholds(bad)
}

// checkGlobsAndThresholds checks the skills' names and every glob (a bad one
// named with its key and line, not found only when filtering), and that the
// file's report_on is not above its fail_on.
func (c *fileConfig) checkGlobsAndThresholds(bad badKey) error {
	for i, s := range c.Skills {
		if s.Name == "" {
			return bad(0, fmt.Sprintf("skills[%d].name", i), "missing")
		}
		for _, g := range slices.Concat(s.Paths, s.Ignore) {
			if err := hunks.ValidateGlob(g); err != nil {
				return bad(0, fmt.Sprintf("skills[%d]", i), "%v", err)
			}
		}
	}
	for _, g := range c.Filters.Ignore {
		if err := hunks.ValidateGlob(g); err != nil {
			return bad(0, "filters.ignore", "%v", err)
		}
	}
	if c.Review.FailOn.set && c.Review.ReportOn.set {
		if _, err := review.ResolveThresholds(c.thresholds()); err != nil {
			return bad(0, "review.report_on", "%v", err)
		}
	}
	return nil
}

// badKey makes a configError of the file being checked.
type badKey func(line int, key, format string, args ...any) error

// checkLimits checks the review, retry and filter limits.
func (c *fileConfig) checkLimits(bad badKey) error {
	if key, v, ok := firstNonFinite(reflect.ValueOf(*c), ""); ok {
		return bad(0, key, "must be a finite number, got %v", v)
	}
	if c.Review.MaxConcurrency < 0 {
		return bad(0, "review.max_concurrency", "must be positive, got %d", c.Review.MaxConcurrency)
	}
	if c.Review.MaxTokens < 0 {
		return bad(0, "review.max_tokens", "must be positive, got %d", c.Review.MaxTokens)
	}
	if !(c.Review.MaxCostUSD >= 0) { // also NaN
		return bad(0, "review.max_cost_usd", "must not be negative, got %g", c.Review.MaxCostUSD)
	}
	if c.Review.MaxTotalTokens < 0 {
		return bad(0, "review.max_total_tokens", "must not be negative, got %d", c.Review.MaxTotalTokens)
	}
	if c.Review.MaxFindings != nil && *c.Review.MaxFindings < 0 {
		return bad(0, "review.max_findings", "must not be negative, got %d", *c.Review.MaxFindings)
	}
	if c.Retry.BudgetRatio != nil && (*c.Retry.BudgetRatio < 0 || *c.Retry.BudgetRatio > 1) {
		return bad(0, "retry.budget_ratio", "must be between 0 and 1, got %g", *c.Retry.BudgetRatio)
	}
	if c.Retry.MaxPerRoute != nil && *c.Retry.MaxPerRoute < 0 {
		return bad(0, "retry.max_per_route", "must not be negative, got %d", *c.Retry.MaxPerRoute)
	}
	if c.Retry.MaxPerItem != nil && *c.Retry.MaxPerItem < 0 {
		return bad(0, "retry.max_per_item", "must not be negative, got %d", *c.Retry.MaxPerItem)
	}
	if c.Filters.MaxFiles < 0 || c.Filters.MaxChangedLines < 0 || c.Filters.MaxFileBytes < 0 {
		return bad(0, "filters", "limits must not be negative")
	}
	if p := c.policy(); p.Budget <= p.Reserve+p.MinAttempt {
		return bad(0, "review.budget", "%s leaves no time to review: it must exceed review.reserve (%s) plus review.min_attempt (%s)", p.Budget, p.Reserve, p.MinAttempt)
	} else if p.ItemBudget < p.MinAttempt {
		return bad(0, "review.hunk_budget", "%s is shorter than review.min_attempt (%s): no attempt could start", p.ItemBudget, p.MinAttempt)
	}
	return nil
}

// firstNonFinite finds the first floating-point value in v (a decoded
// configuration, walked through its TOML keys) that is NaN or infinite:
// TOML spells them nan and inf, and no number of warden.toml means
// anything infinite (issue 22: retry.budget_ratio = nan loaded, and the
// JSON report then failed). key is its dotted key, e.g.
// routes[1].price_input_per_mtok.
func firstNonFinite(v reflect.Value, key string) (string, float64, bool) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return key, f, true
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return firstNonFinite(v.Elem(), key)
		}
	case reflect.Slice:
		for i := range v.Len() {
			if k, f, ok := firstNonFinite(v.Index(i), fmt.Sprintf("%s[%d]", key, i)); ok {
				return k, f, true
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
			if name == "" || name == "-" || !t.Field(i).IsExported() {
				continue
			}
			if key != "" {
				name = key + "." + name
			}
			if k, f, ok := firstNonFinite(v.Field(i), name); ok {
				return k, f, true
			}
		}
	}
	return "", 0, false
}

// checkRoutes checks every route: names, required keys, ranges.
func (c *fileConfig) checkRoutes(bad badKey) error {
	names := map[string]bool{}
	for i, r := range c.Routes {
		key := func(k string) string { return fmt.Sprintf("routes[%d].%s", i, k) }
		switch {
		case r.Name == "":
			return bad(r.line, key("name"), "missing: every route needs a name")
		case names[r.Name]:
			return bad(r.line, key("name"), "duplicate route name %q", r.Name)
		case r.BaseURL == "":
			return bad(r.line, key("base_url"), "missing")
		case r.Model == "":
			return bad(r.line, key("model"), "missing")
		case r.MaxConcurrency < 0:
			return bad(r.line, key("max_concurrency"), "must be positive, got %d", r.MaxConcurrency)
		case r.ContextWindow < 0:
			return bad(r.line, key("context_window"), "must be a number of tokens, got %d (leave it out when unknown)", r.ContextWindow)
		case r.PriceInputPerMTok < 0 || r.PriceOutputPerMTok < 0:
			return bad(r.line, key("price_input_per_mtok"), "prices must not be negative")
		case !(r.PriceCachedInputPerMTok >= 0):
			return bad(r.line, key("price_cached_input_per_mtok"), "must not be negative, got %g", r.PriceCachedInputPerMTok)
		}
		if err := checkBaseURL(r.BaseURL); err != nil {
			return bad(r.line, key("base_url"), "%v", err)
		}
		if _, err := execution.ParseProfile(r.Profile); err != nil {
			return bad(r.line, key("profile"), "%v", err)
		}
		names[r.Name] = true
	}
	if err := c.composed(); err != nil {
		return bad(0, err.key, "%s", err.msg)
	}
	return nil
}

// composed checks the time scales of the file's routes against its budgets
// (execution's Policy.Validate) and names the key that cannot hold them.
func (c *fileConfig) composed() *configError {
	routes := make([]execution.Route, len(c.Routes))
	for i, rc := range c.Routes {
		routes[i] = rc.EngineRoute()
	}
	if len(routes) == 0 {
		routes = []execution.Route{{}} // the environment's route: the review's settings alone
	}
	var ce *execution.CompositionError
	if err := c.policy().Validate(routes); !errors.As(err, &ce) {
		return nil
	}
	key := c.keyOf(ce.Key, ce.Route)
	msg := ce.Msg
	if ce.With != "" {
		msg += " (" + c.keyOf(ce.With, ce.Route) + ")" // the other key, named too
	}
	return &configError{key: key, msg: msg}
}

// keyOf is the file's key for one of execution's composition settings on
// the route named route: the [review] key, or the route's own when the
// setting is a route's (or the route sets its own request timeout).
func (c *fileConfig) keyOf(setting, route string) string {
	review := map[string]string{
		execution.KeyItemBudget: "review.hunk_budget", execution.KeyBudget: "review.budget",
		execution.KeyMinAttempt: "review.min_attempt", execution.KeyRequestTimeout: "review.request_timeout",
	}
	for i, r := range c.Routes {
		if r.Name != route {
			continue
		}
		if _, ok := review[setting]; !ok || (setting == execution.KeyRequestTimeout && r.RequestTimeout > 0) {
			return fmt.Sprintf("routes[%d].%s", i, setting)
		}
	}
	return review[setting]
}

// EngineRoute is the route's settings as the engine reads them, without a
// provider.
func (rc routeConfig) EngineRoute() execution.Route {
	prof, _ := execution.ParseProfile(rc.Profile) // checked before
	return execution.Route{
		Name:              rc.Name,
		BaseURL:           rc.BaseURL,
		APIKeyEnv:         rc.APIKeyEnv,
		Model:             rc.Model,
		ProbeModel:        rc.ProbeModel,
		MaxConcurrency:    rc.MaxConcurrency,
		RequestTimeout:    time.Duration(rc.RequestTimeout),
		ResponseHealing:   rc.ResponseHealing,
		Stream:            rc.Stream,
		FailoverOnAuth:    rc.FailoverOnAuth,
		ContextWindow:     rc.ContextWindow,
		NoSchema:          rc.JSONSchema != nil && !*rc.JSONSchema,
		MinInterval:       time.Duration(rc.MinInterval),
		FirstTokenTimeout: time.Duration(rc.FirstTokenTimeout),
		IdleTimeout:       time.Duration(rc.IdleTimeout),
		Profile:           prof,
		Breaker:           execution.BreakerSettings{Window: time.Duration(rc.BreakerWindow)},
		// 0 bills cached tokens at the input price (execution.Route.Cost).
		PriceInputPerMTok:       rc.PriceInputPerMTok,
		PriceOutputPerMTok:      rc.PriceOutputPerMTok,
		PriceCachedInputPerMTok: rc.PriceCachedInputPerMTok,
	}
}

func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http or https URL", raw)
	}
	return nil
}

// loadConfig reads the configuration file: the named one (which must exist),
// or warden.toml in dir when it exists, or none.
func loadConfig(fsys fs.FS, named string, readFile func(string) ([]byte, error)) (*fileConfig, string, error) {
	if named != "" {
		data, err := readFile(named)
		if err != nil {
			return nil, named, fmt.Errorf("config %s: %w", named, unwrapPathError(err))
		}
		c, err := parseConfig(named, data)
		return c, named, err
	}
	data, err := fs.ReadFile(fsys, "warden.toml")
	if errors.Is(err, fs.ErrNotExist) {
		return &fileConfig{}, "", nil
	}
	if err != nil {
		return nil, "warden.toml", fmt.Errorf("config warden.toml: %w", unwrapPathError(err))
	}
	c, err := parseConfig("warden.toml", data)
	return c, "warden.toml", err
}

// unwrapPathError drops the *fs.PathError wrapper whose path the caller
// already names (review.UnwrapPathError, the one home).
var unwrapPathError = review.UnwrapPathError

// thresholds are the file's fail_on, report_on and max_findings.
func (c *fileConfig) thresholds() review.ThresholdSettings {
	var t review.ThresholdSettings
	if c.Review.FailOn.set {
		t.FailOn = &c.Review.FailOn.v
	}
	if c.Review.ReportOn.set {
		t.ReportOn = &c.Review.ReportOn.v
	}
	t.MaxFindings = c.Review.MaxFindings
	return t
}

// policy turns the file's settings into the engine's policy.
func (c *fileConfig) policy() execution.Policy {
	p := execution.DefaultPolicy()
	setDur := func(dst *time.Duration, v duration) {
		if v > 0 {
			*dst = time.Duration(v)
		}
	}
	setDur(&p.Budget, c.Review.Budget)
	setDur(&p.ItemBudget, c.Review.HunkBudget)
	setDur(&p.RequestTimeout, c.Review.RequestTimeout)
	setDur(&p.MinAttempt, c.Review.MinAttempt)
	setDur(&p.Reserve, c.Review.Reserve)
	setDur(&p.Backoff, c.Retry.Backoff)
	setDur(&p.RateLimitBackoff, c.Retry.RateLimitBackoff)
	setDur(&p.MaxRetryAfter, c.Retry.MaxRetryAfter)
	setDur(&p.MaxQueueWait, c.Review.MaxQueueWait)
	setDur(&p.OutagePatience, c.Retry.OutagePatience)
	for _, d := range c.Retry.BackoffSchedule {
		p.BackoffSchedule = append(p.BackoffSchedule, time.Duration(d))
	}
	if c.Retry.BudgetRatio != nil {
		p.RetryBudgetRatio = *c.Retry.BudgetRatio
	}
	if c.Review.MaxConcurrency > 0 {
		p.MaxConcurrency = c.Review.MaxConcurrency
	}
	if c.Retry.MaxPerRoute != nil {
		p.MaxRetriesPerRoute = *c.Retry.MaxPerRoute
	}
	if c.Retry.MaxPerItem != nil {
		p.MaxRetriesPerItem = *c.Retry.MaxPerItem
		if p.MaxRetriesPerItem == 0 {
			p.MaxRetriesPerItem = -1 // execution: negative is none, zero the default
		}
	}
	p.MaxCostUSD, p.MaxTotalTokens = c.Review.MaxCostUSD, c.Review.MaxTotalTokens
	return p
}

// Public endpoints of the env-only quick route.
const (
	openAIBaseURL     = "https://api.openai.com/v1"
	openRouterBaseURL = "https://openrouter.ai/api/v1"
	openAIModel       = "gpt-4o-mini"
	openRouterModel   = "openai/gpt-4o-mini"
)

// envRoute is the single route warden builds from the environment when the
// file has no [[routes]]: WARDEN_BASE_URL, WARDEN_MODEL and (optional)
// WARDEN_API_KEY,
// or OPENAI_API_KEY / OPENROUTER_API_KEY with their public base URLs. ok is
// false when the environment names no route at all.
func envRoute(getenv func(string) string) (r routeConfig, ok bool, err error) {
	model := getenv("WARDEN_MODEL")
	switch {
	case getenv("WARDEN_BASE_URL") != "":
		r = routeConfig{Name: "env", BaseURL: getenv("WARDEN_BASE_URL"), Model: model}
		if getenv("WARDEN_API_KEY") != "" { // optional: a local endpoint may take none
			r.APIKeyEnv = "WARDEN_API_KEY"
		}
		if model == "" {
			return r, true, errors.New("WARDEN_BASE_URL is set but WARDEN_MODEL is not: name the model to use")
		}
		if err := checkBaseURL(r.BaseURL); err != nil {
			return r, true, fmt.Errorf("WARDEN_BASE_URL: %w", err)
		}
	case getenv("OPENROUTER_API_KEY") != "":
		r = routeConfig{Name: "openrouter", BaseURL: openRouterBaseURL, Model: cmp.Or(model, openRouterModel), APIKeyEnv: "OPENROUTER_API_KEY"}
	case getenv("OPENAI_API_KEY") != "":
		r = routeConfig{Name: "openai", BaseURL: openAIBaseURL, Model: cmp.Or(model, openAIModel), APIKeyEnv: "OPENAI_API_KEY"}
	default:
		return r, false, nil
	}
	return r, true, nil
}
