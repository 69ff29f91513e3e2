package execution_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/org/warden/execution"
)

var seeds = flag.Int("seeds", 500, "random fault schedules checked by TestInvariants")

// chaos is one seeded random review: routes with random fault schedules
// (latency, hangs, keep-alive stalls, 429 with any Retry-After, huge ones
// included, 5xx, broken streams, a 401 from some time on), a random policy
// and sometimes a cancellation.
type chaos struct {
	specs    []routeSpec
	policy   execution.Policy
	items    int
	cancelAt time.Duration // 0: never
}

func newChaos(seed uint64) chaos {
	r := rand.New(rand.NewPCG(seed, 0xC4A05))
	var c chaos
	for ri := range 1 + r.IntN(3) {
		weights := [7]int{}
		for k := range weights {
			weights[k] = r.IntN(10)
		}
		weights[0] += 5 // some answers
		authAt := time.Duration(r.IntN(2000)) * time.Second
		routeSeed := r.Uint64()
		c.specs = append(c.specs, routeSpec{
			name:           "r" + strconv.Itoa(ri),
			cap:            r.IntN(4), // 0: the pool's
			stream:         r.IntN(3) == 0,
			failoverOnAuth: r.IntN(2) == 0,
			timeout:        []time.Duration{0, 30 * time.Second, 90 * time.Second, 3 * time.Minute}[r.IntN(4)],
			minInterval:    []time.Duration{0, 0, 0, 2 * time.Second}[r.IntN(4)],
			script: func(n int, at time.Duration) reply {
				cr := rand.New(rand.NewPCG(routeSeed, uint64(n)))
				delay := time.Duration(cr.Int64N(int64(150 * time.Second)))
				if at >= authAt && weights[6] > 7 {
					return reply{Status: 401}
				}
				total := 0
				for _, w := range weights[:6] {
					total += w
				}
				k, pick := 0, cr.IntN(total)
				for ; pick >= weights[k]; k++ {
					pick -= weights[k]
				}
				switch k {
				case 0:
					return reply{Delay: delay}
				case 1:
					return reply{Hang: true, Keepalive: time.Duration(cr.IntN(3)) * 5 * time.Second}
				case 2:
					ra := []string{"", "1", "2.5", "5", "20", "45", "3600"}[cr.IntN(7)]
					h := map[string]string{}
					if ra != "" {
						h["Retry-After"] = ra
					}
					return reply{Delay: delay / 10, Status: 429, Header: h}
				case 3:
					return reply{Delay: delay / 10, Status: []int{500, 502, 503, 504, 529}[cr.IntN(5)]}
				case 4:
					return reply{Delay: delay / 5, StreamError: true}
				}
				return reply{Delay: delay / 20, Status: 400}
			},
		})
	}
	p := execution.DefaultPolicy()
	p.MaxConcurrency = 1 + r.IntN(6)
	p.MaxRetriesPerRoute = r.IntN(3)
	p.ItemBudget = []time.Duration{2 * time.Minute, 5 * time.Minute}[r.IntN(2)]
	p.Budget = []time.Duration{5 * time.Minute, 15 * time.Minute}[r.IntN(2)]
	c.policy = p
	c.items = 3 + r.IntN(12)
	if r.IntN(5) == 0 {
		c.cancelAt = time.Duration(r.IntN(600)) * time.Second
	}
	return c
}

// TestInvariants checks the engine's promises over random fault schedules:
// review ≤ its budget; every item ≤ its budget; every attempt ≤ its
// deadline; retries per (item, route) ≤ the cap; no call to a route while
// its breaker is open (half-open: one trial in flight, or the waiting
// retries in the first half-open after a trip on server failures), inside
// a cool-down or after it is disabled; calls in flight
// per route ≤ its cap; failovers out of routes = failovers into the next
// ones, as the statistics count them; exactly one result per item; a cancelled review
// returns at once; no goroutine left behind (synctest fails otherwise).
func TestInvariants(t *testing.T) {
	t.Parallel()
	n := *seeds
	if testing.Short() {
		n = min(n, 100)
	}
	start := time.Now()
	var cov coverage
	for seed := range uint64(n) {
		c := newChaos(seed)
		synctest.Test(t, func(t *testing.T) {
			if err := checkChaos(t, c, &cov); err != "" {
				t.Errorf("seed %d: %s", seed, err)
			}
		})
		if t.Failed() {
			return
		}
	}
	t.Logf("%d seeds in %v; coverage %+v", n, time.Since(start).Round(time.Millisecond), cov)
	// The schedules must exercise what the invariants are about.
	if n >= 500 && (cov.BreakerOpens == 0 || cov.Cooldowns == 0 || cov.Disabled == 0 || cov.Retries == 0 ||
		cov.Cancelled == 0 || cov.Done == 0 || cov.Failed == 0 || cov.Skipped == 0 || cov.Probes == 0 || cov.Rejected == 0) {
		t.Errorf("the random schedules left a behaviour unexercised: %+v", cov)
	}
}

// coverage counts what the random schedules exercised.
type coverage struct {
	Calls, Done, Failed, Skipped, Retries, Rejected, Probes int
	BreakerOpens, Cooldowns, Disabled, Cancelled            int
}

func checkChaos(t *testing.T, c chaos, cov *coverage) string {
	w := newWorld(t, c.specs)
	e, err := execution.New(w.routes, c.policy, execution.Options{Rand: rand.New(rand.NewPCG(3, 4)), OnRouteEvent: w.onEvent})
	if err != nil {
		return err.Error()
	}
	ctx := t.Context()
	if c.cancelAt > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		time.AfterFunc(c.cancelAt, cancel)
	}
	its := items(c.items)
	results, stats := e.RunStats(ctx, its, nil)
	wall := time.Since(w.origin)
	cov.Calls += w.totalCalls()
	if c.cancelAt > 0 {
		cov.Cancelled++
	}
	for _, ev := range w.routeEvents() {
		switch {
		case ev.Kind == execution.EventBreaker && ev.To == execution.BreakerOpen:
			cov.BreakerOpens++
		case ev.Kind == execution.EventCooldown:
			cov.Cooldowns++
		case ev.Kind == execution.EventDisabled:
			cov.Disabled++
		}
	}
	for _, r := range results {
		switch r.Status {
		case execution.StatusDone:
			cov.Done++
		case execution.StatusFailed:
			cov.Failed++
		case execution.StatusSkipped:
			cov.Skipped++
		}
		for _, a := range r.Attempts {
			switch {
			case a.Class == execution.ClassRejected:
				cov.Rejected++
			case a.Kind == execution.KindRetry:
				cov.Retries++
			}
			if a.Class != execution.ClassRejected && a.Breaker == execution.BreakerHalfOpen.String() {
				cov.Probes++
			}
		}
	}

	p := e.Policy()
	switch {
	case wall > p.Budget-p.Reserve:
		return fmt.Sprintf("review took %v, budget %v − reserve %v", wall, p.Budget, p.Reserve)
	case c.cancelAt > 0 && wall > c.cancelAt:
		return fmt.Sprintf("review cancelled at %v returned at %v", c.cancelAt, wall)
	case len(results) != len(its):
		return fmt.Sprintf("%d results for %d items", len(results), len(its))
	}
	for i, r := range results {
		switch {
		case r.Status != execution.StatusDone && r.Status != execution.StatusFailed && r.Status != execution.StatusSkipped:
			return fmt.Sprintf("item %d: status %v", i, r.Status)
		case r.Status == execution.StatusDone && (r.Response == nil || r.Route == ""):
			return fmt.Sprintf("item %d: done without an answer", i)
		case r.Duration > p.ItemBudget:
			return fmt.Sprintf("item %d took %v, budget %v", i, r.Duration, p.ItemBudget)
		}
		retries := map[string]int{}
		for j, a := range r.Attempts {
			if a.Number != j+1 {
				return fmt.Sprintf("item %d attempt %d numbered %d", i, j+1, a.Number)
			}
			if a.Kind == execution.KindRetry && a.Class != execution.ClassRejected {
				retries[a.Route]++
			}
			if a.Class == execution.ClassRejected {
				continue
			}
			switch {
			case a.Duration > a.Deadline:
				return fmt.Sprintf("item %d attempt %d on %s took %v, deadline %v", i, j+1, a.Route, a.Duration, a.Deadline)
			case a.Deadline > a.ItemRemaining || a.Deadline > a.TimeoutEffective || a.Deadline <= 0:
				return fmt.Sprintf("item %d attempt %d: deadline %v, item remaining %v, effective %v", i, j+1, a.Deadline, a.ItemRemaining, a.TimeoutEffective)
			}
		}
		for rt, n := range retries {
			if n > p.MaxRetriesPerRoute {
				return fmt.Sprintf("item %d: %d retries on %s, cap %d", i, n, rt, p.MaxRetriesPerRoute)
			}
		}
	}
	for i, rt := range w.routes {
		capacity := rt.MaxConcurrency
		if capacity == 0 {
			capacity = p.MaxConcurrency
		}
		if got := w.counters[i].maxInFlight(); got > capacity {
			return fmt.Sprintf("route %s: %d calls in flight, cap %d", rt.Name, got, capacity)
		}
		if msg := breakerViolations(w, i, results); msg != "" {
			return msg
		}
	}
	if msg := failoverBalance(stats, results); msg != "" {
		return msg
	}
	checkCooldowns(t, w)
	return ""
}

// failoverBalance checks the route statistics' failovers against the
// attempt records: out of a route for every failover decision there, into
// it for every failover attempt, and as many in as out over all routes.
func failoverBalance(stats []execution.RouteStats, results []execution.Result) string {
	in, out := map[string]int{}, map[string]int{}
	for _, r := range results {
		for _, a := range r.Attempts {
			if a.Kind == execution.KindFailover {
				in[a.Route]++
			}
			if a.Decision == execution.DecisionFailover {
				out[a.Route]++
			}
		}
	}
	sumIn, sumOut := 0, 0
	for _, s := range stats {
		if s.FailoversIn != in[s.Name] || s.FailoversOut != out[s.Name] {
			return fmt.Sprintf("route %s: failovers in/out %d/%d, attempts say %d/%d", s.Name, s.FailoversIn, s.FailoversOut, in[s.Name], out[s.Name])
		}
		sumIn, sumOut = sumIn+s.FailoversIn, sumOut+s.FailoversOut
	}
	if sumIn != sumOut {
		return fmt.Sprintf("failovers in %d, out %d over all routes", sumIn, sumOut)
	}
	return ""
}

// breakerViolations finds calls to route i while its breaker was open, and
// overlapping half-open probes.
func breakerViolations(w *world, i int, results []execution.Result) string {
	name := w.routes[i].Name
	var openAt time.Duration = -1
	type span struct{ from, to time.Duration }
	var open []span
	for _, ev := range w.routeEvents() {
		if ev.Route != name || ev.Kind != execution.EventBreaker {
			continue
		}
		at := ev.At.Sub(w.origin)
		switch {
		case ev.To == execution.BreakerOpen:
			openAt = at
		case openAt >= 0:
			open = append(open, span{openAt, at})
			openAt = -1
		}
	}
	if openAt >= 0 {
		open = append(open, span{openAt, 1 << 62})
	}
	for _, c := range w.servers[i].calls() {
		for _, s := range open {
			if c > s.from && c < s.to {
				return fmt.Sprintf("route %s called at %v while its breaker was open (%v–%v)", name, c, s.from, s.to)
			}
		}
	}
	// Half-open, one trial at a time in each half-open period; only the
	// first half-open after a trip also admits every waiting retry (the
	// generous half-open of BreakerSettings), so of two overlapping trials
	// of one period one must be a retry. (A trial of an earlier period may
	// still be in flight: its verdict is stale.)
	var halfOpen []span
	var from time.Duration = -1
	for _, ev := range w.routeEvents() {
		if ev.Route != name || ev.Kind != execution.EventBreaker {
			continue
		}
		at := ev.At.Sub(w.origin)
		if from >= 0 {
			halfOpen = append(halfOpen, span{from, at})
			from = -1
		}
		if ev.To == execution.BreakerHalfOpen {
			from = at
		}
	}
	if from >= 0 {
		halfOpen = append(halfOpen, span{from, 1 << 62})
	}
	period := func(at time.Duration) int {
		for i, h := range halfOpen {
			if at >= h.from && at <= h.to {
				return i
			}
		}
		return -1
	}
	type trial struct {
		span
		retry  bool
		period int
	}
	var probes []trial
	for _, r := range results {
		for _, a := range r.Attempts {
			if a.Route == name && a.Class != execution.ClassRejected && a.Breaker == execution.BreakerHalfOpen.String() {
				probes = append(probes, trial{span{a.Start, a.Start + a.Duration}, a.Kind == execution.KindRetry, period(a.Start)})
			}
		}
	}
	for x := range probes {
		for y := range x {
			px, py := probes[x], probes[y]
			if px.period == py.period && px.from < py.to && py.from < px.to && !px.retry && !py.retry {
				return fmt.Sprintf("route %s: overlapping half-open trials %v and %v, neither a retry", name, px.span, py.span)
			}
		}
	}
	return ""
}
