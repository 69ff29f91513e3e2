package execution

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
	"unicode/utf8"
)

// Route is one place a request can be sent: a base URL and a model, with its
// own concurrency cap and timeout. Routes are tried in the order given.
type Route struct {
	Name            string
	BaseURL         string // for reports and telemetry only; the Provider owns the connection
	Model           string
	Provider        Provider
	MaxConcurrency  int           // 0: the engine's MaxConcurrency
	RequestTimeout  time.Duration // base of the adaptive deadline; 0: Policy.RequestTimeout
	ResponseHealing bool
	Stream          bool
	FailoverOnAuth  bool // fail over (instead of failing loudly) on auth, payment, unknown model
	// NoSchema is for endpoints that reject response_format json_schema:
	// requests on the route carry no Schema (the prompt still describes
	// the answer's format).
	NoSchema    bool
	MinInterval time.Duration // least time between two request starts on this route
	// Prices in USD per million tokens, for Cost and the review's cost cap.
	// PriceCachedInputPerMTok is the price of the prompt tokens the provider
	// served from its prefix cache (Usage.CachedTokens); zero bills them at
	// PriceInputPerMTok, so an unknown cache price never undercounts.
	PriceInputPerMTok       float64
	PriceOutputPerMTok      float64
	PriceCachedInputPerMTok float64

	// APIKeyEnv is the name of the environment variable that holds the
	// route's key, for the report's policy audit; never the key itself.
	APIKeyEnv string

	// Breaker configures the route's circuit breaker; the zero value takes
	// DefaultBreakerSettings.
	Breaker BreakerSettings
	// FirstTokenTimeout and IdleTimeout are the streaming watchdogs of a
	// Stream route: zero is no first-token watchdog (it is opt-in: the
	// seeds' healthy backends take 25 s to a first token) and the default
	// 30 s idle one (StreamTimeouts).
	FirstTokenTimeout time.Duration
	IdleTimeout       time.Duration

	// Profile, when set, replaces the review plan's deadline and retry
	// rules on this route with a named standard (see ProfileRules).
	Profile Profile
	// ContextWindow is the model's context window in tokens; 0: unknown.
	// An item whose request a route refuses as too long for its context
	// (400 context_length_exceeded and kin, 413) fails over only to a later
	// route with a larger known window, skipping the others; without one
	// it fails there (bad_request), as a request error fails anywhere.
	ContextWindow int
	// ProbeProvider and ProbeModel send the route's health probes (a
	// short request when the breaker is half-open, Policy.ProbeTimeout):
	// nil and "" use Provider and Model. A probe-designated key lives in
	// ProbeProvider, so probes identify themselves in the server's metrics.
	ProbeProvider Provider
	ProbeModel    string
}

// Policy holds the engine's budgets and retry settings.
type Policy struct {
	Budget             time.Duration // the whole review
	ItemBudget         time.Duration // one item, retries and failover included
	RequestTimeout     time.Duration // base of the adaptive request deadline
	MinAttempt         time.Duration // no attempt starts with less than this left
	Reserve            time.Duration // kept at the end of the review for publishing
	MaxConcurrency     int           // items in flight at once
	MaxRetriesPerRoute int           // retries per (item, route)
	Backoff            time.Duration // base of full-jitter backoff
	RateLimitBackoff   time.Duration // route cool-down after a 429 without Retry-After

	// The fields below were added with the resilience engine. New replaces
	// a zero value with the default in DefaultPolicy, so a Policy written
	// before them keeps working; a negative value means "none".

	// BackoffSchedule, when set, replaces full-jitter backoff with fixed
	// delays: the wait before retry n (1-based) on a route is
	// BackoffSchedule[min(n, len)-1]. LiteLLMProfile uses 15s, 45s.
	BackoffSchedule []time.Duration
	// MaxRetryAfter is the longest Retry-After the engine waits for on the
	// same route (30s). A longer one cools the route down and fails over.
	MaxRetryAfter time.Duration
	// MaxQueueWait bounds the wait for a route's bulkhead (10s) before the
	// item fails over. On the last usable route the item waits as long as
	// its budget allows instead, since there is nowhere to fail over to.
	MaxQueueWait time.Duration
	// CooldownWaitMax is the longest remaining cool-down an item waits out
	// on a route (10s) rather than failing over; on the last usable route,
	// any cool-down that fits the item's budget is waited out.
	CooldownWaitMax time.Duration
	// RetryBudgetMin and RetryBudgetRatio bound the review's retries:
	// retries ≤ max(RetryBudgetMin, ⌊RetryBudgetRatio × calls so far⌋)
	// (3 and 0.1).
	// The floor is raised to MaxConcurrency, so that one wave of failures
	// (a 2-second blip on every request in flight) can always retry.
	RetryBudgetMin   int
	RetryBudgetRatio float64
	// MaxRetriesPerItem bounds an item's retries across all its routes
	// (1: the review plan's "retry at most once"; failover is not a
	// retry). A profile route's own retries follow its profile instead.
	MaxRetriesPerItem int
	// ProbeTimeout is the deadline of the engine's health probe of a
	// half-open route (30s: a probe slower than that is the alert).
	ProbeTimeout time.Duration
	// OutagePatience is how long the last usable route may go without an
	// answer before its items stop waiting for it (outage.go); zero: the
	// item budget.
	OutagePatience time.Duration

	// MaxCostUSD and MaxTotalTokens cap the review's spend; zero means no
	// cap. An item is dispatched only while the spend so far (every sent
	// attempt's Usage, priced by Route.Cost; items in flight count at
	// their estimate until they end) plus the item's estimate fits: its
	// Item.PromptTokens() prompt tokens and Request.MaxTokens completion
	// tokens, priced on the first route not disabled. The first item that
	// does not fit ends dispatching: it and every later item are skipped
	// with ReasonBudgetCost (or ReasonBudgetTokens), in the order given.
	// MaxTotalTokens counts prompt plus completion tokens.
	MaxCostUSD     float64
	MaxTotalTokens int
}

// DefaultPolicy returns the documented defaults.
func DefaultPolicy() Policy {
	return Policy{
		Budget:             15 * time.Minute,
		ItemBudget:         5 * time.Minute,
		RequestTimeout:     2 * time.Minute,
		MinAttempt:         20 * time.Second,
		Reserve:            30 * time.Second,
		MaxConcurrency:     8,
		MaxRetriesPerRoute: 1,
		Backoff:            2 * time.Second,
		RateLimitBackoff:   60 * time.Second,
		MaxRetryAfter:      30 * time.Second,
		MaxQueueWait:       10 * time.Second,
		CooldownWaitMax:    10 * time.Second,
		RetryBudgetMin:     3,
		RetryBudgetRatio:   0.1,
		MaxRetriesPerItem:  1,
		ProbeTimeout:       30 * time.Second,
	}
}

// Item is one unit of work: a request, plus a check of its answer.
type Item struct {
	Request *Request
	// Accept validates an answer. A non-nil error makes the attempt
	// ClassBadResponse (retried like any transient failure). Nil accepts all.
	Accept func(*Response) error
	// EstimatedPromptTokens is the caller's estimate of the request's
	// prompt tokens, for the cost caps; zero lets the engine estimate
	// (see PromptTokens).
	EstimatedPromptTokens int
}

// PromptTokens is the item's estimated prompt size in tokens:
// EstimatedPromptTokens when set, else the characters of the request's
// messages divided by 4, rounded up (a common rule of thumb for English and
// code; a tokenizer is not worth its weight for a cap).
func (it Item) PromptTokens() int {
	if it.EstimatedPromptTokens > 0 || it.Request == nil {
		return it.EstimatedPromptTokens
	}
	chars := 0
	for _, m := range it.Request.Messages {
		chars += len(m.Content)
	}
	return (chars + 3) / 4
}

// Cost is the price of u on the route, in USD: cached prompt tokens at
// PriceCachedInputPerMTok (PriceInputPerMTok when that is zero), the rest of
// the prompt at PriceInputPerMTok, completion tokens at PriceOutputPerMTok.
// CachedTokens are a part of PromptTokens, as providers report them.
func (r Route) Cost(u Usage) float64 {
	cachedPrice := r.PriceCachedInputPerMTok
	if cachedPrice == 0 {
		cachedPrice = r.PriceInputPerMTok
	}
	cached := min(max(u.CachedTokens, 0), max(u.PromptTokens, 0))
	uncached := max(u.PromptTokens, 0) - cached
	return (float64(uncached)*r.PriceInputPerMTok + float64(cached)*cachedPrice +
		float64(max(u.CompletionTokens, 0))*r.PriceOutputPerMTok) / 1e6
}

// Status is what became of an item.
type Status int

// The item statuses.
const (
	StatusDone    Status = iota + 1 // an accepted answer
	StatusFailed                    // every attempt failed; Result.Class says why
	StatusSkipped                   // never attempted; Result.Reason says why
)

func (s Status) String() string {
	switch s {
	case StatusDone:
		return "done"
	case StatusFailed:
		return "failed"
	case StatusSkipped:
		return "skipped"
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// Reasons. Result.Reason holds ReasonBudget, ReasonBudgetCost,
// ReasonBudgetTokens or ReasonCancelled for a skipped item, and for a failed item ReasonBudget when the review budget
// cut it. Attempt.Reason says why an attempt was not sent (Class
// ClassRejected) or why its Decision was taken.
const (
	ReasonBudget       = "budget"        // the review or item budget cannot fit it
	ReasonBudgetCost   = "budget:cost"   // Policy.MaxCostUSD cannot fit it
	ReasonBudgetTokens = "budget:tokens" // Policy.MaxTotalTokens cannot fit it
	ReasonCancelled    = "cancelled"     // the caller's context ended

	ReasonCircuitOpen   = "circuit_open"      // the route's breaker is open
	ReasonHalfOpenBusy  = "circuit_half_open" // the breaker's probe slot is taken
	ReasonCooldown      = "cooldown"          // the route cools down (Retry-After, 429)
	ReasonDisabled      = "disabled"          // auth, payment or unknown model earlier in the review
	ReasonBulkheadFull  = "bulkhead_full"     // the route's concurrency cap stayed full
	ReasonContextWindow = "context_window"    // the request is longer than the route's context window (a later route's is larger)

	ReasonRetryCap     = "retry_cap"       // the per-(item, route) retry cap is used up
	ReasonRetryBudget  = "retry_budget"    // the review-wide retry budget is used up
	ReasonNotRetryable = "not_retryable"   // the class is never retried on the same route
	ReasonRetryAfter   = "retry_after"     // the Retry-After is longer than the engine waits
	ReasonDeadlineUsed = "deadline_used"   // the attempt used more than half its deadline: no retry
	ReasonItemRetries  = "item_retries"    // the item's one retry (Policy.MaxRetriesPerItem) is used
	ReasonUnresponsive = "probe_failed"    // the route's last health probe failed or got no answer in Policy.ProbeTimeout; on the last usable route: its outage outlasted Policy.OutagePatience
	ReasonContract     = "output_contract" // the route's model ignores the output contract: its breaker opened on unusable answers alone and its trial answered unusably too (outage.go)
	ReasonConfig       = "config"          // auth, payment, unknown model: the route is disabled
	ReasonNoFailover   = "no_failover"     // the class is not one that fails over
	ReasonNoRoute      = "no_route"        // every route has been tried
)

// Decisions, in Attempt.Decision: what the engine did after an attempt.
const (
	DecisionDone     = "done"     // the answer was accepted
	DecisionRetry    = "retry"    // the same route again
	DecisionFailover = "failover" // the next route
	DecisionFail     = "fail"     // the item failed
	DecisionStop     = "stop"     // the caller or the review budget ended the item
	DecisionProbe    = "probe"    // a health probe: its class decides the breaker, not the item
	DecisionWait     = "wait"     // the last usable route is in an outage: wait for its next trial call (outage.go)
)

// AttemptKind says why an attempt was made.
type AttemptKind int

// The attempt kinds.
const (
	KindPrimary  AttemptKind = iota + 1 // the first attempt of an item
	KindRetry                           // again on the same route
	KindFailover                        // the next route
	KindProbe                           // the engine's health probe of a half-open route (not the item's request)
	// KindReadmit: the same route again after its outage, once its
	// breaker let a call through (outage.go): not a retry, as a failover
	// is not one.
	KindReadmit
)

func (k AttemptKind) String() string {
	switch k {
	case KindPrimary:
		return "primary"
	case KindRetry:
		return "retry"
	case KindFailover:
		return "failover"
	case KindProbe:
		return "probe"
	case KindReadmit:
		return "readmit"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// MarshalText implements encoding.TextMarshaler.
func (k AttemptKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Attempt records one attempt on one route: a request that was sent, or one
// that the engine decided not to send (Class ClassRejected, Reason says
// why, Duration 0). Durations are virtual-clock exact under testing/synctest.
type Attempt struct {
	Route            string
	Model            string
	Kind             AttemptKind
	Number           int           // 1-based, counting every record of the item
	Start            time.Duration // since the review started: when the request was sent (or rejected)
	TimeoutBase      time.Duration
	TimeoutEffective time.Duration // the adaptive deadline, before clipping
	// Deadline is what the attempt was given: the route request's deadline
	// (sent time of the route's first attempt + TimeoutEffective, clipped to
	// the item's and the review's end; retries share it) minus this
	// attempt's send time.
	Deadline          time.Duration
	ItemRemaining     time.Duration // item budget left when sent
	ReviewRemaining   time.Duration // review budget (less the reserve) left when sent
	QueueWait         time.Duration // cool-down, bulkhead and pacing wait before sending
	Backoff           time.Duration // the wait before this retry (backoff or Retry-After)
	FirstTokenTimeout time.Duration // streaming routes: the watchdogs given to the Provider
	IdleTimeout       time.Duration
	FirstByte         time.Duration // from sending to the first byte or data event; 0 when unknown
	Duration          time.Duration // from sending to the answer or error
	Usage             Usage
	ResponseModel     string // the model the server said answered; empty when unknown
	Class             Class
	RetryAfter        time.Duration // the server's Retry-After, when it gave one
	Decision          string        // what the engine did next: Decision*
	Reason            string        // why: Reason*; empty when obvious (done, retry)
	Breaker           string        // the route's breaker state at admission (a BreakerState name)
	Err               error
}

// Result is what became of one item, with every attempt made for it.
type Result struct {
	Status   Status
	Class    Class  // StatusFailed: the class that ended the item; StatusDone: ClassSuccess
	Reason   string // StatusSkipped: ReasonBudget or ReasonCancelled; StatusFailed: ReasonBudget when the review budget cut it, else the last rejection reason if any
	Response *Response
	Route    string // the route that produced Response
	Attempts []Attempt
	Err      error         // StatusFailed: the last real error (a *PanicError for a panic)
	Start    time.Duration // since the review started; zero for items skipped before starting
	Duration time.Duration // from the item's start to its end
}

// Routes returns the names of the routes the item was sent to, in order,
// without repeats (rejected attempts excluded).
func (r Result) Routes() []string {
	var out []string
	for _, a := range r.Attempts {
		if a.Class == ClassRejected || slices.Contains(out, a.Route) {
			continue
		}
		out = append(out, a.Route)
	}
	return out
}

// PanicError is an item's error when its run panicked: in the Provider, in
// Item.Accept or in the engine. Only that item fails (ClassUnknown).
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic while running item: %v", e.Value) }

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// Options are an Engine's collaborators; the zero value is usable.
type Options struct {
	Logger *slog.Logger // nil: discard
	// Rand is the jitter source (backoff, Retry-After and breaker jitter).
	// nil: a randomly seeded PCG. The engine serializes its use.
	Rand *rand.Rand
	// OnRouteEvent, when set, is called for every breaker transition,
	// cool-down and disabled route, from the goroutine that caused it,
	// never while the engine holds a lock. It must be safe for concurrent
	// use.
	OnRouteEvent func(RouteEvent)
}

// Engine runs items on routes. It is safe for one Run at a time; Stats may
// be called at any time.
type Engine struct {
	routes []Route
	policy Policy
	log    *slog.Logger
	opts   Options

	rngMu sync.Mutex
	rng   *rand.Rand

	runsMu sync.Mutex
	runs   []*runState // the Runs in progress, for Activity
}

// New checks the routes and policy and returns an Engine. Zero values of
// the Policy fields added with the resilience engine (MaxRetryAfter,
// MaxQueueWait, CooldownWaitMax, RetryBudgetMin, RetryBudgetRatio) take
// their DefaultPolicy values; negative ones mean none.
func New(routes []Route, p Policy, opts Options) (*Engine, error) {
	if len(routes) == 0 {
		return nil, errors.New("execution: no route configured")
	}
	if err := checkRoutes(routes, p); err != nil {
		return nil, err
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	p = p.withDefaults()
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rng := opts.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return &Engine{routes: slices.Clone(routes), policy: p, log: log, opts: opts, rng: rng}, nil
}

// checkRoutes is New's check of the routes (under policy p).
func checkRoutes(routes []Route, p Policy) error {
	names := map[string]bool{}
	for i, r := range routes {
		if r.Provider == nil {
			return fmt.Errorf("execution: route %d (%q) has no provider", i, r.Name)
		}
		if names[r.Name] {
			return fmt.Errorf("execution: route %d: duplicate name %q", i, r.Name)
		}
		names[r.Name] = true
		if r.MaxConcurrency < 0 || r.RequestTimeout < 0 || r.MinInterval < 0 || r.FirstTokenTimeout < 0 || r.IdleTimeout < 0 {
			return fmt.Errorf("execution: route %q: negative max concurrency, request timeout, min interval or stream timeout", r.Name)
		}
		if !finiteNonNegative(r.PriceInputPerMTok, r.PriceOutputPerMTok, r.PriceCachedInputPerMTok) {
			return fmt.Errorf("execution: route %q: prices must be finite numbers ≥ 0", r.Name)
		}
		if _, ok := r.Profile.Rules(); !ok && r.Profile != ProfileNone {
			return fmt.Errorf("execution: route %q: unknown profile %d", r.Name, int(r.Profile))
		}
		if r.RequestTimeout == 0 && p.RequestTimeout <= 0 {
			return fmt.Errorf("execution: route %q has no request timeout and the policy's is %s", r.Name, p.RequestTimeout)
		}
	}
	return nil
}

// finiteNonNegative reports whether every value is a finite number ≥ 0
// (not NaN, not infinite).
func finiteNonNegative(vs ...float64) bool {
	for _, v := range vs {
		if !(v >= 0) || math.IsInf(v, 1) {
			return false
		}
	}
	return true
}

// check is New's check of the policy's own values.
func (p Policy) check() error {
	if p.MaxConcurrency <= 0 {
		return fmt.Errorf("execution: max concurrency must be positive, got %d", p.MaxConcurrency)
	}
	switch {
	case p.Budget <= 0:
		return fmt.Errorf("execution: review budget must be positive, got %s", p.Budget)
	case p.ItemBudget <= 0:
		return fmt.Errorf("execution: item budget must be positive, got %s", p.ItemBudget)
	case p.MinAttempt < 0:
		return fmt.Errorf("execution: minimum attempt must not be negative, got %s", p.MinAttempt)
	case p.Reserve < 0 || p.Reserve >= p.Budget:
		return fmt.Errorf("execution: reserve must be in [0, budget %s), got %s", p.Budget, p.Reserve)
	case p.MaxRetriesPerRoute < 0:
		return fmt.Errorf("execution: retries per route must not be negative, got %d", p.MaxRetriesPerRoute)
	case p.Backoff < 0 || p.RateLimitBackoff < 0:
		return fmt.Errorf("execution: backoff (%s) and rate-limit backoff (%s) must not be negative", p.Backoff, p.RateLimitBackoff)
	case !(p.MaxCostUSD >= 0) || math.IsInf(p.MaxCostUSD, 1) || p.MaxTotalTokens < 0: // !(>=) also catches NaN
		return fmt.Errorf("execution: cost cap (%g USD) must be a finite number ≥ 0 and token cap (%d) not negative", p.MaxCostUSD, p.MaxTotalTokens)
	case math.IsNaN(p.RetryBudgetRatio) || math.IsInf(p.RetryBudgetRatio, 0):
		return fmt.Errorf("execution: retry budget ratio must be a finite number, got %g", p.RetryBudgetRatio)
	case p.OutagePatience < 0:
		return fmt.Errorf("execution: outage patience must not be negative, got %s", p.OutagePatience)
	}
	for i, d := range p.BackoffSchedule {
		if d < 0 {
			return fmt.Errorf("execution: backoff schedule step %d is negative: %s", i+1, d)
		}
	}
	return nil
}

// withDefaults is p with DefaultPolicy's values for its zero fields, and
// none (0) for its negative ones, where a negative value means none.
func (p Policy) withDefaults() Policy {
	d := DefaultPolicy()
	fill := func(v *time.Duration, def time.Duration) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0:
			*v = 0
		}
	}
	fill(&p.MaxRetryAfter, d.MaxRetryAfter)
	fill(&p.MaxQueueWait, d.MaxQueueWait)
	fill(&p.CooldownWaitMax, d.CooldownWaitMax)
	fill(&p.ProbeTimeout, d.ProbeTimeout)
	switch {
	case p.MaxRetriesPerItem == 0:
		p.MaxRetriesPerItem = d.MaxRetriesPerItem
	case p.MaxRetriesPerItem < 0:
		p.MaxRetriesPerItem = 0
	}
	switch {
	case p.RetryBudgetMin == 0:
		p.RetryBudgetMin = d.RetryBudgetMin
	case p.RetryBudgetMin < 0:
		p.RetryBudgetMin = 0
	}
	switch {
	case p.RetryBudgetRatio == 0:
		p.RetryBudgetRatio = d.RetryBudgetRatio
	case p.RetryBudgetRatio < 0:
		p.RetryBudgetRatio = 0
	}
	return p
}

// Routes returns the engine's routes, in failover order.
func (e *Engine) Routes() []Route { return e.routes }

// Policy returns the engine's policy.
func (e *Engine) Policy() Policy { return e.policy }

// Timeout returns the adaptive deadline a request would get on route r:
// the route's base (at least its profile's floor) scaled by the request's
// exact body (Measure).
func (e *Engine) Timeout(r Route, req *Request) (base, effective time.Duration, err error) {
	q := r.apply(*req)
	req = &q
	base = rulesFor(r, e.policy).base
	effective, err = EffectiveTimeout(base, RequestShape{
		BodyChars:       Measure(req, r),
		MaxTokens:       req.MaxTokens,
		Messages:        len(req.Messages),
		StrictSchema:    req.Schema != nil && req.Schema.Strict,
		ResponseHealing: r.ResponseHealing,
	})
	return base, effective, err
}

// Deadline is the deadline the first attempt of an item with request req
// really gets on its first route when the item starts with its whole
// ItemBudget (the review budget may clip it further): the adaptive
// deadline, clipped to the item budget less the room kept for one
// failover attempt on the next route. It is what the dry run and the
// report show.
func (e *Engine) Deadline(req *Request) (time.Duration, error) {
	_, eff, err := e.Timeout(e.routes[0], req)
	if err != nil {
		return 0, err
	}
	return e.FirstDeadline(eff), nil
}

// FirstDeadline is Deadline for a request whose adaptive deadline on the
// first route (Timeout) is effective.
func (e *Engine) FirstDeadline(effective time.Duration) time.Duration { return e.clip(0, effective) }

// clip holds an attempt deadline d on route i to what an item that starts
// with its whole budget can give it with one failover attempt kept.
func (e *Engine) clip(i int, d time.Duration) time.Duration {
	item := min(e.policy.ItemBudget, e.policy.Budget-e.policy.Reserve)
	var next *rules
	if i+1 < len(e.routes) {
		nr := rulesFor(e.routes[i+1], e.policy)
		next = &nr
	}
	return min(d, item-failoverReserve(rulesFor(e.routes[i], e.policy), next, item))
}

// RouteTimes is what the engine gives requests on one route, for the
// policy audit.
type RouteTimes struct {
	Base     time.Duration // base of the adaptive deadline (at least the profile's floor)
	Floor    time.Duration // the profile's floor; 0 without a profile
	Deadline time.Duration // what a request at every baseline gets as its first attempt here (Deadline's rule)
	Retries  int           // retries per (item, route): the profile's, else Policy.MaxRetriesPerRoute
	Window   time.Duration // the breaker's window
}

// RouteTimes returns the times of route i (in failover order).
func (e *Engine) RouteTimes(i int) RouteTimes {
	r := e.routes[i]
	ru := rulesFor(r, e.policy)
	return RouteTimes{Base: ru.base, Floor: ru.floor, Deadline: e.clip(i, ru.base), Retries: ru.retries, Window: e.policy.BreakerWindow(r)}
}

// BodyMeasurer is implemented by a Provider that knows the exact body it
// sends: BodyChars returns the number of characters (runes) of the
// serialized chat-completion body for req.
type BodyMeasurer interface {
	BodyChars(req *Request) int
}

// Measure is the length in characters of req's body as sent on route r:
// the Provider's own measure when it is a BodyMeasurer (the exact bytes it
// writes), else BodyChars.
func Measure(req *Request, r Route) int {
	if m, ok := r.Provider.(BodyMeasurer); ok {
		return m.BodyChars(req)
	}
	return BodyChars(req, r)
}

// apply returns req as sent on route r: the route's model and options, no
// Schema on a NoSchema route, and the streaming watchdogs left to the engine.
func (r Route) apply(req Request) Request {
	req.Model, req.ResponseHealing, req.Stream = r.Model, r.ResponseHealing, r.Stream
	req.FirstTokenTimeout, req.IdleTimeout = 0, 0
	if r.NoSchema {
		req.Schema = nil
	}
	return req
}

// BodyChars is the length in characters (runes) of req's chat-completion
// body in OpenAI's wire format as go-openai writes it ("stream" always
// present, HTML characters escaped), for Providers that cannot measure
// their own body (see Measure).
func BodyChars(req *Request, r Route) int {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	type schema struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema,omitempty"`
		Strict bool            `json:"strict"`
	}
	type format struct {
		Type       string  `json:"type"`
		JSONSchema *schema `json:"json_schema,omitempty"`
	}
	type plugin struct {
		ID string `json:"id"`
	}
	body := struct {
		Model          string    `json:"model"`
		Messages       []message `json:"messages"`
		MaxTokens      int       `json:"max_tokens,omitempty"`
		Temperature    float32   `json:"temperature,omitempty"`
		Stream         bool      `json:"stream"`
		ResponseFormat *format   `json:"response_format,omitempty"`
		Plugins        []plugin  `json:"plugins,omitempty"`
	}{Model: r.Model, MaxTokens: req.MaxTokens, Temperature: req.Temperature, Stream: r.Stream}
	for _, m := range req.Messages {
		body.Messages = append(body.Messages, message{m.Role, m.Content})
	}
	if req.Schema != nil {
		body.ResponseFormat = &format{Type: "json_schema", JSONSchema: &schema{req.Schema.Name, req.Schema.Schema, req.Schema.Strict}}
	}
	if r.ResponseHealing {
		body.Plugins = []plugin{{ID: "response-healing"}}
	}
	// Encode into a counter rather than Marshal: the encoder's buffer is
	// pooled, so a plan of many large prompts does not allocate a copy of
	// each body only to measure it. The length is json.Marshal's, in runes.
	var n runeCounter
	if err := json.NewEncoder(&n).Encode(body); err != nil { // only a malformed Schema.Schema can fail; count it as written
		n := 0
		for _, m := range req.Messages {
			n += utf8.RuneCountInString(m.Content)
		}
		return n + utf8.RuneCount(req.Schema.Schema)
	}
	return int(n) - 1 // Encode's trailing newline
}

// runeCounter is an io.Writer that counts the runes written to it. The
// JSON encoder writes the whole encoded value in one Write, so no UTF-8
// sequence is split across calls and the count is exact.
type runeCounter int

func (c *runeCounter) Write(b []byte) (int, error) {
	*c += runeCounter(utf8.RuneCount(b))
	return len(b), nil
}
