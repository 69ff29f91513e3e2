package execution

import (
	"slices"
	"sync"
	"time"
)

// Activity is what one item is doing at a moment of a Run: a call in
// flight, or a wait, for the progress a user sees while nothing finishes
// (issue 22: "the user waits in silence").
type Activity struct {
	Item  int    // the item's index in the Run's items
	Route string // the route it is on
	// Waiting is "" while a call is in flight; else what the item waits
	// for: "backoff" (before a retry or a readmission), "breaker" (its
	// route's breaker is open or testing it), "cooldown" (a 429's or a
	// Retry-After's cool-down), "queue" (the route's bulkhead or pacing).
	Waiting  string
	Kind     AttemptKind   // in flight: the attempt's kind
	Since    time.Duration // how long it has been doing it
	Deadline time.Duration // in flight: the attempt's deadline, counted from its send
}

// The Waiting values of an Activity.
const (
	WaitBackoff  = "backoff"
	WaitBreaker  = "breaker"
	WaitCooldown = "cooldown"
	WaitQueue    = "queue"
)

// doing is an item's current activity, guarded by its own lock so that a
// snapshot never blocks the engine for long.
type doing struct {
	mu       sync.Mutex
	route    *routeState
	waiting  string // "" in flight; "route" (admission) or WaitBackoff
	kind     AttemptKind
	since    time.Time
	deadline time.Duration
}

// waiting records that the item waits: for its route (admission) or a
// backoff.
func (st *itemState) waiting(r *routeState, what string) {
	st.doing.mu.Lock()
	st.doing.route, st.doing.waiting, st.doing.since = r, what, time.Now()
	st.doing.mu.Unlock()
}

// sending records that the item's call of kind with deadline is in flight.
func (st *itemState) sending(r *routeState, kind AttemptKind, deadline time.Duration) {
	st.doing.mu.Lock()
	st.doing.route, st.doing.waiting, st.doing.kind, st.doing.since, st.doing.deadline = r, "", kind, time.Now(), deadline
	st.doing.mu.Unlock()
}

// live registers a started item with its Run, for Activity.
func (rs *runState) live(st *itemState) {
	rs.mu.Lock()
	rs.items = append(rs.items, st)
	rs.mu.Unlock()
}

// ended unregisters an item that live registered.
func (rs *runState) ended(st *itemState) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if i := slices.Index(rs.items, st); i >= 0 {
		rs.items = slices.Delete(rs.items, i, i+1)
	}
}

// register adds a Run to the engine's, for Activity; the returned function
// removes it.
func (e *Engine) register(rs *runState) func() {
	e.runsMu.Lock()
	e.runs = append(e.runs, rs)
	e.runsMu.Unlock()
	return func() {
		e.runsMu.Lock()
		defer e.runsMu.Unlock()
		if i := slices.Index(e.runs, rs); i >= 0 {
			e.runs = slices.Delete(e.runs, i, i+1)
		}
	}
}

// Activity returns what every item in flight in the engine's current Run
// (or Runs) is doing now, by item index: a snapshot for progress reports.
// It is safe to call at any time, from any goroutine; it returns nil when
// no Run is in progress.
func (e *Engine) Activity() []Activity {
	e.runsMu.Lock()
	runs := slices.Clone(e.runs)
	e.runsMu.Unlock()
	var out []Activity
	now := time.Now()
	for _, rs := range runs {
		rs.mu.Lock()
		items := slices.Clone(rs.items)
		rs.mu.Unlock()
		for _, st := range items {
			d := &st.doing
			d.mu.Lock()
			r := d.route
			a := Activity{Item: st.index, Waiting: d.waiting, Kind: d.kind, Since: now.Sub(d.since), Deadline: d.deadline}
			d.mu.Unlock()
			if r == nil {
				continue // not on a route yet
			}
			a.Route = r.r.Name
			if a.Waiting == "route" {
				a.Waiting, a.Deadline = r.waitingFor(now), 0
			} else if a.Waiting != "" {
				a.Deadline = 0
			}
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(x, y Activity) int { return x.Item - y.Item })
	return out
}

// waitingFor is what an item admitted to r waits for at now.
func (r *routeState) waitingFor(now time.Time) string {
	if r.br.peek() != BreakerClosed {
		return WaitBreaker
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cooldownUntil.After(now) {
		return WaitCooldown
	}
	return WaitQueue
}
