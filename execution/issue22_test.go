package execution

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Regression tests for issue 22's engine rules, in virtual time. Each one
// failed on main (or did not compile: Activity, OutagePatience and
// KindReadmit did not exist).

// acceptJSON is an item's Accept that wants the output contract's JSON
// object: prose is an unusable answer.
func acceptJSON(r *Response) error {
	if !strings.HasPrefix(r.Content, "{") {
		return fmt.Errorf("not the output contract")
	}
	return nil
}

// opened records the times a route's breaker opened, from OnRouteEvent.
type opened struct {
	mu sync.Mutex
	at []time.Duration
	t0 time.Time
}

func (o *opened) event(ev RouteEvent) {
	if ev.Kind == EventBreaker && ev.To == BreakerOpen {
		o.mu.Lock()
		o.at = append(o.at, ev.At.Sub(o.t0))
		o.mu.Unlock()
	}
}

func (o *opened) times() []time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]time.Duration(nil), o.at...)
}

// The default breaker window, max(5m, 2 × the route's longest attempt),
// tested by what the breaker does rather than by the number it records:
// three failures and no answer open it only while all three are inside the
// window. One item at a time, one call each: every k-th call answers prose
// after 1 s (unusable: a failure the breaker counts, and not an outage the
// last route is waited for, so each item ends with its call), the others a
// 400 after 1m59s (which the breaker ignores), so the failures come about
// 2 minutes × (k−1) apart. (A 500 would itself open the breaker: the one
// item failing on its last route with no answer in the window trips it.)
func TestBreakerWindowByBehaviour(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		pol      func(*Policy)
		every    int
		wantOpen bool
	}{
		// Base 2m × 8 held by the 5m item budget: the longest attempt is
		// 5m, the window 10m. Failures about 4 minutes apart: inside 10m.
		{"2 × the longest attempt: failures 8 minutes apart count together", nil, 3, true},
		{"and 12 minutes apart they do not", nil, 4, false},
		// Base and item budget 2m: 2 × 2m = 4m, so the 5m floor: failures
		// at 1s, 2m1s and 4m1s count together, although 4m would drop the
		// first.
		{"the 5 minute floor", func(p *Policy) { p.ItemBudget, p.RequestTimeout = 2*minute, 2*minute }, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				f := newFake("only", t0, func(n int) step {
					if n%tt.every == 0 {
						return step{Delay: sec, Content: "Looks good to me."}
					}
					return step{Delay: 119 * sec, Status: 400}
				})
				r := route("only", f)
				pol := policy(func(p *Policy) {
					p.MaxConcurrency, p.MaxRetriesPerItem = 1, -1 // one call per item, one item at a time
					if tt.pol != nil {
						tt.pol(p)
					}
				})
				ev := &opened{t0: t0}
				e := mustNew(t, []Route{r}, pol, Options{OnRouteEvent: ev.event})
				its := testItems(2*tt.every + 1)
				for i := range its {
					its[i].Accept = acceptJSON
				}
				e.Run(t.Context(), its, nil)
				var failures []time.Duration
				for n, c := range f.calls() {
					if n%tt.every == 0 {
						failures = append(failures, c+sec)
					}
				}
				if len(failures) != 3 {
					t.Fatalf("failures at %v, want 3", failures)
				}
				if got := len(ev.times()) > 0; got != tt.wantOpen {
					t.Errorf("failures at %v, window %v: breaker opened at %v, want opened = %v",
						failures, e.Policy().BreakerWindow(r), ev.times(), tt.wantOpen)
				}
			})
		})
	}
}

// The engine's re-admission probe of a route with a fallback carries the
// probe-designated key (its own Provider) and the probe model, as seed 003
// §4 asks ("Send a real model name and use a real (probe-designated)
// key"); the route's own key and model never send a probe.
func TestProbeCarriesTheProbeKeyAndModel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		own := newFake("primary", t0, always(step{Delay: sec, Status: 500}))
		probes := newFake("primary-probe", t0, always(step{Delay: sec}))
		fb := newFake("fallback", t0, always(step{Delay: 20 * sec}))
		p0 := route("primary", own)
		p0.ProbeProvider, p0.ProbeModel = probes, "probe-model"
		e := mustNew(t, []Route{p0, route("fallback", fb)}, policy(func(p *Policy) { p.MaxConcurrency = 1 }), Options{})
		res := e.Run(t.Context(), testItems(6), nil)
		if probes.count() == 0 {
			t.Fatalf("no probe was sent (primary calls %d); attempts %v", own.count(), kinds(res[len(res)-1].Attempts))
		}
		for i, req := range probes.reqs {
			if req.Model != "probe-model" || len(req.Messages) != 1 || req.Messages[0].Content != ProbeMessage {
				t.Errorf("probe %d = model %q, messages %v; want the probe model and the probe message", i, req.Model, req.Messages)
			}
		}
		for i, req := range own.reqs {
			if req.Model != "model-primary" || (len(req.Messages) == 1 && req.Messages[0].Content == ProbeMessage) {
				t.Errorf("the route's own provider got call %d: model %q %v; a probe must go with the probe key", i, req.Model, req.Messages)
			}
		}
		probed := 0
		for _, r := range res {
			for _, a := range r.Attempts {
				if a.Kind == KindProbe {
					probed++
					if a.Model != "probe-model" {
						t.Errorf("probe attempt recorded with model %q, want probe-model", a.Model)
					}
				}
			}
		}
		if probed != probes.count() {
			t.Errorf("%d probe attempts recorded, the probe key sent %d", probed, probes.count())
		}
	})
}

// The outage patience (outage.go): a route that answers nothing is waited
// for while the patience lasts, then given up: the waiting items fail
// together at once (class timeout), and no item reaches the route again.
// The review ends when the patience runs out, or when the trial calls then
// in flight end: at most one attempt deadline (2m) later.
func TestOutagePatienceGivesTheRouteUp(t *testing.T) {
	t.Parallel()
	for _, patience := range []time.Duration{3 * minute, 4 * minute} {
		t.Run(patience.String(), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				f := newFake("only", t0, always(step{Hang: true}))
				e := mustNew(t, []Route{route("only", f)}, policy(func(p *Policy) { p.OutagePatience = patience }), Options{})
				res := e.Run(t.Context(), testItems(20), nil)
				wall := time.Since(t0)
				done, failed, _ := countStatus(res)
				if done != 0 || failed != 20 || wall > patience+2*minute {
					t.Errorf("reviewed %d, failed %d in %v; want 0, 20 within the %v patience from the first call and one deadline", done, failed, wall, patience)
				}
				t.Logf("patience %v: wall %v, %d calls", patience, wall, f.count())
				for i, r := range res {
					if r.Class != ClassTimeout {
						t.Errorf("item %d ended %s/%s, want timeout", i, r.Class, r.Reason)
					}
				}
				if n := f.count(); n > 20 {
					t.Errorf("%d calls for 20 items: the route was tried after it was given up", n)
				}
			})
		})
	}
}

// A route that flaps back within the patience keeps its items: the failed
// trials re-arm the cool-down and every item waits, then is readmitted
// (KindReadmit, not a retry: no item makes more than its one retry).
func TestOutageShorterThanPatienceCostsTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		f := newFake("only", t0, func(int) step {
			if time.Since(t0) < 150*sec { // a 2.5-minute storm of 503s
				return step{Delay: sec, Status: 503}
			}
			return step{Delay: 2 * sec}
		})
		e := mustNew(t, []Route{route("only", f)}, DefaultPolicy(), Options{})
		res := e.Run(t.Context(), testItems(12), nil)
		done, _, _ := countStatus(res)
		if done != 12 {
			t.Errorf("reviewed %d of 12 after a 150s storm, want all (patience 5m)", done)
		}
		readmits := 0
		for i, r := range res {
			retries := 0
			for _, a := range r.Attempts {
				switch a.Kind {
				case KindRetry:
					retries++
				case KindReadmit:
					readmits++
				}
			}
			if retries > 1 {
				t.Errorf("item %d made %d retries, want at most 1: %v", i, retries, kinds(r.Attempts))
			}
		}
		if readmits == 0 {
			t.Errorf("no readmission: the items did not wait for the route")
		}
		t.Logf("wall %v, %d calls, %d readmissions", time.Since(t0), f.count(), readmits)
	})
}

// Every wait wakes on a verdict that makes it pointless: items waiting out
// the profile's 5 s spacing, a backoff or a breaker fail at the moment a
// 401 disables the route, not when their wait would have ended.
func TestWaitsWakeOnAVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		route  func(*Route)
		script func(int) step
		items  int
		want   time.Duration // when every item has ended
	}{
		{"pacing", func(r *Route) { r.Profile = ProfileLiteLLM }, func(int) step { return step{Delay: sec, Status: 401} }, 8, sec},
		{"backoff", func(r *Route) { r.Profile = ProfileLiteLLM }, func(n int) step {
			if n == 0 {
				return step{Delay: sec, Status: 503} // item 0 waits out its 15s backoff
			}
			return step{Delay: 2 * sec, Status: 401} // item 1's 401, 5s later, disables the route
		}, 2, 7 * sec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				f := newFake("only", t0, tt.script)
				r := route("only", f)
				tt.route(&r)
				e := mustNew(t, []Route{r}, policy(func(p *Policy) { p.ItemBudget, p.Budget = 16*minute, 30*minute }), Options{})
				res := e.Run(t.Context(), testItems(tt.items), nil)
				if got := time.Since(t0); got != tt.want {
					t.Errorf("Run returned at %v, want %v (the 401's verdict)", got, tt.want)
				}
				for i, r := range res {
					if r.Status != StatusFailed || r.Class != ClassAuth {
						t.Errorf("item %d: %s/%s %v, want failed/auth", i, r.Status, r.Class, kinds(r.Attempts))
					}
				}
			})
		})
	}
}

// Engine.Activity says what is in flight, on which route, for how long and
// with what deadline, and what waits and why: what the progress lines
// print while nothing finishes.
func TestActivity(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		f := newFake("slow", t0, func(n int) step {
			if n == 0 {
				return step{Delay: sec, Status: 503} // the first call's item backs off, then waits for the breaker
			}
			return step{Delay: 90 * sec}
		})
		e := mustNew(t, []Route{route("slow", f)}, policy(func(p *Policy) { p.MaxConcurrency = 3 }), Options{})
		if got := e.Activity(); got != nil {
			t.Errorf("Activity() before Run = %v, want nil", got)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.Run(ctx, testItems(3), nil)
		}()
		time.Sleep(1500 * time.Millisecond) // one item backs off; the other two are in flight
		synctest.Wait()
		// The three items start at once: whichever calls first gets the
		// 503 and backs off, the other two are in flight.
		var got []string
		var items []int
		for _, a := range e.Activity() {
			got = append(got, fmt.Sprintf("%s %q %s %v %v", a.Route, a.Waiting, a.Kind, a.Since, a.Deadline))
			items = append(items, a.Item)
		}
		slices.Sort(got)
		want := []string{
			`slow "" primary 1.5s 2m0s`,
			`slow "" primary 1.5s 2m0s`,
			`slow "backoff" primary 500ms 0s`,
		}
		if diff := cmp.Diff(want, got); diff != "" || !slices.Equal(items, []int{0, 1, 2}) {
			t.Errorf("Activity() of items %v (-want +got):\n%s", items, diff)
		}
		cancel()
		<-done
		if got := e.Activity(); got != nil {
			t.Errorf("Activity() after Run = %v, want nil", got)
		}
	})
}

// A default streaming route has no first-token watchdog: a first token at
// 25 s (seed 003's measured average on a healthy backend) is waited for.
func TestNoDefaultFirstTokenWatchdog(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFake("stream", time.Now(), always(step{Delay: 25 * sec}))
		r := route("stream", f)
		r.Stream = true
		e := mustNew(t, []Route{r}, DefaultPolicy(), Options{})
		res := e.Run(t.Context(), testItems(8), nil)
		for i, r := range res {
			if r.Status != StatusDone || r.Attempts[0].FirstTokenTimeout != 0 {
				t.Errorf("item %d: %s, first-token watchdog %v; want done with none", i, r.Status, r.Attempts[0].FirstTokenTimeout)
			}
		}
		for i, req := range f.reqs {
			if req.FirstTokenTimeout != 0 {
				t.Errorf("request %d carried a first-token watchdog of %v", i, req.FirstTokenTimeout)
			}
		}
	})
}

// Unusable answers count against the route like 5xx: a model that only
// answers prose opens the breaker on its first answers, its one trial
// answers prose too, and the review ends after about one wave of calls,
// every item with class bad_response; the items never sent say
// output_contract, not probe_failed.
func TestProseModelEndsAfterAWave(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFake("prose", time.Now(), always(step{Delay: 2 * sec, Content: "Sure! Looks good to me."}))
		e := mustNew(t, []Route{route("prose", f)}, DefaultPolicy(), Options{})
		its := testItems(40)
		for i := range its {
			its[i].Accept = acceptJSON
		}
		res := e.Run(t.Context(), its, nil)
		if n := f.count(); n > 9 {
			t.Errorf("%d calls for 40 items, want one wave (8) and one trial", n)
		}
		for i, r := range res {
			if r.Status != StatusFailed || r.Class != ClassBadResponse {
				t.Errorf("item %d: %s/%s, want failed/bad_response", i, r.Status, r.Class)
			}
			if r.Reason == ReasonUnresponsive {
				t.Errorf("item %d: reason %s, want the contract said (%s) rather than a probe", i, r.Reason, ReasonContract)
			}
		}
	})
}

// refusing is a route whose first n calls fail with a refused connection,
// then delegates to f: a server restarting.
type refusing struct {
	*fakeProvider
	n int
}

func (p *refusing) Complete(ctx context.Context, req *Request) (*Response, error) {
	if p.count() < p.n {
		p.fakeProvider.Complete(ctx, req) // counted; its answer is replaced
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	return p.fakeProvider.Complete(ctx, req)
}

// A review too small to reach QuickTrip still meets an outage: an item
// whose retry is spent on its last route, on a transient failure, with no
// answer from the route in the breaker's window, waits for the route's
// trial call (a readmission, not a retry: one retry each) instead of
// failing. Auth, payment and model-not-found still fail at once; unusable
// answers keep their rule (the item fails when its retry answers prose
// too); a route that answered in the window fails the item as before.
func TestLastRouteWaitsBelowQuickTrip(t *testing.T) {
	t.Parallel()
	prose := step{Delay: sec, Content: "Looks good to me."}
	good := step{Delay: sec, Content: `{"findings":[]}`}
	firstTwo := func(bad step) func(int) step {
		return func(n int) step {
			if n < 2 {
				return bad
			}
			return good
		}
	}
	tests := []struct {
		name      string
		script    func(int) step
		refuse    int // calls refused before the script answers
		items     int
		wantKinds [][]string
		wantCalls int
		wantMax   time.Duration // the review's wall, at most
	}{
		{
			name: "two 503s then answers: one item waits and is reviewed", script: firstTwo(step{Delay: 100 * time.Millisecond, Status: 503}), items: 1,
			wantKinds: [][]string{{"only:primary:overloaded:retry", "only:retry:overloaded:wait", "only:readmit:success:done"}},
			wantCalls: 3, wantMax: 10 * sec,
		},
		{
			name: "two 500s", script: firstTwo(step{Delay: sec, Status: 500}), items: 1,
			wantKinds: [][]string{{"only:primary:server_error:retry", "only:retry:server_error:wait", "only:readmit:success:done"}},
			wantCalls: 3, wantMax: 10 * sec,
		},
		{
			name: "two refused connections", script: always(good), refuse: 2, items: 1,
			wantKinds: [][]string{{"only:primary:connection:retry", "only:retry:connection:wait", "only:readmit:success:done"}},
			wantCalls: 3, wantMax: 10 * sec,
		},
		{
			name: "401 fails at once", script: always(step{Status: 401}), items: 1,
			wantKinds: [][]string{{"only:primary:auth:fail"}}, wantCalls: 1,
		},
		{
			name: "402 fails at once", script: always(step{Status: 402}), items: 1,
			wantKinds: [][]string{{"only:primary:payment:fail"}}, wantCalls: 1,
		},
		{
			name: "404 model not found fails at once", script: always(step{Status: 404, Code: "model_not_found"}), items: 1,
			wantKinds: [][]string{{"only:primary:model_not_found:fail"}}, wantCalls: 1,
		},
		{
			name: "prose twice: the item fails, as before", script: firstTwo(prose), items: 1,
			wantKinds: [][]string{{"only:primary:bad_response:retry", "only:retry:bad_response:fail"}}, wantCalls: 2,
		},
		{
			// One item at a time: the first is answered; the second's
			// 503s meet a window that holds that answer.
			name: "an answer in the window: the item fails, as before",
			script: func(n int) step {
				if n == 0 {
					return good
				}
				return step{Delay: 100 * time.Millisecond, Status: 503}
			},
			items: 2,
			wantKinds: [][]string{
				{"only:primary:success:done"},
				{"only:primary:overloaded:retry", "only:retry:overloaded:fail"},
			},
			wantCalls: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				f := newFake("only", t0, tt.script)
				var p Provider = f
				if tt.refuse > 0 {
					p = &refusing{fakeProvider: f, n: tt.refuse}
				}
				e := mustNew(t, []Route{route("only", p)}, policy(func(p *Policy) { p.MaxConcurrency = 1 }), Options{})
				its := testItems(tt.items)
				for i := range its {
					its[i].Accept = acceptJSON
				}
				res := e.Run(t.Context(), its, nil)
				var got [][]string
				for _, r := range res {
					got = append(got, kinds(r.Attempts))
				}
				if diff := cmp.Diff(tt.wantKinds, got); diff != "" {
					t.Errorf("attempts (-want +got):\n%s", diff)
				}
				if n := f.count(); n != tt.wantCalls {
					t.Errorf("%d calls, want %d", n, tt.wantCalls)
				}
				if wall := time.Since(t0); tt.wantMax > 0 && wall > tt.wantMax {
					t.Errorf("wall %v, want ≤ %v", wall, tt.wantMax)
				}
			})
		})
	}
}
