package execution

import (
	"fmt"
	"slices"
	"time"
)

// RouteEventKind says what happened to a route.
type RouteEventKind int

// The route event kinds.
const (
	EventBreaker  RouteEventKind = iota + 1 // the breaker changed state: From, To
	EventCooldown                           // the route cools down until Until (Retry-After, 429)
	EventDisabled                           // auth, payment or unknown model: no more calls this review
)

// String returns "breaker", "cooldown" or "disabled".
func (k RouteEventKind) String() string {
	switch k {
	case EventBreaker:
		return "breaker"
	case EventCooldown:
		return "cooldown"
	case EventDisabled:
		return "disabled"
	}
	return fmt.Sprintf("event(%d)", int(k))
}

// RouteEvent is a change of a route's health during a Run, for telemetry
// and for the step summary ("primary disabled after 401").
type RouteEvent struct {
	At       time.Time
	Route    string
	Kind     RouteEventKind
	From, To BreakerState // EventBreaker
	Until    time.Time    // EventCooldown: no call before this time
	Class    Class        // EventCooldown, EventDisabled: the class that caused it
	Err      error        // EventDisabled: the error that disabled the route
}

// RouteStats summarizes one route over the most recent Run, for the
// report's routes[] (calls, ok, failed, timeouts, p50_ms, p95_ms,
// ttft_p50_ms, ttft_p95_ms, failovers_in, failovers_out, circuit_opens,
// tokens). Calls = OK + Failed + Timeouts + Cancelled; rejected attempts
// (never sent) are counted apart. It is the one place these numbers are
// computed: reports map them, they do not recount.
type RouteStats struct {
	Name  string
	Model string

	Calls     int // requests sent
	OK        int // accepted answers
	Failed    int // sent, not accepted, neither a timeout nor our cancellation
	Timeouts  int // ClassTimeout
	Cancelled int // ended by the caller or the review budget (ClassCancelled)
	Retries   int // calls of KindRetry
	Rejected  int // attempts the engine did not send (Attempt.Reason says why)
	Probes    int // health probes sent (KindProbe; counted in Calls too)

	P50, P95, Max time.Duration // of the sent calls' durations (nearest rank); 0 without calls
	// TTFTP50 and TTFTP95 are the time to first token of the sent calls
	// that reported one (Attempt.FirstByte > 0: the first byte of a
	// non-streaming answer, the first data event of a stream), nearest
	// rank; 0 when no call reported one.
	TTFTP50, TTFTP95 time.Duration

	// FailoversOut counts items that left this route for the next one
	// (an attempt here, sent or rejected, whose Decision is
	// DecisionFailover); FailoversIn counts items that arrived here from
	// a previous route (an attempt of KindFailover). Over all routes of a
	// Run the two sums are equal.
	FailoversIn, FailoversOut int

	CircuitOpens int // times the breaker opened
	// ConcurrencyCuts counts the times a 429 halved the route's
	// concurrency (aimd.go); MinConcurrency is the lowest it went (0: never
	// cut).
	ConcurrencyCuts, MinConcurrency int
	Breaker                         BreakerState // at the time of the Stats call
	MaxInFlight                     int          // the most calls in flight at once (≤ the route's cap)

	Disabled      bool  // auth, payment or unknown model disabled it
	DisabledClass Class // the class that disabled it
	DisabledErr   error // the error that disabled it

	Usage Usage
}

// statsOf is the route stats of one run; nil for none.
func (e *Engine) statsOf(rs *runState) []RouteStats {
	if rs == nil {
		return nil
	}
	out := make([]RouteStats, len(rs.routes))
	for i, r := range rs.routes {
		st, tr := r.br.current()
		e.emitBreaker(r, tr)
		r.mu.Lock()
		s := r.stats
		s.Name, s.Model = r.r.Name, r.r.Model
		s.Breaker = st
		s.Disabled, s.DisabledClass, s.DisabledErr = r.disabled, r.disabledClass, r.disabledErr
		durs := slices.Clone(r.durations)
		ttfts := slices.Clone(r.firstBytes)
		r.mu.Unlock()
		s.CircuitOpens = r.br.openCount()
		if len(durs) > 0 {
			slices.Sort(durs)
			s.P50, s.P95, s.Max = nearestRank(durs, 50), nearestRank(durs, 95), durs[len(durs)-1]
		}
		if len(ttfts) > 0 {
			slices.Sort(ttfts)
			s.TTFTP50, s.TTFTP95 = nearestRank(ttfts, 50), nearestRank(ttfts, 95)
		}
		out[i] = s
	}
	return out
}

// nearestRank returns the p-th percentile of sorted values by the nearest
// rank method.
func nearestRank(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 · n)
	return sorted[max(rank, 1)-1]
}
