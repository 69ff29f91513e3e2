package execution

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Route is one place a request can be sent: a base URL and a model, with its
// own concurrency cap and timeout. Routes are tried in the order given.
type Route struct {
	Name               string
	BaseURL            string // for reports and telemetry only; the Provider owns the connection
	Model              string
	Provider           Provider
	MaxConcurrency     int           // 0: the engine's MaxConcurrency
	RequestTimeout     time.Duration // base of the adaptive deadline; 0: Policy.RequestTimeout
	ResponseHealing    bool
	Stream             bool
	FailoverOnAuth     bool          // fail over (instead of failing loudly) on auth, payment, unknown model
	MinInterval        time.Duration // least time between two request starts on this route
	PriceInputPerMTok  float64
	PriceOutputPerMTok float64
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
	}
}

// Item is one unit of work: a request, plus a check of its answer.
type Item struct {
	Request *Request
	// Accept validates an answer. A non-nil error makes the attempt
	// ClassBadResponse (retried like any transient failure). Nil accepts all.
	Accept func(*Response) error
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

// Skip reasons.
const (
	ReasonBudget    = "budget"
	ReasonCancelled = "cancelled"
)

// AttemptKind says why an attempt was made.
type AttemptKind int

// The attempt kinds.
const (
	KindPrimary  AttemptKind = iota + 1 // the first attempt of an item
	KindRetry                           // again on the same route
	KindFailover                        // the next route
)

func (k AttemptKind) String() string {
	switch k {
	case KindPrimary:
		return "primary"
	case KindRetry:
		return "retry"
	case KindFailover:
		return "failover"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// MarshalText implements encoding.TextMarshaler.
func (k AttemptKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Attempt records one attempt on one route.
type Attempt struct {
	Route            string
	Model            string
	Kind             AttemptKind
	Start            time.Duration // since the review started
	TimeoutBase      time.Duration
	TimeoutEffective time.Duration // the adaptive deadline, before clipping
	Deadline         time.Duration // what the attempt was given after clipping to the item's time left
	ItemRemaining    time.Duration
	ReviewRemaining  time.Duration
	QueueWait        time.Duration
	FirstByte        time.Duration
	Duration         time.Duration
	Usage            Usage
	Class            Class
	Decision         string // what the engine did next: "done", "retry", "failover", "fail"
	Breaker          string // the route's breaker state at admission
	Err              error
}

// Result is what became of one item, with every attempt made for it.
type Result struct {
	Status   Status
	Class    Class  // StatusFailed: the class that ended the item
	Reason   string // StatusSkipped: ReasonBudget or ReasonCancelled
	Response *Response
	Route    string // the route that produced Response
	Attempts []Attempt
	Err      error // StatusFailed: the last real error
}

// Options are an Engine's collaborators; the zero value is usable.
type Options struct {
	Logger *slog.Logger // nil: discard
}

// Engine runs items on routes. It is safe for one Run at a time.
type Engine struct {
	routes []Route
	policy Policy
	log    *slog.Logger
}

// New checks the routes and policy and returns an Engine.
func New(routes []Route, p Policy, opts Options) (*Engine, error) {
	if len(routes) == 0 {
		return nil, errors.New("execution: no route configured")
	}
	for i, r := range routes {
		if r.Provider == nil {
			return nil, fmt.Errorf("execution: route %d (%q) has no provider", i, r.Name)
		}
	}
	if p.MaxConcurrency <= 0 {
		return nil, fmt.Errorf("execution: max concurrency must be positive, got %d", p.MaxConcurrency)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{routes: routes, policy: p, log: log}, nil
}

// Routes returns the engine's routes, in failover order.
func (e *Engine) Routes() []Route { return e.routes }

// Policy returns the engine's policy.
func (e *Engine) Policy() Policy { return e.policy }

// Timeout returns the adaptive deadline a request would get on route r.
func (e *Engine) Timeout(r Route, req *Request) (base, effective time.Duration, err error) {
	base = r.RequestTimeout
	if base == 0 {
		base = e.policy.RequestTimeout
	}
	effective, err = EffectiveTimeout(base, RequestShape{
		BodyChars:       BodyChars(req, r),
		MaxTokens:       req.MaxTokens,
		Messages:        len(req.Messages),
		StrictSchema:    req.Schema != nil && req.Schema.Strict,
		ResponseHealing: r.ResponseHealing,
	})
	return base, effective, err
}

// BodyChars is the length of req's chat-completion body as sent on route r
// (OpenAI's wire format), the input of the adaptive deadline.
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
		Stream         bool      `json:"stream,omitempty"`
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
	b, err := json.Marshal(body)
	if err != nil { // only a malformed Schema.Schema can fail; count it as written
		n := 0
		for _, m := range req.Messages {
			n += len(m.Content)
		}
		return n + len(req.Schema.Schema)
	}
	return len(b)
}
