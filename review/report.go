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
	// Verification is "verified", "rejected" (never in Report.Findings;
	// see Report.Verification) or "not_verified" when the review verifies
	// findings ([review] verify); VerificationReason is the verifier's
	// reason, or why it was not verified. Omitted when verification is off.
	Verification       string `json:"verification,omitempty"`
	VerificationReason string `json:"verification_reason,omitempty"`
	// Fingerprint is the finding's identity across runs, from its skill,
	// path and the code of its own lines, never its wording, its line
	// numbers or the code beside it (identify): 32 hex digits. Additive;
	// omitted when unknown (a report of an older version).
	Fingerprint string `json:"fingerprint,omitempty"`
	// Twin tells apart findings with the same Fingerprint (one skill on
	// identical code twice in a file), from the code on each side:
	// 16 hex digits, never matched on alone (report.Match).
	Twin string `json:"twin,omitempty"`
	// PriorFingerprint is the fingerprint the version before gave (the
	// code and two lines on each side in one hash), read only to recognise
	// the markers and records it left on a pull request.
	PriorFingerprint string `json:"prior_fingerprint,omitempty"`
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

	// The fields below are additive to the contract and omitted when zero.

	Number int `json:"number,omitempty"` // 1-based among the item's attempts
	// StartMS is when the request was sent (or rejected), since the review
	// started; DurationMS runs from there.
	StartMS int64 `json:"start_ms,omitempty"`
	// DeadlineMS is the time the attempt was given: TimeoutEffectiveMS
	// clipped to the item's and the review's budgets, retries on a route
	// sharing the first attempt's deadline.
	DeadlineMS        int64 `json:"deadline_ms,omitempty"`
	ItemRemainingMS   int64 `json:"item_remaining_ms,omitempty"`   // item budget left when sent
	ReviewRemainingMS int64 `json:"review_remaining_ms,omitempty"` // review budget (less the reserve) left when sent
	QueueWaitMS       int64 `json:"queue_wait_ms,omitempty"`       // cool-down, bulkhead and pacing wait before sending
	BackoffMS         int64 `json:"backoff_ms,omitempty"`          // the wait before this retry
	RetryAfterMS      int64 `json:"retry_after_ms,omitempty"`      // the server's Retry-After, when it gave one
	// TTFTMS is the time from sending to the first byte of the answer (the
	// first data event of a stream); omitted when unknown.
	TTFTMS           int64  `json:"ttft_ms,omitempty"`
	PromptTokens     int    `json:"prompt_tokens,omitempty"`
	CompletionTokens int    `json:"completion_tokens,omitempty"`
	CachedTokens     int    `json:"cached_tokens,omitempty"`  // the part of PromptTokens served from the provider's cache
	ResponseModel    string `json:"response_model,omitempty"` // the model the server said answered
	// Decision is what the engine did next: "done", "retry", "failover",
	// "fail" or "stop".
	Decision string `json:"decision,omitempty"`
	// Breaker is the route's circuit-breaker state when the attempt was
	// admitted: "closed", "open" or "half_open".
	Breaker string `json:"breaker,omitempty"`
	// ServerAddress and ServerPort are the route's host and explicit port
	// (from its base URL, never its path or credentials).
	ServerAddress string `json:"server_address,omitempty"`
	ServerPort    int    `json:"server_port,omitempty"`
}

// Item is one work item: one skill on one chunk.
type Item struct {
	Skill     string `json:"skill"`
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Priority  int    `json:"priority"`
	// Why says what Priority is made of: "source, risk word \"auth\", 12
	// changed lines" (hunks.Chunk.Why). Additive; omitted when empty.
	Why                string     `json:"why,omitempty"`
	Status             ItemStatus `json:"status"`
	Reason             string     `json:"reason"` // failure class or skip reason; "" when reviewed or planned (DESIGN.md §4)
	Route              string     `json:"route"`  // the route that produced the result; "" when none did
	TimeoutEffectiveMS int64      `json:"timeout_effective_ms"`
	CostUSD            float64    `json:"cost_usd"`
	Attempts           []Attempt  `json:"attempts"`

	// The fields below are additive to the contract and omitted when zero.

	// Request is the 1-based number of the model request the item was
	// sent in: the items of one batch (Policy.BatchSkills) share it, and
	// with it their attempts, which were made once.
	Request int `json:"request,omitempty"`
	// DeadlineMS is the deadline the item's first attempt really gets
	// (execution.Engine.Deadline: the adaptive deadline held by the item
	// budget less one failover attempt), what the dry run shows.
	DeadlineMS int64 `json:"deadline_ms,omitempty"`
	StartMS    int64 `json:"start_ms,omitempty"`    // since the review started; omitted for an item never started
	DurationMS int64 `json:"duration_ms,omitempty"` // from the item's start to its end, retries and failover included
	// Class is the class of the last call of a failed item whose Reason
	// names what stopped it rather than a class (circuit_open,
	// retry_budget, ...): "server_error" when its own call answered 500;
	// omitted when no call of the item was sent.
	Class string `json:"class,omitempty"`
	// Answer is, for an item that failed bad_response, the start of the
	// model's last answer that could not be used, sanitised to one line of
	// at most AnswerExcerptRunes runes; AnswerProblem says what was wrong
	// with it ("not the output contract: no JSON object with a findings
	// array", "cut off at max_tokens", ...).
	Answer        string `json:"answer,omitempty"`
	AnswerProblem string `json:"answer_problem,omitempty"`
	// Cached is set when the item's answer came from the results cache
	// (Options.Cache): reviewed, with no model call and no attempt.
	// CachedModel and CachedEndpoint say who answered it then: the model
	// the server named and the host of the route's base URL (part of the
	// cache's key); Route is the current route with that model and
	// endpoint.
	Cached         bool   `json:"cached,omitempty"`
	CachedModel    string `json:"cached_model,omitempty"`
	CachedEndpoint string `json:"cached_endpoint,omitempty"`
	// Unverified counts the item's findings left not verified under
	// [review] verify = "required": such an item makes the review partial
	// (Decide).
	Unverified int `json:"unverified,omitempty"`
	// Context says what the item's request carries beyond the hunk
	// ([review] context), ContextChars how many characters; omitted when
	// context is off.
	Context      string `json:"context,omitempty"`
	ContextChars int    `json:"context_chars,omitempty"`
	// Instructions name the repository's instructions the item's request
	// carries, most general first (" (cut)" after one sent only in part),
	// InstructionsChars how many characters of them; omitted when none.
	Instructions      []string `json:"instructions,omitempty"`
	InstructionsChars int      `json:"instructions_chars,omitempty"`
}

// Ignored is a path that was not reviewed, and why.
type Ignored struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	// Lines counts the changed lines the entry leaves unreviewed
	// (hunks.Ignored.Lines); additive to the contract, omitted when 0.
	Lines int `json:"lines,omitempty"`
	// From is the name a renamed file had when that name is why it is
	// withheld (hunks.Ignored.From); additive, omitted otherwise.
	From string `json:"from,omitempty"`
}

// Summary counts items and findings.
type Summary struct {
	Planned  int `json:"planned"`
	Reviewed int `json:"reviewed"`
	Failed   int `json:"failed"`
	Skipped  int `json:"skipped"`
	Findings int `json:"findings"`
	// Cached counts the reviewed items whose answer came from the results
	// cache (additive to the contract; omitted when none did).
	Cached int `json:"cached,omitempty"`
	// CacheRejected counts results-cache entries found and not used:
	// unsigned or signed with another secret, naming another key, damaged,
	// or no longer acceptable (CacheStats.Corrupt); each such item was
	// reviewed anew. Additive, omitted when 0.
	CacheRejected int `json:"cache_rejected,omitempty"`
	// Suppressed counts findings not shown because a person dismissed
	// them on the pull request (a `/warden dismiss`, a thumbs-down, a
	// thread resolved without a code change); additive, omitted when 0.
	Suppressed int `json:"suppressed,omitempty"`
	// NotPosted counts findings that GitHub's limits on content-creating
	// requests kept off the pull request ("not posted: rate budget"); they
	// are in the check run and the report. Additive, omitted when 0.
	NotPosted int `json:"not_posted,omitempty"`
	// FindingsDropped counts the findings models reported that are not in
	// Findings, by reason (additive to the contract; omitted when none
	// was dropped).
	FindingsDropped FindingsDropped `json:"findings_dropped,omitzero"`
}

// FindingsDropped counts findings left out of a report, by the bound or
// rule that left them out, so that no cap hides findings silently.
type FindingsDropped struct {
	// AnswerCap: over MaxFindingsPerAnswer in one answer.
	AnswerCap int `json:"answer_cap,omitempty"`
	// MaxFindings: over the review's max_findings (Policy.MaxFindings),
	// the least severe first.
	MaxFindings int `json:"max_findings,omitempty"`
	// BelowReportOn: below the review's report_on (Policy.ReportOn).
	BelowReportOn int `json:"below_report_on,omitempty"`
	// NoText: with neither a title nor a description.
	NoText int `json:"no_text,omitempty"`
	// UnknownSkill: in a batched answer, naming no skill of the batch.
	UnknownSkill int `json:"unknown_skill,omitempty"`
	// Rejected: rejected by the verification request ([review] verify),
	// listed in Report.Verification.
	Rejected int `json:"rejected,omitempty"`
}

// Total is the number of findings dropped for any reason.
func (d FindingsDropped) Total() int {
	return d.AnswerCap + d.MaxFindings + d.BelowReportOn + d.NoText + d.UnknownSkill + d.Rejected
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

	// The fields below are additive to the contract; every number comes
	// from execution.RouteStats.

	// TTFTP50MS and TTFTP95MS are the time to first token of the calls
	// that reported one (0 when none did).
	TTFTP50MS int64 `json:"ttft_p50_ms"`
	TTFTP95MS int64 `json:"ttft_p95_ms"`
	// FailoversIn counts items that arrived on this route from a previous
	// one; FailoversOut items that left it for the next.
	FailoversIn  int `json:"failovers_in"`
	FailoversOut int `json:"failovers_out"`
	Retries      int `json:"retries"`   // calls that were retries on this route
	Rejected     int `json:"rejected"`  // attempts not sent: breaker open, cool-down, bulkhead full, disabled
	Cancelled    int `json:"cancelled"` // calls ended by the caller or the review budget (in calls, not in failed)
	// ConcurrencyCuts counts the times a 429 cut the route's concurrency
	// (the engine's AIMD); MinConcurrency is the lowest it went.
	ConcurrencyCuts int `json:"concurrency_cuts,omitempty"`
	MinConcurrency  int `json:"min_concurrency,omitempty"`
	// Disabled names the class that took the route out of the review
	// (auth, payment, model_not_found); empty while it served.
	Disabled         string `json:"disabled,omitempty"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	CachedTokens     int    `json:"cached_tokens"`
	// Priced is set when the route has a price, so that CostUSD 0 means
	// free rather than unknown.
	Priced bool `json:"priced"`
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

	// The fields below are additive to the contract: the rest of the retry
	// settings, and the routes as configured.

	RetryBudgetMin    int     `json:"retry_budget_min"`
	BackoffScheduleMS []int64 `json:"backoff_schedule_ms,omitempty"` // replaces full-jitter backoff when set
	MaxRetryAfterMS   int64   `json:"max_retry_after_ms"`            // a longer Retry-After fails over
	MaxQueueWaitMS    int64   `json:"max_queue_wait_ms"`
	CooldownWaitMaxMS int64   `json:"cooldown_wait_max_ms"`
	MaxRetriesPerItem int     `json:"max_retries_per_item"` // across all routes without a profile (issue 11)
	ProbeTimeoutMS    int64   `json:"probe_timeout_ms"`     // the engine's half-open health probe
	OutagePatienceMS  int64   `json:"outage_patience_ms"`   // how long the last route is waited for in an outage (the item budget unless set)
	// Routes are the configured routes in failover order, with their base
	// timeouts and limits. They hold the name of each key's environment
	// variable, never a key, and the base URL's host, never its path,
	// query or credentials.
	Routes []RoutePolicy `json:"routes"`
}

// RoutePolicy is one route as configured, for the policy audit. It never
// holds a secret.
type RoutePolicy struct {
	Name        string `json:"name"`
	Model       string `json:"model"`
	BaseURLHost string `json:"base_url_host"`         // host[:port] only
	APIKeyEnv   string `json:"api_key_env,omitempty"` // the variable's name; its value is never recorded
	// RequestTimeoutMS is the base of the route's adaptive deadline (the
	// route's request_timeout, else the review's).
	RequestTimeoutMS int64 `json:"request_timeout_ms"`
	MaxConcurrency   int   `json:"max_concurrency"` // the route's cap, else the review's
	Stream           bool  `json:"stream"`
	// FirstTokenTimeoutMS and IdleTimeoutMS are the configured streaming
	// watchdogs; 0 means the adaptive defaults (execution.StreamTimeouts).
	FirstTokenTimeoutMS     int64   `json:"first_token_timeout_ms,omitempty"`
	IdleTimeoutMS           int64   `json:"idle_timeout_ms,omitempty"`
	MinIntervalMS           int64   `json:"min_interval_ms,omitempty"`
	JSONSchema              bool    `json:"json_schema"`
	ResponseHealing         bool    `json:"response_healing,omitempty"`
	FailoverOnAuth          bool    `json:"failover_on_auth,omitempty"`
	ContextWindow           int     `json:"context_window,omitempty"` // tokens; 0: unknown
	PriceInputPerMTok       float64 `json:"price_input_per_mtok,omitempty"`
	PriceOutputPerMTok      float64 `json:"price_output_per_mtok,omitempty"`
	PriceCachedInputPerMTok float64 `json:"price_cached_input_per_mtok,omitempty"`
	// Issue 11: the route's profile and floor, the deadline a request at
	// every baseline really gets as its first attempt here (one failover
	// attempt kept), its retries and its breaker's window.
	Profile           string `json:"profile,omitempty"`
	FloorMS           int64  `json:"floor_ms,omitempty"`
	AttemptDeadlineMS int64  `json:"attempt_deadline_ms"`
	RetriesPerRoute   int    `json:"retries_per_route"`
	BreakerWindowMS   int64  `json:"breaker_window_ms"`
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
	// Diagnoses say why calls failed, derived from the attempts by
	// Diagnose (additive to the contract).
	Diagnoses []Diagnosis `json:"diagnoses"`
	// Verification is what the optional verification pass did; nil when
	// [review] verify is off (additive to the contract).
	Verification *Verification `json:"verification,omitempty"`
	// Coverage is what the review covered of the change, in changed files
	// and lines, and why the rest was not (additive to the contract):
	// Decide reads it, every sink shows it.
	Coverage Coverage `json:"coverage"`
	// Instructions say which of the repository's instructions the requests
	// carried and where they were read; nil when the caller configured
	// none (additive to the contract).
	Instructions *InstructionsReport `json:"instructions,omitempty"`
	// SkippedSkills are the skill files the review did not run, and why;
	// SkillWarnings what is odd in the skills it ran (additive).
	SkippedSkills []SkippedSkill `json:"skipped_skills,omitempty"`
	SkillWarnings []SkillWarning `json:"skill_warnings,omitempty"`
	// Redacted lists where a secret was replaced by a placeholder in what
	// the review sent to models (additive; omitted when nothing was). The
	// secrets on added lines are findings too (skill SecretsSkill), and
	// the files withheld whole are in Ignored (reason "secret:<kind>").
	Redacted []Redaction `json:"redacted,omitempty"`
	// Injections list where the text the requests carried addresses the
	// AI reviewer (injection.go; additive, omitted when none): the models
	// may have obeyed it. One on an added line is a finding too (skill
	// InjectionSkill); one in the pull request's title or description has
	// no line to point at and is shown by every sink as a note.
	Injections []Injection `json:"injections,omitempty"`
}

// Publisher sends a finished report somewhere: a terminal, a file, GitHub.
// Publish may be called once per report; implementations need not be safe
// for concurrent use.
type Publisher interface {
	Publish(ctx context.Context, r *Report) error
}

// Blocks reports whether a finding reaches failOn: the one rule behind the
// exit code 1 and the check run's failure conclusion.
func (r *Report) Blocks(failOn Severity) bool { return Blocking(r.Findings, failOn) }

// Blocking reports whether one of fs reaches failOn.
func Blocking(fs []Finding, failOn Severity) bool {
	for _, f := range fs {
		if f.Severity.AtLeast(failOn) {
			return true
		}
	}
	return false
}

// Complete reports whether the review is complete: its outcome says so and
// Decide agrees from its items and its coverage (a report read back from a
// file is not trusted to state its own outcome).
func (r *Report) Complete() bool {
	if r.Outcome != OutcomeComplete {
		return false
	}
	return Decide(r.Items, &r.Coverage) == OutcomeComplete
}
