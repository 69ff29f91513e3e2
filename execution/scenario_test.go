package execution_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/org/warden/execution"
)

const (
	sec    = time.Second
	minute = time.Minute
)

// heavyTail is the primary's latency on call n: 80% in 20–60s, 15% in
// 1–6 min, 5% in 6–43 min (p95 ≈ 6 min, max 43 min, as measured on a slow
// provider), in a seeded order, with call 3 pinned at the
// 43-minute maximum.
func heavyTail(n int) time.Duration {
	if n == 3 {
		return 43 * minute
	}
	return heavyTailTable[n%len(heavyTailTable)]
}

var heavyTailTable = func() []time.Duration {
	// Stratified: the quantiles (i+0.5)/1000 in a seeded random order.
	perm := rand.New(rand.NewPCG(6, 43)).Perm(1000)
	out := make([]time.Duration, len(perm))
	for i := range out {
		u := (float64(perm[i]) + 0.5) / float64(len(perm))
		switch {
		case u < 0.80:
			out[i] = 20*sec + time.Duration(u/0.80*float64(40*sec))
		case u < 0.95:
			out[i] = minute + time.Duration((u-0.80)/0.15*float64(5*minute))
		default:
			out[i] = 6*minute + time.Duration((u-0.95)/0.05*float64(37*minute))
		}
	}
	return out
}()

// scenario is one provider fault schedule, run by the scenario tests and by
// the comparison with the naive policy.
type scenario struct {
	name  string
	items int
	specs []routeSpec
	check func(t *testing.T, o *outcome)
}

// outcome is what a warden run of a scenario produced.
type outcome struct {
	wall    time.Duration
	results []execution.Result
	w       *world
	stats   []execution.RouteStats
}

func (o *outcome) routeCalls(i int) int { return o.w.servers[i].count() }

// probes counts the attempts sent to route name while its breaker was
// half-open.
func (o *outcome) probes(name string) int {
	n := 0
	for _, r := range o.results {
		for _, a := range r.Attempts {
			if a.Route == name && a.Class != execution.ClassRejected && a.Breaker == execution.BreakerHalfOpen.String() {
				n++
			}
		}
	}
	return n
}

func (o *outcome) allDone(t *testing.T) {
	t.Helper()
	for i, r := range o.results {
		if r.Status != execution.StatusDone {
			t.Errorf("item %d: %s %s %s (%v), want done", i, r.Status, r.Class, r.Reason, r.Err)
		}
	}
}

func scenarios() []scenario {
	ok := func(d time.Duration) func(int, time.Duration) reply { return always(reply{delay: d}) }
	return []scenario{
		{
			name: "healthy", items: 40,
			specs: []routeSpec{{name: "primary", script: ok(20 * sec)}, {name: "fallback", script: ok(20 * sec)}},
			check: func(t *testing.T, o *outcome) {
				o.allDone(t)
				if o.wall != 100*sec || o.routeCalls(1) != 0 {
					t.Errorf("wall %v, fallback calls %d; want 100s and 0", o.wall, o.routeCalls(1))
				}
			},
		},
		{
			name: "wedged primary, healthy fallback", items: 40,
			specs: []routeSpec{{name: "primary", script: always(reply{hang: true})}, {name: "fallback", script: ok(20 * sec)}},
			check: func(t *testing.T, o *outcome) {
				o.allDone(t)
				probes := o.probes("primary")
				// Only the calls needed to open the breaker (all in flight
				// at once: the cap, 8) plus half-open probes.
				if got := o.routeCalls(0); got > 8+probes || probes > 3 {
					t.Errorf("primary got %d calls with %d probes; want ≤ 8 + probes, ≤ 3 probes", got, probes)
				}
				if o.stats[0].CircuitOpens == 0 {
					t.Errorf("primary breaker never opened: %+v", o.stats[0])
				}
				if o.wall > 6*minute {
					t.Errorf("wall %v, want under 6 min", o.wall)
				}
			},
		},
		{
			name: "heavy-tail primary (p95 6m, max 43m)", items: 40,
			specs: []routeSpec{
				{name: "primary", script: func(n int, _ time.Duration) reply { return reply{delay: heavyTail(n)} }},
				{name: "fallback", script: ok(30 * sec)},
			},
			check: func(t *testing.T, o *outcome) {
				o.allDone(t)
				for i, r := range o.results {
					if r.Duration > 5*minute {
						t.Errorf("item %d took %v, over its 5 min budget", i, r.Duration)
					}
				}
				if o.wall > 15*minute {
					t.Errorf("review took %v, want ≤ 15 min", o.wall)
				}
			},
		},
		{
			name: "all routes down (503)", items: 100,
			specs: []routeSpec{{name: "primary", script: always(reply{delay: 2 * sec, status: 503})}, {name: "fallback", script: always(reply{delay: 2 * sec, status: 503})}},
			check: func(t *testing.T, o *outcome) {
				done, failed, _ := tally(o.results)
				if done != 0 || failed == 0 {
					t.Errorf("done %d, failed %d; want provider-unavailable (0 done, some failed)", done, failed)
				}
				if o.wall > 2*minute {
					t.Errorf("review took %v, want well before the budget (< 2 minute)", o.wall)
				}
				// Calls per item once both breakers are open.
				var bothOpen time.Duration = -1
				open := map[string]bool{}
				for _, ev := range o.w.routeEvents() {
					if ev.Kind == execution.EventBreaker {
						open[ev.Route] = ev.To == execution.BreakerOpen
						if open["primary"] && open["fallback"] && bothOpen < 0 {
							bothOpen = ev.At.Sub(o.w.origin)
						}
					}
				}
				if bothOpen < 0 {
					t.Fatalf("the breakers never were open together")
				}
				calls, started := 0, 0
				for _, s := range o.w.servers {
					for _, c := range s.calls() {
						if c >= bothOpen {
							calls++
						}
					}
				}
				for _, r := range o.results {
					if r.Start >= bothOpen {
						started++
					}
				}
				if started == 0 || float64(calls)/float64(started) > 1.1 {
					t.Errorf("after both breakers opened (%v): %d calls for %d items, want ≤ 1.1 per item", bothOpen, calls, started)
				}
			},
		},
		{
			name: "401 on the primary", items: 40,
			specs: []routeSpec{{name: "primary", script: always(reply{status: 401})}, {name: "fallback", script: ok(20 * sec)}},
			check: func(t *testing.T, o *outcome) {
				if got := o.routeCalls(0); got > 8 {
					t.Errorf("primary got %d calls, want at most its cap (8)", got)
				}
				if got := o.routeCalls(1); got != 0 {
					t.Errorf("fallback got %d calls, want 0 (no silent fallback)", got)
				}
				for i, r := range o.results {
					if r.Status != execution.StatusFailed || r.Class != execution.ClassAuth {
						t.Errorf("item %d: %s %s, want failed auth", i, r.Status, r.Class)
					}
				}
				var disabledAt time.Duration = -1
				for _, ev := range o.w.routeEvents() {
					if ev.Kind == execution.EventDisabled && ev.Route == "primary" && ev.Class == execution.ClassAuth {
						disabledAt = ev.At.Sub(o.w.origin)
					}
				}
				for _, c := range o.w.servers[0].calls() {
					if c > disabledAt {
						t.Errorf("primary called at %v, after it was disabled at %v", c, disabledAt)
					}
				}
				if st := o.stats[0]; !st.Disabled || st.DisabledClass != execution.ClassAuth {
					t.Errorf("primary stats %+v, want disabled by auth", st)
				}
			},
		},
		{
			name: "401 on the primary, failover_on_auth", items: 40,
			specs: []routeSpec{{name: "primary", failoverOnAuth: true, script: always(reply{status: 401})}, {name: "fallback", script: ok(20 * sec)}},
			check: func(t *testing.T, o *outcome) {
				o.allDone(t)
				if got := o.routeCalls(0); got > 8 {
					t.Errorf("primary got %d calls, want at most its cap (8)", got)
				}
				for i, r := range o.results {
					a := r.Attempts[0]
					why := a.Class == execution.ClassAuth || (a.Class == execution.ClassRejected && a.Reason == execution.ReasonDisabled)
					if r.Route != "fallback" || !why || !slices.Equal(r.Routes(), []string{"fallback"}) && !slices.Equal(r.Routes(), []string{"primary", "fallback"}) {
						t.Errorf("item %d: route %q, first attempt %s/%s; want fallback and the reason on record", i, r.Route, a.Class, a.Reason)
					}
				}
				if st := o.stats[0]; !st.Disabled || st.DisabledClass != execution.ClassAuth {
					t.Errorf("primary stats %+v, want disabled by auth (the summary's why)", st)
				}
			},
		},
		{
			name: "429 storm with Retry-After", items: 40,
			specs: []routeSpec{
				{name: "primary", script: func(_ int, at time.Duration) reply {
					if at < 2*minute {
						return reply{status: 429, header: map[string]string{"Retry-After": "20"}}
					}
					return reply{delay: 10 * sec}
				}},
				{name: "fallback", script: ok(30 * sec)},
			},
			check: func(t *testing.T, o *outcome) {
				o.allDone(t)
				checkCooldowns(t, o.w)
			},
		},
		{
			name: "wedged streaming primary (keep-alives only)", items: 40,
			specs: []routeSpec{
				{name: "primary", stream: true, script: always(reply{hang: true, keepalive: 5 * sec})},
				{name: "fallback", stream: true, script: ok(5 * sec)},
			},
			check: func(t *testing.T, o *outcome) {
				o.allDone(t)
				for _, r := range o.results {
					for _, a := range r.Attempts {
						if a.Route == "primary" && a.Kind != execution.KindProbe && a.Class == execution.ClassTimeout && a.Duration != 10*sec {
							t.Errorf("first-token timeout after %v, want 10s", a.Duration)
						}
					}
				}
				if o.wall > 2*minute {
					t.Errorf("review took %v, want < 2 min (first-token deadline 10s)", o.wall)
				}
			},
		},
	}
}

// checkCooldowns fails the test for any call to a route inside one of its
// cool-down windows, or after it was disabled.
func checkCooldowns(t *testing.T, w *world) {
	t.Helper()
	for i, s := range w.servers {
		name := w.routes[i].Name
		for _, ev := range w.routeEvents() {
			if ev.Route != name {
				continue
			}
			from := ev.At.Sub(w.origin)
			for _, c := range s.calls() {
				switch {
				case ev.Kind == execution.EventCooldown && c > from && c < ev.Until.Sub(w.origin):
					t.Errorf("route %s called at %v, inside its cool-down %v–%v", name, c, from, ev.Until.Sub(w.origin))
				case ev.Kind == execution.EventDisabled && c > from:
					t.Errorf("route %s called at %v, after it was disabled at %v", name, c, from)
				}
			}
		}
	}
}

// runWarden runs a scenario through the engine; call it inside a bubble.
func runWarden(t *testing.T, sc scenario) *outcome {
	t.Helper()
	w := newWorld(t, sc.specs)
	e, err := execution.New(w.routes, execution.DefaultPolicy(), execution.Options{
		Rand: rand.New(rand.NewPCG(1, 2)), OnRouteEvent: w.onEvent,
	})
	if err != nil {
		t.Fatal(err)
	}
	results := e.Run(t.Context(), items(sc.items), nil)
	return &outcome{wall: time.Since(w.origin), results: results, w: w, stats: e.Stats()}
}

func TestScenarios(t *testing.T) {
	t.Parallel()
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				o := runWarden(t, sc)
				if len(o.results) != sc.items {
					t.Fatalf("%d results for %d items", len(o.results), sc.items)
				}
				sc.check(t, o)
			})
		})
	}
}

// The heavy-tail schedule really has the measured shape.
func TestHeavyTailShape(t *testing.T) {
	t.Parallel()
	var d []time.Duration
	for n := range 1000 {
		d = append(d, heavyTail(n))
	}
	slices.Sort(d)
	if p95, m := d[949], d[999]; p95 < 5*minute || p95 > 7*minute || m != 43*minute {
		t.Errorf("heavy tail p95 %v, max %v; want ≈ 6 min and 43 min", p95, m)
	}
}

// A cancelled review returns at once; finished items are kept.
func TestScenarioCancelledReview(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, []routeSpec{{name: "primary", script: func(n int, _ time.Duration) reply {
			if n < 8 {
				return reply{delay: 10 * sec}
			}
			return reply{hang: true}
		}}})
		e, err := execution.New(w.routes, execution.DefaultPolicy(), execution.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(30*sec, cancel)
		results := e.Run(ctx, items(40), nil)
		if got := time.Since(w.origin); got != 30*sec {
			t.Errorf("Run returned %v after the start, want 30s (at once on cancel)", got)
		}
		done, failed, skipped := tally(results)
		if done != 8 || failed != 0 || skipped != 32 {
			t.Errorf("done %d, failed %d, skipped %d; want 8, 0, 32", done, failed, skipped)
		}
		for i, r := range results[:8] {
			if r.Response == nil || r.Response.Content != "answer from primary" {
				t.Errorf("item %d lost its answer: %+v", i, r)
			}
		}
		for i, r := range results[8:] {
			if r.Reason != execution.ReasonCancelled {
				t.Errorf("item %d: reason %q, want cancelled", i+8, r.Reason)
			}
		}
	})
}

// A panic in one item's answer check fails that item only.
func TestScenarioPanicInOneItem(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, []routeSpec{{name: "primary", script: always(reply{delay: sec})}})
		e, err := execution.New(w.routes, execution.DefaultPolicy(), execution.Options{})
		if err != nil {
			t.Fatal(err)
		}
		its := items(10)
		its[4].Accept = func(*execution.Response) error { panic("parser bug") }
		results := e.Run(t.Context(), its, nil)
		for i, r := range results {
			var pe *execution.PanicError
			if i == 4 {
				if r.Status != execution.StatusFailed || !errors.As(r.Err, &pe) || pe.Value != "parser bug" {
					t.Errorf("item 4: %s %v, want failed with the panic", r.Status, r.Err)
				}
				continue
			}
			if r.Status != execution.StatusDone {
				t.Errorf("item %d: %s, want done", i, r.Status)
			}
		}
	})
}
