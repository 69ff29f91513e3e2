// Package execution runs model requests on routes and owns every rule about
// time and failure: the adaptive request deadline, the nested review, item
// and attempt budgets, the single retry owner, ordered failover, per-route
// bulkheads and circuit breakers, and the classification of every error into
// one Class.
//
// It knows nothing of findings, skills, hunks or GitHub: it runs Requests on
// Routes and reports what happened to each, attempt by attempt.
//
// # The rules (DESIGN.md §3, issue 3)
//
// Budgets are nested context deadlines. The review's work window is
// Policy.Budget − Policy.Reserve from the start of Run; an item starts only
// while at least Policy.MinAttempt of it is left (else it is skipped,
// ReasonBudget), in the order given, at most Policy.MaxConcurrency at once,
// and gets Policy.ItemBudget clipped to the window. Every item is eligible
// from the start: the next one is dispatched the moment a slot frees, and
// is checked against the budgets then.
//
// Spend caps (Policy.MaxCostUSD, MaxTotalTokens) are checked at the same
// moment: the spend of every sent attempt so far (Usage priced by
// Route.Cost, cached prompt tokens at the cached price), plus the
// estimates of the items in flight, plus the item's own estimate
// (Item.PromptTokens and Request.MaxTokens on the first route not
// disabled) must fit, else the item and every later one are skipped with
// ReasonBudgetCost or ReasonBudgetTokens. The engine counts tokens and
// dollars only; what an answer says is the caller's business. On a route, the first
// attempt opens a route request whose deadline is the adaptive timeout
// (EffectiveTimeout of the route's base, measured on the exact body: see
// Measure) clipped to the item's end less the room one failover attempt on
// the next usable route needs (failoverReserve); retries on that route
// share it, a failover opens a new one on the next route. The caller's
// context ends everything at once and is never extended.
//
// Route profiles (Route.Profile, ProfileRules) replace these rules on one
// route: a floor below which no attempt and no watchdog starts, each
// attempt its own deadline, a fixed retry schedule, pacing.
// Policy.Validate composes the time scales at load time; New does not call
// it.
//
// One retry owner: Providers never retry. A failed attempt is retried on the
// same route only for rate_limited, overloaded, server_error, connection
// and bad_response (and a 408 the server sent), at most
// Policy.MaxRetriesPerRoute times per (item, route) and
// Policy.MaxRetriesPerItem times per item across routes, only when the
// wait plus MinAttempt fits the route request's deadline (AC-07: the
// backoff stays inside one deadline), never after the attempt used more
// than half its deadline, and only while the review's retry budget,
// max(RetryBudgetMin, MaxConcurrency, ⌊RetryBudgetRatio × calls⌋), lasts
// (an unusable answer's retry is bounded by the breaker instead). The
// wait is full jitter U[0, Backoff·2^(n−1)) or the route's fixed schedule;
// a Retry-After lengthens it, never shortens it (plus U[0, min(1s, 10%))).
// A 429 waits its Retry-After (at most Policy.MaxRetryAfter, else it fails
// over) or RateLimitBackoff, and the route cools down until then for every
// item. Our own timeout is retried once, with a fresh deadline, only when
// the item's budget on the route still holds a whole one more after the
// backoff (seed 004: retry "only when enough budget remains"; a route with
// a fallback keeps that room for the failover). A profile route's retries
// follow its profile (its own timeout included).
//
// Failover, in route order, only for timeout, rate_limited, overloaded,
// server_error, connection and rejected (breaker open, cool-down, bulkhead
// full). Auth, payment and model_not_found disable the route for the rest
// of the Run and fail the item loudly (Result.Class says which) unless the
// route has FailoverOnAuth; bad_request and bad_response do not fail over.
// 401 and 403 are auth whatever the body's code says.
//
// Per route: a bulkhead (MaxConcurrency; wait Policy.MaxQueueWait, or as
// long as the item allows on the last usable route), optional pacing
// (MinInterval between request starts), and a rolling-window circuit
// breaker (BreakerSettings) whose permits carry a generation so that stale
// outcomes are ignored; outcomes count when they complete, unusable answers
// as failures. On a route with a fallback, the item that gets a half-open
// permit first sends a short identified health probe (KindProbe,
// Policy.ProbeTimeout, Route.ProbeProvider and ProbeModel); on the last
// usable route the trial call is the waiting item's own request, and an
// outage there costs time, not items, for Policy.OutagePatience (outage.go:
// items wait for the trials, as KindReadmit attempts once their retries
// are spent). Cancellations, 4xx, 429 and timeouts that our budget clipped
// below half their base never count against a route. Streaming routes get
// an idle watchdog, and a first-token watchdog only when the route sets
// one (StreamTimeouts), inside the attempt. Every wait wakes on a verdict
// that makes it pointless (the route disabled or down) and on the caller's
// context. Engine.Activity says what every item in flight is doing.
//
// Every attempt, sent or not, is an Attempt in its Result; Engine.RunStats sums
// them per route for the report (calls by outcome, duration and time to
// first token percentiles, failovers in and out, breaker openings, tokens)
// and OnRouteEvent reports breaker transitions, cool-downs and disabled
// routes as they happen.
//
// It must not import warden's review, hunks, skills, report or cmd packages,
// go-openai (confined to execution/openai) or go-github.
package execution
