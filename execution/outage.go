package execution

import (
	"context"
	"time"
)

// Outage patience: the one rule for how long an item waits for a route that
// has stopped answering (issue 22).
//
// Seed 004 asks to "temporarily open unhealthy routes and send new work to
// fallback" and to retry "only when enough budget remains"; it does not ask
// to give up on a route with most of the budget unused. So on the last
// usable route (there is no fallback to send the work to) an outage costs
// time, not items:
//
//   - A route is in an outage from the moment the first call that failed
//     since its last answer was sent (a 5xx, a connection failure, an
//     unusable answer or a timeout; never a 4xx, a 429 or our own
//     cancellation) until any call or probe on it answers again.
//   - An item whose attempt failed for the route's sake while the route's
//     breaker is open (or half-open) does not fail when its retries are
//     spent: it waits, after its route's backoff, for the breaker to let
//     a call through and sends again, as a KindReadmit attempt (not a
//     retry, as a failover is not one). The half-open breaker admits the
//     waiting items one at a time as its trial calls: their own requests,
//     with their own deadlines.
//   - A review too small to trip the breaker is judged the same way: when
//     an item's retries are spent on a transient failure (a 5xx, an
//     overload, a connection failure, a timeout) and the breaker's window
//     holds not one answer from the route, the breaker opens then, as on
//     QuickTrip failures (half-open at once), and the item waits. Two
//     failures of a one-item review are every call the route has seen:
//     without this a 2-second blip failed a one-hunk review in 1.7 s
//     that three hunks came through. A route that answered in the window
//     is not in an outage by the breaker's count: the item fails, as do
//     auth, payment and model-not-found (the route is disabled) and
//     unusable answers (their own rule, below).
//   - A readmission is not a retry. Seed 004 says "Retry at most once and
//     only when enough budget remains": that bounds an item's own second
//     try of its request, which the item decides on its failure and sends
//     after a backoff, and it still holds (one retry per item, and none
//     without the budget for it). A readmission is the route's trial call
//     after an outage, which the breaker decides: one at a time for the
//     route, after its cool-down (30 s, 60 s, 120 s after failed trials),
//     and only while the outage patience and the item's budget leave a
//     whole minimum attempt; the seed's "temporarily open unhealthy
//     routes" is this wait when there is no fallback to send the work to.
//   - A failed trial re-arms the breaker's cool-down (30 s, then 60 s, then
//     120 s) and the items keep waiting: one failed check never fails the
//     items together.
//   - The outage patience is Policy.OutagePatience, by default the item
//     budget (hunk_budget: 5 min by default, 16 min for the LiteLLM
//     profile's worked example): no item may take longer anyway, so a route
//     that has given no answer for that long is down for the rest of the
//     review. Items waiting for it fail at that moment (reason
//     probe_failed), items that reach it fail at once without a call, and
//     an item whose next trial could only come after the patience ends
//     stops waiting at once. A storm or a stall shorter than the patience
//     costs time, not items; a longer outage (a 2.5-hour wedge) ends
//     provider-unavailable at most one patience after its first unanswered
//     call was sent, or when the one trial call then in flight ends.
//   - A model that ignores the output contract is not an outage that
//     waiting cures: once the breaker opened on QuickTrip unusable answers
//     with no accepted one in its window, and its trial call answered
//     unusably too, the route is down at once (the output_contract
//     diagnosis), after about one wave of calls. A model that is only
//     sometimes sloppy has accepted answers in the window: its items
//     retry, and wait for the breaker when its rate opens it.
//
// Routes with a fallback are not waited for: their items fail over, and
// the engine's short identified probe re-admits them.

// Patience is the outage patience in effect: Policy.OutagePatience, else
// the item budget.
func (p Policy) Patience() time.Duration {
	if p.OutagePatience > 0 {
		return p.OutagePatience
	}
	return p.ItemBudget
}

// signal wakes every wait on the route: a verdict may have made it
// pointless (disabled, down, an outage begun). r.mu must be held.
func (r *routeState) signal() {
	close(r.sig)
	r.sig = make(chan struct{})
}

// observe records what a sent call's verdict v (class c, sent at sent) says
// of the route's outage; contract says the route is down for the output
// contract: a trial call answered unusably while the breaker's window
// holds QuickTrip unusable answers and no accepted one. judged says the
// call was one of send's (counted in unjudged until now), not a probe.
func (r *routeState) observe(sent time.Time, v verdict, c Class, contract, judged bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if judged {
		r.unjudged--
	}
	// Every verdict is evidence for the items waiting to know whether the
	// route is in an outage (readmits).
	close(r.evidence)
	r.evidence = make(chan struct{})
	switch v {
	case verdictSuccess:
		r.outageFrom = time.Time{}
		if c == ClassSuccess { // a probe's answer says the route is alive, not that the model keeps the contract
			r.contractDown = false
		}
	case verdictFailure, verdictTimeout, verdictUnusable:
		began := r.outageFrom.IsZero()
		if began || sent.Before(r.outageFrom) {
			r.outageFrom = sent
		}
		r.outageClass = c
		if contract && !r.contractDown {
			r.contractDown, began = true, true
		}
		if began {
			r.signal() // the waits learn when the route will be down
		}
	}
}

// downAt is when the route is down for the items that would wait for it:
// ok is false when it is not in an outage; a zero time means already (the
// output contract). r.mu must be held.
func (r *routeState) downAt(patience time.Duration) (at time.Time, ok bool) {
	switch {
	case r.contractDown:
		return time.Time{}, true
	case r.outageFrom.IsZero():
		return time.Time{}, false
	}
	return r.outageFrom.Add(patience), true
}

// waitState is what a wait on the route needs to know: whether it is
// disabled or down now, when it will be down, and the channel that a new
// verdict closes.
type waitState struct {
	disabled bool
	downAt   time.Time // zero: not in an outage
	down     bool      // down now (its breaker not closed: see isDown)
	contract bool      // down for the output contract, not past its patience
	pending  bool      // in an outage, with verdicts of calls sent still to come
	sig      <-chan struct{}
	evidence <-chan struct{} // closed by the next verdict
}

// waitState reads the route's wait state at now.
func (e *Engine) waitState(r *routeState, now time.Time) waitState {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.downAt(e.policy.Patience())
	ws := waitState{disabled: r.disabled, contract: r.contractDown, sig: r.sig, evidence: r.evidence,
		pending: !r.outageFrom.IsZero() && r.unjudged > 0}
	if ok {
		ws.downAt, ws.down = at, !now.Before(at)
		if at.IsZero() {
			ws.downAt = now
		}
	}
	return ws
}

// isDown reports whether route r is down for its items at now: past its
// outage patience (or down for the output contract) with its breaker not
// closed. A closed breaker means calls flow; the outage then only counts
// time.
func (e *Engine) isDown(r *routeState, now time.Time) bool {
	st, tr := r.br.current()
	e.emitBreaker(r, tr)
	return st != BreakerClosed && e.waitState(r, now).down
}

// readmits reports whether an item whose attempt on route r, its last
// usable route, just failed with verdict v waits for the route instead of
// failing: the failure counts against the route; the route's breaker has
// judged it in an outage (it is open or half-open, or opens now: see
// unanswered); it is neither disabled nor down; it has a breaker (without
// one nothing would bound the attempts); and limit still holds a minimum
// attempt after the wait.
//
// When the breaker is still closed but no call has answered since the
// route's first failure and other calls have no verdict yet, the evidence
// is not in (an outage's first failures come a moment before its breaker
// trips, some at the same instant as this one): the item waits for it,
// while limit allows, until the breaker trips (then it waits for the
// route) or a call answers or every verdict is in (then unanswered
// decides).
func (e *Engine) readmits(ctx context.Context, r *routeState, v verdict, wait time.Duration, limit time.Time) bool {
	if !v.failed() || r.br.s.Disabled {
		return false
	}
	for {
		now := time.Now()
		room := limit.Sub(now.Add(wait)) - r.ru.minAttempt
		if room < 0 || ctx.Err() != nil {
			return false
		}
		// Whether verdicts are still to come is read (with the channel
		// that the next one closes) before the breaker: a call's verdict
		// reaches the breaker before the outage counts it, so once none is
		// to come the breaker has them all.
		ws := e.waitState(r, now)
		if ws.disabled || ws.down {
			return false
		}
		bv, tr := r.br.view(false)
		e.emitBreaker(r, tr)
		switch {
		case bv.state != BreakerClosed:
			return true
		case !ws.pending:
			return e.unanswered(r, v)
		case room <= 0 || !pause(ctx, room, ws.evidence, bv.changed):
			return false
		}
	}
}

// unanswered reports whether the failure (verdict v) that spent an item's
// retries on route r, its last usable route, with every verdict on the
// route in and its breaker closed, opens the breaker: v is a transient
// failure (a 5xx, an overload, a connection failure or a timeout, not an
// unusable answer) and the breaker's window holds not one answer
// (breaker.tripUnanswered). Then the item waits for the route as it would
// had QuickTrip failures opened it: a review of one or two items meets a
// blip with fewer calls than QuickTrip.
func (e *Engine) unanswered(r *routeState, v verdict) bool {
	if v != verdictFailure && v != verdictTimeout {
		return false
	}
	open, tr := r.br.tripUnanswered()
	e.emitBreaker(r, tr)
	return open
}

// pause waits d on route r, or until ctx ends, or until a verdict on the
// route (disabled, down, an outage begun) or a change of other, when not
// nil, wakes it. It reports whether ctx is still live; the caller looks at
// the route again either way.
func pause(ctx context.Context, d time.Duration, sig, other <-chan struct{}) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-sig:
	case <-other:
	case <-ctx.Done():
		return false
	}
	return true
}

// backoffWait waits out a backoff of d before the next attempt on route r,
// and stops early when a verdict makes it pointless: the route disabled,
// or down (also when its outage patience runs out during the wait). It
// reports whether ctx is still live.
func (e *Engine) backoffWait(ctx context.Context, r *routeState, d time.Duration) bool {
	end := time.Now().Add(d)
	for {
		now := time.Now()
		ws := e.waitState(r, now)
		if ws.disabled || (ws.down && e.isDown(r, now)) || !now.Before(end) {
			return ctx.Err() == nil
		}
		until := end
		if ws.downAt.After(now) && ws.downAt.Before(until) {
			until = ws.downAt
		}
		if !pause(ctx, until.Sub(now), ws.sig, nil) {
			return false
		}
	}
}
