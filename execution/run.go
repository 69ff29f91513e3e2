package execution

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/sourcegraph/conc/pool"
)

// runState is everything one Run (one review) shares between its items:
// the route states (breakers, cool-downs, disabled routes, bulkheads,
// pacing, statistics) and the review-wide retry budget.
type runState struct {
	start      time.Time
	minAttempt time.Duration // the least any route needs to start an attempt
	workEnd    time.Time     // start + Budget − Reserve: nothing runs past it
	routes     []*routeState

	mu      sync.Mutex
	calls   int // requests sent, for the retry budget
	retries int
	items   []*itemState // the items started and not yet ended, for Engine.Activity

	// The spend caps (Policy.MaxCostUSD, MaxTotalTokens), under mu.
	spent    spend  // sent attempts' usage
	reserved spend  // estimates of the items in flight
	capped   string // once set, the reason every later item is skipped
}

// spend is money and tokens, spent or estimated.
type spend struct {
	usd    float64
	tokens int
}

func (s spend) add(t spend) spend { return spend{s.usd + t.usd, s.tokens + t.tokens} }

// caps reports whether the policy caps the review's spend.
func (p Policy) caps() bool { return p.MaxCostUSD > 0 || p.MaxTotalTokens > 0 }

// estimate is what an item is expected to cost on the first route not
// disabled: its prompt estimate and its whole completion budget.
func (e *Engine) estimate(rs *runState, it Item) spend {
	if it.Request == nil {
		return spend{}
	}
	r := rs.routes[0]
	for _, c := range rs.routes {
		c.mu.Lock()
		d := c.disabled
		c.mu.Unlock()
		if !d {
			r = c
			break
		}
	}
	u := Usage{PromptTokens: it.PromptTokens(), CompletionTokens: max(it.Request.MaxTokens, 0)}
	return spend{usd: r.r.Cost(u), tokens: u.PromptTokens + u.CompletionTokens}
}

// reserve admits an item under the spend caps and holds its estimate until
// unreserve; or it returns the reason the item, and every item after it,
// is skipped.
func (e *Engine) reserve(rs *runState, it Item) (spend, string) {
	p := e.policy
	if !p.caps() {
		return spend{}, ""
	}
	est := e.estimate(rs, it)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	committed := rs.spent.add(rs.reserved).add(est)
	switch {
	case rs.capped != "":
	case p.MaxCostUSD > 0 && committed.usd > p.MaxCostUSD:
		rs.capped = ReasonBudgetCost
	case p.MaxTotalTokens > 0 && committed.tokens > p.MaxTotalTokens:
		rs.capped = ReasonBudgetTokens
	default:
		rs.reserved = rs.reserved.add(est)
		return est, ""
	}
	return spend{}, rs.capped
}

func (rs *runState) unreserve(est spend) {
	if est == (spend{}) {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.reserved = spend{rs.reserved.usd - est.usd, rs.reserved.tokens - est.tokens}
}

// charge adds a sent attempt's usage to the review's spend.
func (rs *runState) charge(cost float64, tokens int) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.spent = rs.spent.add(spend{cost, tokens})
}

// routeState is one route during one Run.
type routeState struct {
	r   Route
	ru  rules // the policy's or the route profile's rules
	idx int
	br  *breaker
	sem chan struct{} // the bulkhead: one token per call in flight

	mu            sync.Mutex
	cooldownUntil time.Time
	cooldownClass Class
	disabled      bool
	disabledClass Class
	disabledErr   error
	nextStart     time.Time // pacing: the earliest next request start
	// The concurrency limit after 429s (aimd.go): tokens of sem the
	// engine holds, tokens still to take, accepted answers since the last
	// change, and until when a 429 does not halve the limit again.
	parked, owed, okRun    int
	ceiling                int
	cutUntil, ceilingUntil time.Time
	lastOK                 time.Time // the last accepted answer
	// The route's outage (outage.go): when the first call that failed since
	// the last answer was sent (zero: none), and whether the route is down
	// for the output contract; sig is closed (and replaced) on every
	// verdict that can make a wait pointless.
	outageFrom   time.Time
	outageClass  Class // the class of the outage's latest failure
	contractDown bool
	sig          chan struct{}
	inflight     int
	unjudged     int           // calls sent whose verdict the route's outage has not yet recorded (observe)
	evidence     chan struct{} // closed (and replaced) on every verdict observe records
	stats        RouteStats    // counters only; Stats fills the rest
	durations    []time.Duration
	firstBytes   []time.Duration // of the sent calls that reported one
}

func (e *Engine) newRun(now time.Time) *runState {
	rs := &runState{start: now, workEnd: now.Add(e.policy.Budget - e.policy.Reserve)}
	for i, r := range e.routes {
		capacity := r.MaxConcurrency
		if capacity <= 0 {
			capacity = e.policy.MaxConcurrency
		}
		bs := r.Breaker
		if bs.Window <= 0 {
			bs.Window = e.policy.breakerWindow(r)
		}
		rs.routes = append(rs.routes, &routeState{
			r:        r,
			ru:       rulesFor(r, e.policy),
			idx:      i,
			br:       newBreaker(bs, time.Now, e.float64),
			sem:      make(chan struct{}, capacity),
			sig:      make(chan struct{}),
			evidence: make(chan struct{}),
		})
	}
	rs.minAttempt = rs.routes[0].ru.minAttempt
	for _, r := range rs.routes {
		rs.minAttempt = min(rs.minAttempt, r.ru.minAttempt)
	}
	return rs
}

// float64 draws from the engine's jitter source.
func (e *Engine) float64() float64 {
	e.rngMu.Lock()
	defer e.rngMu.Unlock()
	return e.rng.Float64()
}

// jitter returns a duration drawn uniformly from [0, d).
func (e *Engine) jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	e.rngMu.Lock()
	defer e.rngMu.Unlock()
	return time.Duration(e.rng.Int64N(int64(d)))
}

// backoff is the wait before retry n (1-based) on a route: the route's
// fixed schedule (its profile's, or the policy's) when it has one, else
// full jitter U[0, Backoff·2^(n-1)).
func (e *Engine) backoff(ru rules, n int) time.Duration {
	if s := ru.schedule; len(s) > 0 {
		return s[min(n, len(s))-1]
	}
	d := e.policy.Backoff
	for i := 1; i < n && i < 8; i++ {
		d *= 2
	}
	return e.jitter(d)
}

// takeRetry spends one retry of the review-wide budget,
// max(RetryBudgetMin, MaxConcurrency, ⌊RetryBudgetRatio × calls so far⌋),
// if any is left: one wave of items in flight can always retry once.
func (rs *runState) takeRetry(p Policy) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	allowed := max(p.RetryBudgetMin, p.MaxConcurrency, int(p.RetryBudgetRatio*float64(rs.calls)))
	if rs.retries >= allowed {
		return false
	}
	rs.retries++
	return true
}

// Run executes items and returns one Result per item, in the items' order.
//
// Items are started in the order given (callers put the most relevant
// first), at most Policy.MaxConcurrency at once: every item is eligible from
// the start, and the next one starts as soon as a slot is free. Each route
// further bounds its own calls (Route.MaxConcurrency). With a cost or
// token cap (Policy.MaxCostUSD, MaxTotalTokens), the first item whose
// estimate does not fit and every item after it are skipped with
// ReasonBudgetCost or ReasonBudgetTokens. The review's work window
// is Budget − Reserve from the call; an item starts only while at least
// MinAttempt of it is left (else it is skipped with ReasonBudget) and gets
// ItemBudget clipped to the window. When ctx ends, every attempt and wait
// stops at once: items not yet started are skipped with ReasonCancelled,
// items in flight end skipped with ReasonCancelled and keep their attempts,
// finished results are kept. A panic in one item (its Provider, its Accept
// or the engine) fails that item alone with a *PanicError.
//
// progress, when non-nil, is called after each item ends; calls are
// serialized. Run returns only when every goroutine it started has ended.
func (e *Engine) Run(ctx context.Context, items []Item, progress func(done, total int)) []Result {
	results, _ := e.RunStats(ctx, items, progress)
	return results
}

// RunStats is Run, and returns the route stats of this run too, one
// RouteStats per route in failover order: the engine keeps no "last run", so
// those of a concurrent or later Run cannot mix in.
func (e *Engine) RunStats(ctx context.Context, items []Item, progress func(done, total int)) ([]Result, []RouteStats) {
	rs := e.newRun(time.Now())
	defer e.register(rs)()
	results := make([]Result, len(items))
	workCtx, cancel := context.WithDeadline(ctx, rs.workEnd)
	defer cancel()

	var mu sync.Mutex
	finished := 0
	report := func() {
		if progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		finished++
		progress(finished, len(items))
	}
	func() {
		bound := max(1, min(e.policy.MaxConcurrency, len(items)))
		p := pool.New().WithMaxGoroutines(bound)
		defer p.Wait()
		// An item is dispatched when a slot is free, in the order given,
		// and checked against the budgets and caps at that moment, with the
		// spend of everything that ended before it.
		slots := make(chan struct{}, bound)
		for i := range items {
			slots <- struct{}{} // items in flight always end: their budgets and ctx bound them
			res, skip := e.cannotStart(ctx, rs)
			var est spend
			if !skip {
				var reason string
				if est, reason = e.reserve(rs, items[i]); reason != "" {
					res, skip = Result{Status: StatusSkipped, Reason: reason}, true
				}
			}
			if skip {
				results[i] = res
				report()
				<-slots
				continue
			}
			p.Go(func() {
				defer func() {
					rs.unreserve(est)
					report()
					<-slots
				}()
				results[i] = e.runItemSafe(ctx, workCtx, rs, i, items[i])
			})
		}
	}()
	return results, e.statsOf(rs)
}

// cannotStart reports whether an item must be skipped rather than started.
func (e *Engine) cannotStart(ctx context.Context, rs *runState) (Result, bool) {
	if ctx.Err() != nil {
		return Result{Status: StatusSkipped, Class: ClassCancelled, Reason: ReasonCancelled}, true
	}
	if left := rs.workEnd.Sub(time.Now()); left <= 0 || left < rs.minAttempt {
		return Result{Status: StatusSkipped, Reason: ReasonBudget}, true
	}
	return Result{}, false
}

// runItemSafe runs one item and turns a panic into that item's failure.
func (e *Engine) runItemSafe(caller, work context.Context, rs *runState, index int, it Item) (res Result) {
	st := &itemState{rs: rs, item: it, lastSent: -1, lastReject: -1, log: e.log, index: index}
	rs.live(st)
	defer rs.ended(st)
	defer func() {
		if v := recover(); v != nil {
			err := &PanicError{Value: v, Stack: debug.Stack()}
			e.log.Error("item panicked", "err", err)
			res = Result{Status: StatusFailed, Class: ClassUnknown, Err: err, Attempts: st.attempts, Start: st.start.Sub(rs.start), Duration: time.Since(st.start)}
		}
	}()
	return e.runItem(caller, work, st)
}

// itemState is one item's progress through its routes.
type itemState struct {
	rs       *runState
	item     Item
	start    time.Time
	end      time.Time // the item's deadline: start + ItemBudget, clipped to the review's work window
	attempts []Attempt

	retries    int   // retries made on routes without a profile (Policy.MaxRetriesPerItem)
	lastSent   int   // index in attempts of the last attempt sent; -1: none
	lastReject int   // index in attempts of the last rejected attempt; -1: none
	rejectCls  Class // the class the last rejection stands for (auth for a disabled route, ...)
	// window, after a route refused the request as too long for its
	// context, is that route's ContextWindow: only a route with a larger
	// one is tried next (Route.ContextWindow).
	window int
	log    *slog.Logger
	index  int   // in the Run's items
	doing  doing // what it does now, for Engine.Activity
}

// outcome is what an item does after a route.
type outcome int

const (
	outDone     outcome = iota + 1 // accepted answer
	outFailover                    // try the next route
	outFail                        // the item failed
	outStop                        // the caller or a budget ended the item
)

func (e *Engine) runItem(caller, work context.Context, st *itemState) (res Result) {
	rs := st.rs
	st.start = time.Now()
	if res, skip := e.cannotStart(caller, rs); skip {
		return res
	}
	st.end = st.start.Add(e.policy.ItemBudget)
	if st.end.After(rs.workEnd) {
		st.end = rs.workEnd
	}
	res.Start = st.start.Sub(rs.start)
	defer func() { res.Duration = time.Since(st.start) }()
	if st.item.Request == nil {
		res.Status, res.Class, res.Err = StatusFailed, ClassBadRequest, errors.New("execution: item has no request")
		return res
	}
	itemCtx, cancel := context.WithDeadline(work, st.end)
	defer cancel()

	var out outcome
	var resp *Response
	for ri := range rs.routes {
		if st.window > 0 && rs.routes[ri].r.ContextWindow <= st.window {
			continue // too small for a request a larger context refused
		}
		if e.tooLongFor(st, ri) {
			continue
		}
		out, resp = e.tryRoute(caller, itemCtx, st, ri)
		if out != outFailover {
			break
		}
	}
	res.Attempts = st.attempts
	switch {
	case out == outDone:
		res.Status, res.Class, res.Response, res.Route = StatusDone, ClassSuccess, resp, st.attempts[st.lastSent].Route
		return res
	case caller.Err() != nil:
		res.Status, res.Class, res.Reason = StatusSkipped, ClassCancelled, ReasonCancelled
		if st.lastSent >= 0 {
			res.Err = st.attempts[st.lastSent].Err
		}
		return res
	}
	res.Status = StatusFailed
	if out == outStop && !time.Now().Before(rs.workEnd) {
		res.Reason = ReasonBudget
	}
	// The class that ended the item: the last attempt sent, unless a later
	// rejection says more (a disabled route's auth, a cool-down's rate limit).
	switch {
	case st.lastSent >= 0 && (st.lastReject < st.lastSent || st.rejectCls == ClassRejected || st.rejectCls == ClassCancelled):
		a := st.attempts[st.lastSent]
		res.Class, res.Err = a.Class, a.Err
		if res.Class == ClassCancelled { // the review budget cut it, not the caller
			res.Class = ClassTimeout
		}
		if st.lastReject > st.lastSent {
			res.Reason = cmp.Or(res.Reason, st.attempts[st.lastReject].Reason)
		}
	case st.lastReject >= 0:
		a := st.attempts[st.lastReject]
		res.Class, res.Err, res.Reason = st.rejectCls, a.Err, cmp.Or(res.Reason, a.Reason)
		if res.Class == ClassCancelled {
			res.Class = ClassTimeout
		}
		if st.lastSent >= 0 && st.attempts[st.lastSent].Class == res.Class {
			res.Err = st.attempts[st.lastSent].Err // the route given up for what this item's call met: that error is the real one
		}
	default:
		res.Class, res.Err = ClassTimeout, context.Cause(itemCtx)
	}
	return res
}

// TimeoutError is a sent attempt's error when it ran out of time: its
// deadline, a streaming watchdog, or the item or review budget. It states
// the base and the effective timeout in milliseconds; errors.Is still finds
// the cause (context.DeadlineExceeded, ErrFirstTokenTimeout,
// ErrIdleTimeout).
type TimeoutError struct {
	Route     string
	Base      time.Duration // the route's base request timeout
	Effective time.Duration // the adaptive deadline
	Deadline  time.Duration // what the attempt was given after clipping
	Elapsed   time.Duration
	Err       error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("route %s: no answer after %d ms (timeout base %d ms, effective %d ms, given %d ms): %v",
		e.Route, e.Elapsed.Milliseconds(), e.Base.Milliseconds(), e.Effective.Milliseconds(), e.Deadline.Milliseconds(), e.Err)
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// Class returns ClassTimeout, for Classify.
func (e *TimeoutError) Class() Class { return ClassTimeout }

// rejection is an attempt the engine decided not to send. It implements
// Class so that Classify reads it as ClassRejected.
type rejection struct {
	route  string
	reason string
	cause  error
}

func (r *rejection) Error() string {
	if r.cause != nil {
		return fmt.Sprintf("route %s not tried: %s: %v", r.route, r.reason, r.cause)
	}
	return fmt.Sprintf("route %s not tried: %s", r.route, r.reason)
}

func (r *rejection) Unwrap() error { return r.cause }

// Class returns ClassRejected.
func (r *rejection) Class() Class { return ClassRejected }

// tryRoute runs the item on route ri: the first attempt, then its retries,
// and on the last usable route its readmissions after an outage
// (outage.go). Under the review plan's rules the retries share the route
// request's deadline (the backoff stays inside it, AC-07), except that a
// retry of our own timeout, and an attempt the route's breaker held, start
// a fresh deadline inside the item's budget; on a profile route each
// attempt has its own. It appends every attempt to st.
func (e *Engine) tryRoute(caller, itemCtx context.Context, st *itemState, ri int) (outcome, *Response) {
	rs := st.rs
	r := rs.routes[ri]
	ru := r.ru
	last := rs.nextUsable(ri) == nil
	req := r.r.apply(*st.item.Request)
	base, eff, terr := e.Timeout(r.r, &req)

	// What this route may use: the item's end, less the room one failover
	// attempt on the next usable route needs.
	routeLimit := st.end
	if next := rs.nextUsable(ri); next != nil {
		routeLimit = st.end.Add(-failoverReserve(ru, &next.ru, time.Until(st.end)))
	}

	kind := KindFailover
	if len(st.attempts) == 0 {
		kind = KindPrimary
	}
	var (
		routeEnd time.Time // the route request's deadline, shared by retries (not on a profile route)
		retries  int
		wait     time.Duration // backoff before this attempt
	)
	for {
		a := Attempt{
			Route: r.r.Name, Model: r.r.Model, Kind: kind, Number: len(st.attempts) + 1,
			TimeoutBase: base, TimeoutEffective: eff, Backoff: wait,
		}
		if terr != nil {
			a.Class, a.Err, a.Decision, a.Start = ClassBadRequest, terr, DecisionFail, time.Since(rs.start)
			st.record(a)
			return outFail, nil
		}
		// The wait for the route (its breaker, a cool-down, its bulkhead)
		// is bounded by the shared deadline, except on the last usable
		// route, where the item waits for it as long as its budget allows.
		limit := routeLimit
		if !routeEnd.IsZero() && !last && !ru.perAttempt {
			limit = routeEnd
		}
		st.waiting(r, "route")
		adm, rej := e.admit(itemCtx, rs, r, limit, last, kind == KindRetry)
		for _, pa := range adm.probes {
			pa.Number = len(st.attempts) + 1
			st.record(pa)
			a.Number = len(st.attempts) + 1
		}
		if rej != nil {
			a.Start, a.Class, a.Reason, a.Err, a.QueueWait = time.Since(rs.start), ClassRejected, rej.reason, rej, adm.queueWait
			a.Breaker = adm.state.String()
			r.count(func(s *RouteStats) { s.Rejected++ })
			return e.afterReject(caller, itemCtx, st, r, a, rej), nil
		}

		// Send.
		sendAt := time.Now()
		if ru.perAttempt || routeEnd.IsZero() || adm.held || routeEnd.Sub(sendAt) < ru.minAttempt {
			routeEnd = sendAt.Add(eff)
			if routeEnd.After(routeLimit) {
				routeEnd = routeLimit
			}
		}
		a.Start = sendAt.Sub(rs.start)
		a.QueueWait, a.Breaker = adm.queueWait, adm.state.String()
		a.Deadline = routeEnd.Sub(sendAt)
		a.ItemRemaining, a.ReviewRemaining = st.end.Sub(sendAt), rs.workEnd.Sub(sendAt)
		if r.r.Stream {
			req.FirstTokenTimeout, req.IdleTimeout = e.streamTimeouts(r.r, Measure(&req, r.r), a.Deadline)
			a.FirstTokenTimeout, a.IdleTimeout = req.FirstTokenTimeout, req.IdleTimeout
		}
		rs.mu.Lock()
		rs.calls++
		rs.mu.Unlock()
		st.sending(r, kind, a.Deadline)
		resp, err := e.send(itemCtx, r, &req, routeEnd, st.item.Accept)
		a.Duration = time.Since(sendAt)
		if resp != nil {
			a.Usage, a.FirstByte, a.ResponseModel = resp.Usage, resp.FirstByte, resp.Model
		}
		e.chargeAttempt(st, r, &req, resp, err, a.Usage)
		a.Class, a.Err = e.classifyAttempt(caller, itemCtx, err)
		if a.Class == ClassTimeout && !serverTimeout(a.Err) {
			a.Err = &TimeoutError{Route: r.r.Name, Base: base, Effective: eff, Deadline: a.Deadline, Elapsed: a.Duration, Err: a.Err}
		}
		// A timeout says the route is slow unless our budget left it less
		// than half its base deadline.
		v := verdictOf(a.Class, a.Err, a.Deadline < base/2)
		contract := adm.trial && v == verdictUnusable && r.br.unusableOnly()
		e.emitBreaker(r, r.br.done(adm.permit, v))
		r.observe(sendAt, v, a.Class, contract, true)
		r.release() // the slot frees only once the breaker has the verdict
		r.finish(a, kind == KindRetry)

		// Decide.
		switch {
		case a.Class == ClassSuccess:
			a.Decision = DecisionDone
			r.accepted(time.Now())
			st.record(a)
			return outDone, resp
		case caller.Err() != nil:
			a.Class, a.Decision, a.Reason = ClassCancelled, DecisionStop, ReasonCancelled
			st.record(a)
			return outStop, nil
		case itemCtx.Err() != nil || !time.Now().Before(st.end):
			a.Decision, a.Reason = DecisionStop, ReasonBudget
			if !time.Now().Before(st.end) && st.end.Before(rs.workEnd) {
				a.Decision = DecisionFail // the item's own budget, not the review's
			}
			st.record(a)
			if a.Decision == DecisionFail {
				return outFail, nil
			}
			return outStop, nil
		case isPanic(a.Err):
			a.Decision = DecisionFail
			st.record(a)
			return outFail, nil
		case a.Class == ClassAuth || a.Class == ClassPayment || a.Class == ClassModelNotFound:
			e.disable(r, a.Class, a.Err)
			a.Reason = ReasonConfig
			if r.r.FailoverOnAuth && !last {
				a.Decision = DecisionFailover
				st.record(a)
				return outFailover, nil
			}
			a.Decision = DecisionFail
			st.record(a)
			return outFail, nil
		}

		next, fresh, retry := e.retryDecision(st, r, &a, retries, eff, routeEnd, routeLimit)
		switch {
		case retry:
			a.Decision = DecisionRetry
		case last && e.readmits(itemCtx, r, v, next, routeLimit):
			// The route is in an outage: wait for its next trial call
			// rather than fail (outage.go).
			a.Decision, kind, fresh = DecisionWait, KindReadmit, true
		default:
			return e.leaveRoute(st, r, ri, a), nil
		}
		st.record(a)
		st.waiting(r, WaitBackoff)
		if !e.backoffWait(itemCtx, r, next) {
			return outStop, nil
		}
		if retry {
			retries++
			if !ru.profile {
				st.retries++
			}
			kind = KindRetry
		}
		if fresh {
			routeEnd = time.Time{}
		}
		wait = next
	}
}

// chargeAttempt adds a sent attempt's spend to the review's, under a cap:
// its usage, or its estimate for an answer that reports none, so that a
// provider that reports none cannot run past a cap.
func (e *Engine) chargeAttempt(st *itemState, r *routeState, req *Request, resp *Response, err error, u Usage) {
	if !e.policy.caps() {
		return
	}
	if resp != nil && err == nil && u.PromptTokens == 0 && u.CompletionTokens == 0 {
		u = Usage{PromptTokens: st.item.PromptTokens(), CompletionTokens: max(req.MaxTokens, 0)}
	}
	st.rs.charge(r.r.Cost(u), u.PromptTokens+u.CompletionTokens)
}

// classifyAttempt is the class of a sent attempt's error: a panic is
// ClassUnknown; an error Classify does not know, once the item's own
// deadline passed, is a timeout.
func (e *Engine) classifyAttempt(caller, itemCtx context.Context, err error) (Class, error) {
	switch {
	case err == nil:
		return ClassSuccess, nil
	case isPanic(err):
		return ClassUnknown, err
	}
	c := Classify(caller, err)
	if c == ClassUnknown && itemCtx.Err() != nil {
		c = ClassTimeout
	}
	return c, err
}

// isPanic reports an error that is a recovered panic (*PanicError).
func isPanic(err error) bool {
	var pe *PanicError
	return errors.As(err, &pe)
}

// serverTimeout reports a 408 the server sent (it answered), as opposed to
// our own deadline or watchdog.
func serverTimeout(err error) bool {
	var pe *ProviderError
	return errors.As(err, &pe) && pe.Status == http.StatusRequestTimeout
}

// retryDecision decides whether a failed attempt a on route r is retried on
// the same route, and sets a.Reason when it is not. It returns the wait
// before the next attempt (the backoff, lengthened by a Retry-After, or a
// 429's wait), whether that attempt starts a fresh route request, and
// whether it is a retry. It also cools the route down after a 429 or a
// Retry-After, and cuts its concurrency after a 429.
//
// A retry of our own timeout (seed 004: retry "only when enough budget
// remains") starts a fresh deadline and needs the item's budget on this
// route to hold a whole one more (a profile route: its floor) after the
// backoff; AC-07's shared deadline bounds the backoff of every other retry.
func (e *Engine) retryDecision(st *itemState, r *routeState, a *Attempt, retries int, eff time.Duration, routeEnd, routeLimit time.Time) (next time.Duration, fresh, retry bool) {
	ru := r.ru
	now := time.Now()
	next, ra, hasRA := e.waitAfter(r, a, retries, now)
	ownTimeout := a.Class == ClassTimeout && !serverTimeout(a.Err)
	if !retryable(a.Class, a.Err) && !ownTimeout {
		a.Reason = ReasonNotRetryable
		return next, false, false
	}
	fitsBy, need := routeEnd, ru.minAttempt // retries share the route request's deadline
	switch {
	case ru.perAttempt:
		fitsBy = routeLimit // each retry gets its own, inside the item
	case ownTimeout:
		fitsBy, need = routeLimit, eff // a whole new deadline, inside the item
	}
	switch {
	case retries >= ru.retries:
		a.Reason = ReasonRetryCap
	case !ru.profile && st.retries >= e.policy.MaxRetriesPerItem:
		a.Reason = ReasonItemRetries
	case !ru.profile && hasRA && ra > e.policy.MaxRetryAfter:
		a.Reason = ReasonRetryAfter
	case !ru.profile && !ownTimeout && a.Duration*2 > a.Deadline:
		a.Reason = ReasonDeadlineUsed
	case now.Add(next + need).After(fitsBy):
		a.Reason = ReasonBudget
	case !ru.profile && a.Class != ClassBadResponse && !st.rs.takeRetry(e.policy):
		// The retry budget bounds retries of the route's failures; an
		// unusable answer's retry is bounded by the breaker, which opens
		// on unusable answers, and by the item's own one retry.
		a.Reason = ReasonRetryBudget
	default:
		return next, ownTimeout, true
	}
	return next, false, false
}

// waitAfter is the wait before the next attempt after failed attempt a on
// route r (retries made there so far): the route's backoff, lengthened by
// the server's Retry-After (never shortened), or a 429's Retry-After, else
// the route's rate-limit backoff. It records the Retry-After in a, cools
// the route down after a 429 or a Retry-After, and cuts its concurrency
// after a 429. ra and hasRA are the server's Retry-After.
func (e *Engine) waitAfter(r *routeState, a *Attempt, retries int, now time.Time) (next, ra time.Duration, hasRA bool) {
	ra, hasRA = retryAfter(a.Err, now)
	limited := a.Class == ClassRateLimited
	wra := ra
	if hasRA {
		a.RetryAfter = ra // the server's; a 429 without one leaves it 0
	} else if limited {
		wra = r.ru.rateLimit
	}
	if hasRA || limited {
		e.coolDown(r, wra, a.Class)
	}
	if limited {
		r.rateLimited(now, wra) // too many in flight, perhaps: halve the route's concurrency
	}
	next = e.backoff(r.ru, retries+1)
	if hasRA || limited {
		// A Retry-After may lengthen the wait, never shorten it.
		j := wra + e.jitter(min(time.Second, wra/10))
		if limited {
			next = j
		} else {
			next = max(next, j)
		}
	}
	return next, ra, hasRA
}

// leaveRoute records a failed attempt a that is neither retried nor
// readmitted and says what the item does: fail over to the next route or
// fail.
func (e *Engine) leaveRoute(st *itemState, r *routeState, ri int, a Attempt) outcome {
	rs := st.rs
	switch {
	case a.Class == ClassBadRequest && isContextLength(a.Err) && rs.largerAfter(ri):
		a.Decision, st.window = DecisionFailover, max(r.r.ContextWindow, 1)
	case !failsOver(a.Class):
		a.Decision, a.Reason = DecisionFail, ReasonNoFailover
	case ri == len(rs.routes)-1:
		a.Decision, a.Reason = DecisionFail, cmp.Or(a.Reason, ReasonNoRoute)
	default:
		a.Decision = DecisionFailover
	}
	st.record(a)
	if a.Decision == DecisionFail {
		return outFail
	}
	return outFailover
}

// afterReject records a rejected attempt and decides what the item does.
func (e *Engine) afterReject(caller, itemCtx context.Context, st *itemState, r *routeState, a Attempt, rej *rejection) outcome {
	st.rejectCls = ClassRejected
	switch rej.reason {
	case ReasonDisabled:
		r.mu.Lock()
		st.rejectCls = r.disabledClass
		r.mu.Unlock()
	case ReasonCooldown:
		r.mu.Lock()
		st.rejectCls = r.cooldownClass
		r.mu.Unlock()
	case ReasonCancelled:
		st.rejectCls = ClassCancelled
	case ReasonUnresponsive, ReasonContract:
		// A route down (outage.go) stands for its outage's class: what
		// its calls and trials kept failing with.
		r.mu.Lock()
		if r.outageClass != ClassUnknown {
			st.rejectCls = r.outageClass
		}
		r.mu.Unlock()
	}
	out := outFailover
	switch {
	case caller.Err() != nil:
		a.Decision, a.Reason = DecisionStop, ReasonCancelled
		out = outStop
	case itemCtx.Err() != nil || !time.Now().Before(st.end):
		a.Decision, a.Reason = DecisionStop, ReasonBudget
		out = outStop
	case rej.reason == ReasonDisabled && !r.r.FailoverOnAuth:
		a.Decision = DecisionFail
		out = outFail
	case rej.reason == ReasonBudget && time.Until(st.end) < e.policy.MinAttempt:
		a.Decision = DecisionFail
		out = outFail
	case r.idx == len(st.rs.routes)-1:
		a.Decision = DecisionFail
		out = outFail
	default:
		a.Decision = DecisionFailover
	}
	st.record(a)
	return out
}

// record keeps a finished attempt, with its decision, and logs it: one Info
// line per attempt, sent or rejected (what `warden review -v` shows).
func (st *itemState) record(a Attempt) {
	attrs := []any{"route", a.Route, "model", a.Model, "attempt", a.Number, "kind", a.Kind.String(),
		"deadline", a.Deadline, "duration", a.Duration, "class", a.Class.String(),
		"decision", a.Decision, "reason", a.Reason, "breaker", a.Breaker}
	if a.Err != nil && a.Class != ClassRejected {
		attrs = append(attrs, "err", a.Err) // providers redact what they put in errors
	}
	st.log.Info("attempt", attrs...)
	st.attempts = append(st.attempts, a)
	if a.Class == ClassRejected {
		st.lastReject = len(st.attempts) - 1
	} else {
		st.lastSent = len(st.attempts) - 1
	}
	// Failovers, counted where every attempt passes: out of this route
	// when the engine moves on, into it when the item arrives.
	if a.Kind == KindFailover || a.Decision == DecisionFailover {
		for _, r := range st.rs.routes {
			if r.r.Name == a.Route {
				r.count(func(s *RouteStats) {
					if a.Kind == KindFailover {
						s.FailoversIn++
					}
					if a.Decision == DecisionFailover {
						s.FailoversOut++
					}
				})
				break
			}
		}
	}
}

// nextUsable returns the first route after ri that is not disabled, or nil.
func (rs *runState) nextUsable(ri int) *routeState { return rs.nextWith(ri, 0) }

// largerAfter reports whether a usable route after ri has a larger known
// context window than route ri.
func (rs *runState) largerAfter(ri int) bool {
	return rs.nextWith(ri, rs.routes[ri].r.ContextWindow+1) != nil
}

// nextWith returns the first route after ri that is not disabled and whose
// context window is at least window (0: any route), or nil.
func (rs *runState) nextWith(ri, window int) *routeState {
	for _, r := range rs.routes[ri+1:] {
		r.mu.Lock()
		d := r.disabled
		r.mu.Unlock()
		if !d && (window == 0 || r.r.ContextWindow >= window) {
			return r
		}
	}
	return nil
}

// tooLongFor reports, and records as an attempt not sent, that the item's
// request cannot fit route ri's known context window while a later route's
// larger one may: its prompt at four characters a token (fewer tokens than
// code has, so a request this test refuses is surely too long) plus its
// max_tokens. A request it lets through may still be refused, and then
// fails over as refused (isContextLength).
func (e *Engine) tooLongFor(st *itemState, ri int) bool {
	r := st.rs.routes[ri]
	w := r.r.ContextWindow
	if w <= 0 || !st.rs.largerAfter(ri) {
		return false
	}
	req := r.r.apply(*st.item.Request)
	need := Measure(&req, r.r)/4 + max(req.MaxTokens, 0)
	if need <= w {
		return false
	}
	kind := KindFailover
	if len(st.attempts) == 0 {
		kind = KindPrimary
	}
	rej := &rejection{route: r.r.Name, reason: ReasonContextWindow,
		cause: fmt.Errorf("the request needs about %d tokens, the route's context_window is %d", need, w)}
	st.record(Attempt{Route: r.r.Name, Model: r.r.Model, Kind: kind, Number: len(st.attempts) + 1, Start: time.Since(st.rs.start),
		Class: ClassRejected, Reason: ReasonContextWindow, Err: rej, Decision: DecisionFailover})
	r.count(func(s *RouteStats) { s.Rejected++ })
	return true
}

// admission is the right to send one attempt on a route: a bulkhead slot
// and a breaker permit, and the health probes sent on the way.
type admission struct {
	permit    permit
	state     BreakerState
	queueWait time.Duration
	probes    []Attempt // KindProbe attempts made while admitting
	// trial: the permit makes the attempt the half-open breaker's trial
	// call (on the last usable route); held: the item waited for the
	// route's breaker, so the attempt starts a fresh deadline.
	trial, held bool
}

// admit waits for the route (cool-down, breaker, bulkhead, pacing) and
// takes a breaker permit. limit is the time by which the route's minimum
// attempt must still fit. It returns a rejection when the route cannot
// take the attempt in time; on success the caller owns one bulkhead slot,
// which it releases once the attempt's verdict is recorded. Every wait
// wakes on a verdict that makes it pointless (the route disabled or down)
// and on the caller's context.
//
// A route with a fallback is not waited for when its breaker is open: the
// item fails over; when it is half-open, the item first sends the engine's
// short health probe (probe) and its own request only if the probe closes
// the breaker. On the last usable route an open breaker is waited out
// while the item's time and the route's outage patience allow (outage.go),
// and the half-open breaker's trial call is the waiting item's own
// request.
func (e *Engine) admit(ctx context.Context, rs *runState, r *routeState, limit time.Time, last, retry bool) (admission, *rejection) {
	t0 := time.Now()
	var adm admission
	reject := func(reason string, cause error) (admission, *rejection) {
		adm.queueWait = time.Since(t0)
		return adm, &rejection{route: r.r.Name, reason: reason, cause: cause}
	}
	minAttempt := r.ru.minAttempt
	for {
		if ctx.Err() != nil {
			return reject(ReasonCancelled, context.Cause(ctx))
		}
		now := time.Now()
		ws := e.waitState(r, now)
		r.mu.Lock()
		derr, until := r.disabledErr, r.cooldownUntil
		r.mu.Unlock()
		if ws.disabled {
			return reject(ReasonDisabled, derr)
		}
		room := limit.Sub(now) - minAttempt // what may still be spent waiting
		if room < 0 || limit.Sub(now) <= 0 {
			return reject(ReasonBudget, nil)
		}
		if wait := until.Sub(now); wait > 0 {
			if (wait > e.policy.CooldownWaitMax && !last) || wait > room {
				return reject(ReasonCooldown, nil)
			}
			if !pause(ctx, wait, ws.sig, nil) {
				return reject(ReasonCancelled, context.Cause(ctx))
			}
			continue
		}
		bv, tr := r.br.view(retry)
		e.emitBreaker(r, tr)
		adm.state = bv.state
		down := ws.down && bv.state != BreakerClosed
		if bv.state == BreakerOpen || bv.busy || (last && down) {
			if rej := breakerReason(bv, last, down); rej != "" {
				if rej == ReasonUnresponsive && ws.contract {
					rej = ReasonContract
				}
				return reject(rej, nil)
			}
			switch waitBreaker(ctx, bv, room, ws) {
			case waitCancelled:
				return reject(ReasonCancelled, context.Cause(ctx))
			case waitTooLong:
				return reject(breakerReason(bv, false, false), nil)
			case waitDown:
				if ws.contract {
					return reject(ReasonContract, nil)
				}
				return reject(ReasonUnresponsive, nil)
			}
			adm.held = true
			continue
		}

		// Bulkhead.
		qmax := room
		if !last {
			qmax = min(qmax, e.policy.MaxQueueWait)
		}
		switch acquire(ctx, r.sem, qmax, ws.sig) {
		case acquireCancelled:
			return reject(ReasonCancelled, context.Cause(ctx))
		case acquireTimedOut:
			return reject(ReasonBulkheadFull, nil)
		case acquireWoken:
			continue // a verdict on the route: look again
		}

		// Pacing.
		if ok, cancelled := e.pace(ctx, r, limit, minAttempt); cancelled {
			r.release()
			return reject(ReasonCancelled, context.Cause(ctx))
		} else if !ok {
			r.release()
			return reject(ReasonBudget, nil)
		}

		// The route may have changed while we waited.
		r.mu.Lock()
		disabled, until := r.disabled, r.cooldownUntil
		r.mu.Unlock()
		if now := time.Now(); disabled || until.After(now) || limit.Sub(now) < minAttempt || (last && e.isDown(r, now)) {
			r.release()
			continue
		}
		p, bst, tr, err := r.br.allow(retry)
		e.emitBreaker(r, tr)
		adm.state = bst
		if err != nil {
			r.release()
			if last {
				continue // wait for the breaker above, if the item's time allows
			}
			reason := ReasonCircuitOpen
			if errors.Is(err, errHalfOpenBusy) {
				reason = ReasonHalfOpenBusy
			}
			return reject(reason, nil)
		}
		switch {
		case p.probe && (last || retry):
			adm.trial = true // the item's own request is the trial call
		case p.probe:
			adm.probes = append(adm.probes, e.probe(ctx, rs, r, p, limit))
			r.release()
			continue // closed: take a regular permit; open: fail over
		}
		adm.permit = p
		adm.queueWait = time.Since(t0)
		return adm, nil
	}
}

// breakerReason is why an item does not wait for a route whose breaker is
// open or busy ("" when it waits: the last usable route, not down): the
// route is down or its last probe failed, its breaker is open, or its
// half-open slot is taken.
func breakerReason(bv breakerView, last, down bool) string {
	switch {
	case last && down:
		return ReasonUnresponsive
	case last:
		return ""
	case bv.unresponsive && bv.state == BreakerOpen:
		return ReasonUnresponsive
	case bv.busy:
		return ReasonHalfOpenBusy
	}
	return ReasonCircuitOpen
}

// pace waits for the route's next request start (MinInterval between
// starts) and takes it, waking early only when a verdict makes the wait
// pointless (the route disabled or down: the caller's re-check sees it).
// ok is false when the start would leave less than minAttempt before
// limit; cancelled when ctx ended.
func (e *Engine) pace(ctx context.Context, r *routeState, limit time.Time, minAttempt time.Duration) (ok, cancelled bool) {
	gap := r.ru.minGap
	if gap <= 0 {
		return true, false
	}
	now := time.Now()
	r.mu.Lock()
	at := now
	if r.nextStart.After(at) {
		at = r.nextStart
	}
	ok = limit.Sub(at) >= minAttempt
	if ok {
		r.nextStart = at.Add(gap)
	}
	r.mu.Unlock()
	if !ok {
		return false, false
	}
	for now := time.Now(); now.Before(at); now = time.Now() {
		ws := e.waitState(r, now)
		if ws.disabled || (ws.down && e.isDown(r, now)) {
			break
		}
		if !pause(ctx, at.Sub(now), ws.sig, nil) {
			return false, true
		}
	}
	return true, false
}

type waitResult int

const (
	waitDone      waitResult = iota // the breaker changed, a verdict came or its open period ended: look again
	waitTooLong                     // it would take longer than the item may wait
	waitDown                        // the route's outage patience ends first: it is down
	waitCancelled                   // ctx ended
)

// waitBreaker waits, at most room and never past the moment the route is
// down (ws.downAt), for an open breaker's open period to end, for a busy
// half-open breaker's trial to decide, or for a verdict on the route.
func waitBreaker(ctx context.Context, bv breakerView, room time.Duration, ws waitState) waitResult {
	now := time.Now()
	d := room
	downIn, patient := room, ws.downAt.IsZero()
	if !patient {
		downIn = ws.downAt.Sub(now)
	}
	if bv.state == BreakerOpen {
		left := bv.openUntil.Sub(now)
		switch {
		case left > room:
			return waitTooLong
		case !patient && left >= downIn:
			return waitDown // its next trial could only come after the patience ends
		}
		d = left
	} else {
		d = min(d, downIn)
	}
	if d <= 0 {
		switch {
		case bv.state == BreakerOpen:
			return waitDone
		case !patient && downIn <= 0:
			return waitDown
		}
		return waitTooLong
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-bv.changed:
	case <-ws.sig:
	case <-t.C:
	case <-ctx.Done():
		return waitCancelled
	}
	return waitDone
}

// ProbeMessage is the engine's health probe: a real, tiny request to the
// route's model that any healthy model answers at once.
const ProbeMessage = "Health check from warden: reply with the single word OK."

// probe sends the engine's health probe on a half-open route with a
// fallback, under permit p, with Policy.ProbeTimeout (the standard's 30 s:
// "a probe that takes longer than 30s IS the alert"), clipped to limit,
// and records its verdict: an answer (even an empty or unusable one)
// closes the breaker; a failure or a timeout re-opens it and marks the
// route unresponsive. It is identified as the LiteLLM standard asks: sent
// with Route.ProbeProvider (the probe-designated key) and Route.ProbeModel
// when set. It returns the probe as an Attempt of KindProbe. (On the last
// usable route the trial call is the waiting item's own request instead:
// see admit.)
func (e *Engine) probe(ctx context.Context, rs *runState, r *routeState, p permit, limit time.Time) Attempt {
	prov, model := r.r.ProbeProvider, cmp.Or(r.r.ProbeModel, r.r.Model)
	if prov == nil {
		prov = r.r.Provider
	}
	req := &Request{Model: model, Messages: []Message{{Role: "user", Content: ProbeMessage}}, MaxTokens: 16}
	start := time.Now()
	timeout := e.policy.ProbeTimeout
	d := min(timeout, limit.Sub(start))
	a := Attempt{
		Route: r.r.Name, Model: model, Kind: KindProbe, Start: start.Sub(rs.start),
		TimeoutBase: timeout, TimeoutEffective: timeout, Deadline: d,
		ItemRemaining: limit.Sub(start), ReviewRemaining: rs.workEnd.Sub(start),
		Decision: DecisionProbe, Breaker: BreakerHalfOpen.String(),
	}
	rs.mu.Lock()
	rs.calls++
	rs.mu.Unlock()
	pctx, cancel := context.WithTimeout(ctx, d)
	resp, err := func() (resp *Response, err error) {
		defer func() {
			if v := recover(); v != nil {
				resp, err = nil, &PanicError{Value: v, Stack: debug.Stack()}
			}
		}()
		return prov.Complete(pctx, req)
	}()
	cancel()
	a.Duration = time.Since(start)
	if resp != nil {
		a.Usage, a.FirstByte, a.ResponseModel = resp.Usage, resp.FirstByte, resp.Model
	}
	a.Err = err
	a.Class = Classify(ctx, err)
	// Any answer says the route is alive, whatever it says (a 4xx to the
	// probe's own key or model included: the item's request decides
	// those); only a failure the route produced or a timeout keeps it
	// open. A cancelled probe (the item's budget or the caller) decides
	// nothing and frees the slot.
	var v verdict
	switch a.Class {
	case ClassCancelled:
		v = verdictIgnore
	case ClassTimeout:
		var pe *ProviderError
		if !errors.As(err, &pe) {
			a.Err = &TimeoutError{Route: r.r.Name, Base: timeout, Effective: timeout, Deadline: d, Elapsed: a.Duration, Err: err}
		}
		v = verdictTimeout
	case ClassOverloaded, ClassServerError, ClassConnection, ClassUnknown:
		v = verdictFailure
	default:
		v = verdictSuccess
	}
	if e.policy.caps() {
		rs.charge(r.r.Cost(a.Usage), a.Usage.PromptTokens+a.Usage.CompletionTokens)
	}
	e.emitBreaker(r, r.br.done(p, v))
	r.observe(start, v, a.Class, false, false)
	r.finish(a, false)
	r.count(func(s *RouteStats) { s.Probes++ })
	e.log.Debug("probe", "route", r.r.Name, "model", model, "class", a.Class.String(), "duration", a.Duration, "verdict", v.String())
	return a
}

// send makes one call to the route's provider under the attempt's deadline.
// The caller releases the bulkhead slot. A panic in the Provider or in
// accept becomes a *PanicError.
func (e *Engine) send(itemCtx context.Context, r *routeState, req *Request, deadline time.Time, accept func(*Response) error) (resp *Response, err error) {
	ctx, cancel := context.WithDeadline(itemCtx, deadline)
	defer cancel()
	r.mu.Lock()
	r.inflight++
	r.unjudged++ // until observe has this call's verdict
	r.stats.MaxInFlight = max(r.stats.MaxInFlight, r.inflight)
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inflight--
		r.mu.Unlock()
	}()
	defer func() {
		if v := recover(); v != nil {
			resp, err = nil, &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	resp, err = r.r.Provider.Complete(ctx, req)
	if err == nil && resp == nil {
		err = &BadResponseError{Reason: "provider returned no response and no error"}
	}
	if err == nil && accept != nil {
		if aerr := accept(resp); aerr != nil {
			err = &BadResponseError{Reason: "not accepted", Err: aerr}
		}
	}
	return resp, err
}

// finish counts a sent attempt in the route's statistics.
func (r *routeState) finish(a Attempt, retry bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &r.stats
	s.Calls++
	if retry {
		s.Retries++
	}
	switch a.Class {
	case ClassSuccess:
		s.OK++
	case ClassTimeout:
		s.Timeouts++
	case ClassCancelled:
		s.Cancelled++
	default:
		s.Failed++
	}
	s.Usage = s.Usage.Add(a.Usage)
	r.durations = append(r.durations, a.Duration)
	if a.FirstByte > 0 {
		r.firstBytes = append(r.firstBytes, a.FirstByte)
	}
}

func (r *routeState) count(f func(*RouteStats)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.stats)
}

// disable takes a route out of the review after an auth, payment or
// unknown-model failure.
func (e *Engine) disable(r *routeState, c Class, err error) {
	r.mu.Lock()
	first := !r.disabled
	if first {
		r.disabled, r.disabledClass, r.disabledErr = true, c, err
		r.signal() // every wait on the route is pointless now
	}
	r.mu.Unlock()
	if first {
		e.emit(RouteEvent{At: time.Now(), Route: r.r.Name, Kind: EventDisabled, Class: c, Err: err})
	}
}

// coolDown keeps every item off the route until now+d.
func (e *Engine) coolDown(r *routeState, d time.Duration, c Class) {
	until := time.Now().Add(d)
	r.mu.Lock()
	later := until.After(r.cooldownUntil)
	if later {
		r.cooldownUntil, r.cooldownClass = until, c
	}
	r.mu.Unlock()
	if later {
		e.emit(RouteEvent{At: time.Now(), Route: r.r.Name, Kind: EventCooldown, Until: until, Class: c})
	}
}

func (e *Engine) emitBreaker(r *routeState, trs []transition) {
	for _, tr := range trs {
		e.emit(RouteEvent{At: tr.At, Route: r.r.Name, Kind: EventBreaker, From: tr.From, To: tr.To})
	}
}

func (e *Engine) emit(ev RouteEvent) {
	level := slog.LevelInfo
	if ev.Kind == EventDisabled || (ev.Kind == EventBreaker && ev.To == BreakerOpen) {
		level = slog.LevelWarn
	}
	attrs := []any{"route", ev.Route, "event", ev.Kind.String()}
	switch ev.Kind {
	case EventBreaker:
		attrs = append(attrs, "from", ev.From.String(), "to", ev.To.String())
	case EventCooldown:
		attrs = append(attrs, "until", ev.Until, "class", ev.Class.String())
	case EventDisabled:
		attrs = append(attrs, "class", ev.Class.String(), "err", ev.Err)
	}
	e.log.Log(context.Background(), level, "route health", attrs...)
	if e.opts.OnRouteEvent != nil {
		e.opts.OnRouteEvent(ev)
	}
}

// retryable reports the classes retried on the same route: transient
// failures, and a 408 the server sent (it answered, so the route request's
// deadline is not spent). Our own timeouts are retried by retryDecision's
// own rule (a whole new deadline must fit the item's budget).
func retryable(c Class, err error) bool {
	switch c {
	case ClassRateLimited, ClassOverloaded, ClassServerError, ClassConnection, ClassBadResponse:
		return true
	case ClassTimeout:
		return serverTimeout(err)
	}
	return false
}

// failsOver reports the classes that move an item to the next route:
// timeouts and the provider-unavailable classes.
func failsOver(c Class) bool {
	switch c {
	case ClassTimeout, ClassRateLimited, ClassOverloaded, ClassServerError, ClassConnection, ClassRejected:
		return true
	}
	return false
}

// verdictOf is what an attempt's class says about the route's health.
// Cancellations, client errors and rate limits say nothing; every unusable
// answer (prose, a schema violation, empty or cut content) is a failure of
// the route like a 5xx (seed 004: breakers "on rolling error rates" per
// route; an answer the review cannot use is an error of that route); a
// timeout counts unless our budget clipped the attempt to less than half
// its base deadline (clipped); a streaming watchdog always counts; a 408
// the server sent is a failure (it answered), not a timeout.
func verdictOf(c Class, err error, clipped bool) verdict {
	switch c {
	case ClassSuccess:
		return verdictSuccess
	case ClassOverloaded, ClassServerError, ClassConnection:
		return verdictFailure
	case ClassBadResponse:
		return verdictUnusable
	case ClassTimeout:
		switch {
		case serverTimeout(err):
			return verdictFailure // a 408 the server sent: it answered
		case errors.Is(err, ErrFirstTokenTimeout), errors.Is(err, ErrIdleTimeout):
			return verdictTimeout
		case clipped:
			return verdictIgnore
		}
		return verdictTimeout
	}
	return verdictIgnore
}

// retryAfter reads the server's Retry-After from a *ProviderError.
func retryAfter(err error, now time.Time) (time.Duration, bool) {
	var pe *ProviderError
	if !errors.As(err, &pe) {
		return 0, false
	}
	if d, ok := ParseRetryAfter(pe.Header, pe.Metadata, now); ok {
		return d, true
	}
	if pe.RetryAfter > 0 {
		return pe.RetryAfter, true
	}
	return 0, false
}

// StreamTimeouts returns the watchdogs the engine gives a request on a
// streaming route whose attempt has the given deadline: the route's
// FirstTokenTimeout (opt-in: zero is none) and IdleTimeout (zero: 30s
// between data events), each at most the attempt's deadline.
//
// There is no default first-token deadline: seed 003 measured an average
// time to first token of 25.4 s on a healthy backend (a tail to ~300 s
// under load) and seed 004 gives a provider request 2 minutes, so any
// default shorter than the attempt's deadline would abandon calls the
// seeds call healthy. A route that wants one sets first_token_timeout; a
// profile's floor binds it (streamTimeouts). Time to first token is
// measured by the Provider from sending, after admission (not from
// queueing). bodyChars is kept for the callers' signature: the rule no
// longer reads it.
func StreamTimeouts(r Route, bodyChars int, deadline time.Duration) (firstToken, idle time.Duration) {
	_ = bodyChars
	firstToken = r.FirstTokenTimeout
	if firstToken > 0 {
		firstToken = min(firstToken, deadline)
	}
	idle = r.IdleTimeout
	if idle == 0 {
		idle = DefaultIdleTimeout
	}
	return firstToken, min(idle, deadline)
}

// DefaultIdleTimeout is the idle watchdog of a streaming route without
// IdleTimeout: the longest silence between two data events of a stream
// that has started (keep-alive comments are not data).
const DefaultIdleTimeout = 30 * time.Second

// streamTimeouts is StreamTimeouts on route r under the engine's policy:
// on a profile route no watchdog is below the profile's floor (a
// watchdog is a client timeout too); an unset first-token watchdog stays
// unset.
func (e *Engine) streamTimeouts(r Route, bodyChars int, deadline time.Duration) (firstToken, idle time.Duration) {
	firstToken, idle = StreamTimeouts(r, bodyChars, deadline)
	if floor := rulesFor(r, e.policy).floor; floor > 0 {
		if firstToken > 0 {
			firstToken = max(firstToken, min(floor, deadline))
		}
		idle = max(idle, min(floor, deadline))
	}
	return firstToken, idle
}

// acquireResult is how a wait for a bulkhead slot ended.
type acquireResult int

const (
	acquired         acquireResult = iota
	acquireTimedOut                // no slot within the wait
	acquireWoken                   // a verdict on the route: look again
	acquireCancelled               // ctx ended
)

// acquire takes a token of sem, waiting at most d, or until a verdict on
// the route (sig) or ctx ends the wait.
func acquire(ctx context.Context, sem chan struct{}, d time.Duration, sig <-chan struct{}) acquireResult {
	select {
	case sem <- struct{}{}:
		return acquired
	default:
	}
	if d <= 0 {
		return acquireTimedOut
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case sem <- struct{}{}:
		return acquired
	case <-t.C:
		return acquireTimedOut
	case <-sig:
		return acquireWoken
	case <-ctx.Done():
		return acquireCancelled
	}
}
