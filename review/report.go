package review

import "context"

// Schema is the JSON report's schema identifier (contract).
const Schema = "warden.report/v1"

// Outcome is the verdict on a whole review (DESIGN.md §4).
type Outcome string

// The outcomes.
const (
	OutcomeComplete            Outcome = "complete"
	OutcomePartial             Outcome = "partial"
	OutcomeProviderUnavailable Outcome = "provider-unavailable"
	OutcomeDryRun              Outcome = "dry-run"
)

// ItemStatus is what became of one work item.
type ItemStatus string

// The item statuses.
const (
	StatusPlanned  ItemStatus = "planned" // dry run only
	StatusReviewed ItemStatus = "reviewed"
	StatusFailed   ItemStatus = "failed"
	StatusSkipped  ItemStatus = "skipped"
)

// Finding is one validated problem a skill reported.
type Finding struct {
	Skill       string   `json:"skill"`
	Severity    Severity `json:"severity"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Path        string   `json:"path"`
	StartLine   int      `json:"start_line"`
	EndLine     int      `json:"end_line"`
	Suggestion  string   `json:"suggestion"`
	Confidence  float64  `json:"confidence,omitempty"`
	// Clamped is set when the model's lines fell outside the reviewed chunk
	// and were moved into it.
	Clamped bool   `json:"clamped,omitempty"`
	Route   string `json:"route"`
	Model   string `json:"model"`
}

// Attempt is one model call made for an item.
type Attempt struct {
	Route              string `json:"route"`
	Model              string `json:"model"`
	Kind               string `json:"kind"`
	TimeoutBaseMS      int64  `json:"timeout_base_ms"`
	TimeoutEffectiveMS int64  `json:"timeout_effective_ms"`
	DurationMS         int64  `json:"duration_ms"`
	Class              string `json:"class"`
	// Reason says why an attempt was not sent or what the engine decided
	// ("circuit_open", "retry_budget", ...); empty for a plain attempt.
	Reason string `json:"reason,omitempty"`
}

// Item is one work item: one skill on one chunk.
type Item struct {
	Skill              string     `json:"skill"`
	Path               string     `json:"path"`
	StartLine          int        `json:"start_line"`
	EndLine            int        `json:"end_line"`
	Priority           int        `json:"priority"`
	Status             ItemStatus `json:"status"`
	Reason             string     `json:"reason,omitempty"` // failure class or skip reason
	Route              string     `json:"route,omitempty"`
	TimeoutEffectiveMS int64      `json:"timeout_effective_ms"`
	CostUSD            float64    `json:"cost_usd"`
	Attempts           []Attempt  `json:"attempts"`
}

// Ignored is a path that was not reviewed, and why.
type Ignored struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Summary counts items and findings.
type Summary struct {
	Planned  int `json:"planned"`
	Reviewed int `json:"reviewed"`
	Failed   int `json:"failed"`
	Skipped  int `json:"skipped"`
	Findings int `json:"findings"`
}

// RouteStats is one route's health over the review.
type RouteStats struct {
	Name         string  `json:"name"`
	Model        string  `json:"model"`
	Calls        int     `json:"calls"`
	OK           int     `json:"ok"`
	Failed       int     `json:"failed"`
	Timeouts     int     `json:"timeouts"`
	P50MS        int64   `json:"p50_ms"`
	P95MS        int64   `json:"p95_ms"`
	CircuitOpens int     `json:"circuit_opens"`
	CostUSD      float64 `json:"cost_usd"`
}

// Policy is the time and retry policy the review ran under. It never holds a
// secret.
type Policy struct {
	BudgetMS           int64   `json:"budget_ms"`
	ItemBudgetMS       int64   `json:"item_budget_ms"`
	RequestTimeoutMS   int64   `json:"request_timeout_ms"`
	MinAttemptMS       int64   `json:"min_attempt_ms"`
	ReserveMS          int64   `json:"reserve_ms"`
	MaxConcurrency     int     `json:"max_concurrency"`
	MaxRetriesPerRoute int     `json:"max_retries_per_route"`
	BackoffMS          int64   `json:"backoff_ms"`
	RateLimitBackoffMS int64   `json:"rate_limit_backoff_ms"`
	BaselineBodyChars  int     `json:"baseline_body_chars"`
	BaselineMaxTokens  int     `json:"baseline_max_tokens"`
	BaselinePoints     int     `json:"baseline_points"`
	MaxMultiplier      int     `json:"max_multiplier"`
	TimeoutCeilingMS   int64   `json:"timeout_ceiling_ms"`
	FailOn             string  `json:"fail_on"`
	ReportOn           string  `json:"report_on"`
	MaxFindings        int     `json:"max_findings"`
	RetryBudgetRatio   float64 `json:"retry_budget_ratio,omitempty"`
	MaxCostUSD         float64 `json:"max_cost_usd,omitempty"`     // 0: no cost cap
	MaxTotalTokens     int     `json:"max_total_tokens,omitempty"` // 0: no token cap
	BatchSkills        bool    `json:"batch_skills,omitempty"`
}

// Usage adds up tokens and cost over the review: every attempt's tokens as
// the provider reported them, CachedTokens being the part of PromptTokens
// served from the provider's prefix cache, and CostUSD priced per route
// (execution.Route.Cost).
type Usage struct {
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	CachedTokens     int     `json:"cached_tokens"`
	CostUSD          float64 `json:"cost_usd"`
}

// Report is the result of a review; its JSON form is the contract of
// DESIGN.md §5.
type Report struct {
	Schema     string       `json:"schema"`
	Outcome    Outcome      `json:"outcome"`
	Summary    Summary      `json:"summary"`
	Findings   []Finding    `json:"findings"`
	Items      []Item       `json:"items"`
	Ignored    []Ignored    `json:"ignored"`
	Routes     []RouteStats `json:"routes"`
	Policy     Policy       `json:"policy"`
	Usage      Usage        `json:"usage"`
	DurationMS int64        `json:"duration_ms"`
}

// Publisher sends a finished report somewhere: a terminal, a file, GitHub.
// Publish may be called once per report; implementations need not be safe
// for concurrent use.
type Publisher interface {
	Publish(ctx context.Context, r *Report) error
}
