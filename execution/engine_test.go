package execution

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/org/warden/internal/fakeopenai"
)

const sec = time.Second

func seeded() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

func mustNew(t *testing.T, routes []Route, p Policy, opts Options) *Engine {
	t.Helper()
	if opts.Rand == nil {
		opts.Rand = seeded()
	}
	e, err := New(routes, p, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func policy(mod func(*Policy)) Policy {
	p := DefaultPolicy()
	if mod != nil {
		mod(&p)
	}
	return p
}

// kinds lists each attempt as route:kind:class:decision.
func kinds(as []Attempt) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Route+":"+a.Kind.String()+":"+a.Class.String()+":"+a.Decision)
	}
	return out
}

// A3: three never-answering, non-streaming routes. Each route with a
// fallback leaves the item room for one failover attempt (issue 11): r0
// gets 120s, r1 60s (its 120s held so that r2's 120s still fits), r2 120s;
// the item fails at exactly 300s.
func TestNeverAnsweringChain(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		var fakes []*fakeProvider
		var routes []Route
		for _, n := range []string{"r0", "r1", "r2"} {
			f := newFake(n, t0, always(step{Hang: true}))
			fakes = append(fakes, f)
			routes = append(routes, route(n, f))
		}
		e := mustNew(t, routes, DefaultPolicy(), Options{})
		res := e.Run(t.Context(), testItems(1), nil)[0]
		if got := time.Since(t0); got != 300*sec {
			t.Errorf("Run took %v, want 300s", got)
		}
		want := []string{"r0:primary:timeout:failover", "r1:failover:timeout:failover", "r2:failover:timeout:fail"}
		if diff := cmp.Diff(want, kinds(res.Attempts)); diff != "" {
			t.Errorf("attempts (-want +got):\n%s", diff)
		}
		var got [][]time.Duration
		for _, a := range res.Attempts {
			got = append(got, []time.Duration{a.Start, a.Deadline, a.Duration})
		}
		wantTimes := [][]time.Duration{{0, 120 * sec, 120 * sec}, {120 * sec, 60 * sec, 60 * sec}, {180 * sec, 120 * sec, 120 * sec}}
		if diff := cmp.Diff(wantTimes, got); diff != "" {
			t.Errorf("attempt start, deadline, duration (-want +got):\n%s", diff)
		}
		for i, f := range fakes {
			if f.count() != 1 {
				t.Errorf("route r%d got %d calls, want 1", i, f.count())
			}
		}
		if res.Status != StatusFailed || res.Class != ClassTimeout {
			t.Errorf("result = %s/%s, want failed/timeout", res.Status, res.Class)
		}
		var te *TimeoutError
		if !errors.As(res.Err, &te) || !errors.Is(res.Err, context.DeadlineExceeded) ||
			!strings.Contains(res.Err.Error(), "timeout base 120000 ms, effective 120000 ms, given 120000 ms") {
			t.Errorf("result error %v, want a *TimeoutError stating base and effective ms", res.Err)
		}
		// A6: the provider sees exactly the attempt's deadline.
		if dl := fakes[1].deadlines[0]; dl != 60*sec {
			t.Errorf("r1 request deadline = %v, want 60s", dl)
		}
	})
}

func TestRetryFailoverAuth(t *testing.T) {
	t.Parallel()
	ok := step{Delay: sec}
	tests := []struct {
		name       string
		r0, r1     func(int) step
		r0Opts     func(*Route)
		pol        func(*Policy)
		items      int
		wantKinds  [][]string // per item
		wantCalls  [2]int
		wantStatus []Status
		wantClass  []Class
	}{
		{
			name:      "B1 503 then 200 retries on the same route",
			r0:        func(n int) step { return map[bool]step{true: {Status: 503}, false: ok}[n == 0] },
			r1:        always(ok),
			items:     1,
			wantKinds: [][]string{{"r0:primary:overloaded:retry", "r0:retry:success:done"}},
			wantCalls: [2]int{2, 0}, wantStatus: []Status{StatusDone}, wantClass: []Class{ClassSuccess},
		},
		{
			name:      "B2 500 twice then the next route",
			r0:        always(step{Status: 500}),
			r1:        always(ok),
			items:     1,
			wantKinds: [][]string{{"r0:primary:server_error:retry", "r0:retry:server_error:failover", "r1:failover:success:done"}},
			wantCalls: [2]int{2, 1}, wantStatus: []Status{StatusDone}, wantClass: []Class{ClassSuccess},
		},
		{
			name:  "B3 401 disables the route and fails loudly",
			r0:    always(step{Status: 401}),
			r1:    always(ok),
			items: 3,
			wantKinds: [][]string{
				{"r0:primary:auth:fail"},
				{"r0:primary:rejected:fail"},
				{"r0:primary:rejected:fail"},
			},
			wantCalls: [2]int{1, 0}, wantStatus: []Status{StatusFailed, StatusFailed, StatusFailed},
			wantClass: []Class{ClassAuth, ClassAuth, ClassAuth},
		},
		{
			name:   "B3 401 with failover_on_auth",
			r0:     always(step{Status: 401}),
			r1:     always(ok),
			r0Opts: func(r *Route) { r.FailoverOnAuth = true },
			items:  3,
			wantKinds: [][]string{
				{"r0:primary:auth:failover", "r1:failover:success:done"},
				{"r0:primary:rejected:failover", "r1:failover:success:done"},
				{"r0:primary:rejected:failover", "r1:failover:success:done"},
			},
			wantCalls: [2]int{1, 3}, wantStatus: []Status{StatusDone, StatusDone, StatusDone},
			wantClass: []Class{ClassSuccess, ClassSuccess, ClassSuccess},
		},
		{
			name:      "B4 402 payment disables too",
			r0:        always(step{Status: 402}),
			r1:        always(ok),
			items:     1,
			wantKinds: [][]string{{"r0:primary:payment:fail"}},
			wantCalls: [2]int{1, 0}, wantStatus: []Status{StatusFailed}, wantClass: []Class{ClassPayment},
		},
		{
			name:      "400 bad request: no retry, no failover",
			r0:        always(step{Status: 400}),
			r1:        always(ok),
			items:     1,
			wantKinds: [][]string{{"r0:primary:bad_request:fail"}},
			wantCalls: [2]int{1, 0}, wantStatus: []Status{StatusFailed}, wantClass: []Class{ClassBadRequest},
		},
		{
			name:      "B5 timeout: no same-route retry, failover at the deadline",
			r0:        always(step{Hang: true}),
			r1:        always(ok),
			items:     1,
			wantKinds: [][]string{{"r0:primary:timeout:failover", "r1:failover:success:done"}},
			wantCalls: [2]int{1, 1}, wantStatus: []Status{StatusDone}, wantClass: []Class{ClassSuccess},
		},
		{
			name:      "C3 Retry-After 3600: cool down and fail over, later items skip r0",
			r0:        always(fakeopenai.RetryAfter(429, "3600")),
			r1:        always(ok),
			items:     3,
			wantKinds: [][]string{{"r0:primary:rate_limited:failover", "r1:failover:success:done"}, {"r0:primary:rejected:failover", "r1:failover:success:done"}, {"r0:primary:rejected:failover", "r1:failover:success:done"}},
			wantCalls: [2]int{1, 3}, wantStatus: []Status{StatusDone, StatusDone, StatusDone},
			wantClass: []Class{ClassSuccess, ClassSuccess, ClassSuccess},
		},
		{
			// Issue 11: max_retry_after (30s) no longer blocks the 60s
			// rate_limit_backoff: it fits the 2m deadline, so it is waited.
			name:      "429 without Retry-After waits rate_limit_backoff and cools the route",
			r0:        always(step{Status: 429}),
			r1:        always(ok),
			items:     2,
			wantKinds: [][]string{{"r0:primary:rate_limited:retry", "r0:retry:rate_limited:failover", "r1:failover:success:done"}, {"r0:primary:rejected:failover", "r1:failover:success:done"}},
			wantCalls: [2]int{2, 2}, wantStatus: []Status{StatusDone, StatusDone},
			wantClass: []Class{ClassSuccess, ClassSuccess},
		},
		{
			name:      "retries 0: straight to failover",
			r0:        always(step{Status: 502}),
			r1:        always(ok),
			pol:       func(p *Policy) { p.MaxRetriesPerRoute = 0 },
			items:     1,
			wantKinds: [][]string{{"r0:primary:server_error:failover", "r1:failover:success:done"}},
			wantCalls: [2]int{1, 1}, wantStatus: []Status{StatusDone}, wantClass: []Class{ClassSuccess},
		},
		{
			// The last route has not answered at all: the item waits for
			// its trial calls for the outage patience (outage.go), then
			// fails with the class its calls ended with.
			name:  "all routes fail: the last class ends the item",
			r0:    always(step{Status: 503}),
			r1:    always(step{Status: 500}),
			pol:   func(p *Policy) { p.MaxRetriesPerRoute = 0 },
			items: 1,
			wantKinds: [][]string{{"r0:primary:overloaded:failover", "r1:failover:server_error:wait",
				"r1:readmit:server_error:wait", "r1:readmit:server_error:wait", "r1:readmit:server_error:wait",
				"r1:readmit:server_error:wait", "r1:readmit:rejected:fail"}},
			wantCalls: [2]int{1, 5}, wantStatus: []Status{StatusFailed}, wantClass: []Class{ClassServerError},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				f0, f1 := newFake("r0", t0, tt.r0), newFake("r1", t0, tt.r1)
				r0 := route("r0", f0)
				if tt.r0Opts != nil {
					tt.r0Opts(&r0)
				}
				e := mustNew(t, []Route{r0, route("r1", f1)}, policy(func(p *Policy) {
					p.MaxConcurrency = 1
					if tt.pol != nil {
						tt.pol(p)
					}
				}), Options{})
				results := e.Run(t.Context(), testItems(tt.items), nil)
				var gotKinds [][]string
				var gotStatus []Status
				var gotClass []Class
				for _, r := range results {
					gotKinds = append(gotKinds, kinds(r.Attempts))
					gotStatus = append(gotStatus, r.Status)
					gotClass = append(gotClass, r.Class)
				}
				if diff := cmp.Diff(tt.wantKinds, gotKinds); diff != "" {
					t.Errorf("attempts (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.wantStatus, gotStatus); diff != "" {
					t.Errorf("statuses (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.wantClass, gotClass); diff != "" {
					t.Errorf("classes (-want +got):\n%s", diff)
				}
				if got := [2]int{f0.count(), f1.count()}; got != tt.wantCalls {
					t.Errorf("calls = %v, want %v", got, tt.wantCalls)
				}
			})
		})
	}
}

// B1 in full: the retry waits exactly the seeded full-jitter draw, and the
// attempt records are complete.
func TestAttemptRecords(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		f0 := newFake("r0", t0, func(n int) step {
			if n == 0 {
				return step{Delay: 3 * sec, Status: 503}
			}
			return step{Delay: 4 * sec}
		})
		var events []RouteEvent
		e := mustNew(t, []Route{route("r0", f0)}, DefaultPolicy(), Options{OnRouteEvent: func(ev RouteEvent) { events = append(events, ev) }})
		results, stats := e.RunStats(t.Context(), testItems(1), nil)
		res := results[0]
		backoff := time.Duration(seeded().Int64N(int64(2 * sec)))
		want := []Attempt{
			{Route: "r0", Model: "model-r0", Kind: KindPrimary, Number: 1, Start: 0, TimeoutBase: 2 * time.Minute, TimeoutEffective: 2 * time.Minute,
				Deadline: 2 * time.Minute, ItemRemaining: 5 * time.Minute, ReviewRemaining: 870 * sec, Duration: 3 * sec,
				Class: ClassOverloaded, Decision: DecisionRetry, Breaker: "closed"},
			{Route: "r0", Model: "model-r0", Kind: KindRetry, Number: 2, Start: 3*sec + backoff, TimeoutBase: 2 * time.Minute, TimeoutEffective: 2 * time.Minute,
				Deadline: 2*time.Minute - 3*sec - backoff, ItemRemaining: 5*time.Minute - 3*sec - backoff, ReviewRemaining: 870*sec - 3*sec - backoff,
				Backoff: backoff, Duration: 4 * sec, Usage: Usage{PromptTokens: 10, CompletionTokens: 5}, ResponseModel: "model-r0",
				Class: ClassSuccess, Decision: DecisionDone, Breaker: "closed"},
		}
		if diff := cmp.Diff(want, res.Attempts, cmpopts.IgnoreFields(Attempt{}, "Err")); diff != "" {
			t.Errorf("attempts (-want +got):\n%s", diff)
		}
		if got := f0.calls(); got[1] != 3*sec+backoff {
			t.Errorf("retry sent at %v, want %v (3s + seeded backoff)", got[1], 3*sec+backoff)
		}
		if res.Route != "r0" || res.Response.Content != "ok from r0" || res.Duration != 7*sec+backoff {
			t.Errorf("result route %q, content %q, duration %v", res.Route, res.Response.Content, res.Duration)
		}
		if len(events) != 0 {
			t.Errorf("route events %v, want none", events)
		}
		st := stats[0]
		if st.Calls != 2 || st.OK != 1 || st.Failed != 1 || st.Retries != 1 || st.P50 != 3*sec || st.P95 != 4*sec {
			t.Errorf("Stats() = %+v", st)
		}
	})
}

// C1: a 429 with Retry-After: 3 is retried at ≥ 3s and < 3.3s.
func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	for seed := range uint64(20) {
		synctest.Test(t, func(t *testing.T) {
			t0 := time.Now()
			f0 := newFake("r0", t0, func(n int) step {
				if n == 0 {
					return fakeopenai.RetryAfter(429, "3")
				}
				return step{}
			})
			e := mustNew(t, []Route{route("r0", f0)}, DefaultPolicy(), Options{Rand: rand.New(rand.NewPCG(seed, seed))})
			res := e.Run(t.Context(), testItems(1), nil)[0]
			calls := f0.calls()
			if res.Status != StatusDone || len(calls) != 2 || calls[1] < 3*sec || calls[1] >= 3300*time.Millisecond {
				t.Errorf("seed %d: status %s, calls at %v; want done with the retry in [3s, 3.3s)", seed, res.Status, calls)
			}
		})
	}
}

// B7: the caller cancels: Run returns at once, finished items are kept,
// in-flight ones are skipped (cancelled) with their attempts, and the
// route's breaker does not count them.
func TestCancelledReview(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		f0 := newFake("r0", t0, func(n int) step {
			if n < 2 {
				return step{Delay: sec}
			}
			return step{Hang: true}
		})
		e := mustNew(t, []Route{route("r0", f0)}, policy(func(p *Policy) { p.MaxConcurrency = 2 }), Options{})
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(10*sec, cancel)
		results, stats := e.RunStats(ctx, testItems(10), nil)
		if got := time.Since(t0); got != 10*sec {
			t.Errorf("Run returned after %v, want 10s", got)
		}
		var got []string
		for _, r := range results {
			got = append(got, r.Status.String()+"/"+r.Reason+"/"+r.Class.String()+"/"+string(rune('0'+len(r.Attempts))))
		}
		want := []string{"done//success/1", "done//success/1", "skipped/cancelled/cancelled/1", "skipped/cancelled/cancelled/1"}
		for range 6 {
			want = append(want, "skipped/cancelled/cancelled/0")
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("results (-want +got):\n%s", diff)
		}
		st := stats[0]
		if st.Calls != 4 || st.OK != 2 || st.Cancelled != 2 || st.Breaker != BreakerClosed {
			t.Errorf("Stats() = %+v, want 4 calls, 2 ok, 2 cancelled, closed", st)
		}
	})
}

// A4: the review budget. 60 items, 4 at a time, each call takes 100s:
// waves start at 0, 100, …, 800s; the wave started at 800s is cut at 870s
// (budget 900s − reserve 30s); the other 24 items are skipped (budget).
func TestReviewBudget(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		f0 := newFake("r0", t0, always(step{Delay: 100 * sec}))
		e := mustNew(t, []Route{route("r0", f0)}, policy(func(p *Policy) { p.MaxConcurrency = 4 }), Options{})
		results, stats := e.RunStats(t.Context(), testItems(60), nil)
		if got := time.Since(t0); got != 870*sec {
			t.Errorf("Run took %v, want 870s", got)
		}
		count := map[string]int{}
		for _, r := range results {
			count[r.Status.String()+"/"+r.Class.String()+"/"+r.Reason]++
			if r.Duration > 5*time.Minute {
				t.Errorf("item took %v, over its 5m budget", r.Duration)
			}
		}
		want := map[string]int{"done/success/": 32, "failed/timeout/budget": 4, "skipped/unknown/budget": 24}
		if diff := cmp.Diff(want, count); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s", diff)
		}
		if st := stats[0]; st.Breaker != BreakerClosed {
			t.Errorf("breaker %s after budget cuts, want closed (clipped timeouts do not count)", st.Breaker)
		}
	})
}

// E1: one route with a cap of 2 under a pool of 8: the queue waits (no
// failover target), never more than 2 in flight, 20 × 5s / 2 = 50s.
func TestBulkheadSingleRoute(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		f0 := newFake("r0", t0, always(step{Delay: 5 * sec}))
		r0 := route("r0", f0)
		r0.MaxConcurrency = 2
		e := mustNew(t, []Route{r0}, DefaultPolicy(), Options{})
		results := e.Run(t.Context(), testItems(20), nil)
		if got := time.Since(t0); got != 50*sec {
			t.Errorf("Run took %v, want 50s", got)
		}
		if f0.peak() != 2 {
			t.Errorf("peak in flight %d, want 2", f0.peak())
		}
		for i, r := range results {
			if r.Status != StatusDone {
				t.Errorf("item %d: %s %s", i, r.Status, r.Class)
			}
		}
	})
}

// D4: the bulkhead stays full for 15s: the item waits MaxQueueWait (10s),
// then fails over; the record says queue_wait = 10s. Both items are
// eligible at once, so either may take the route's one slot: the other is
// the one that waits.
func TestBulkheadFailover(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		f0 := newFake("r0", t0, always(step{Delay: 15 * sec}))
		f1 := newFake("r1", t0, always(step{Delay: sec}))
		r0 := route("r0", f0)
		r0.MaxConcurrency = 1
		e := mustNew(t, []Route{r0, route("r1", f1)}, DefaultPolicy(), Options{})
		results := e.Run(t.Context(), testItems(2), nil)
		slot, waiter := results[0].Attempts, results[1].Attempts
		if len(slot) == 2 {
			slot, waiter = waiter, slot
		}
		if diff := cmp.Diff([]string{"r0:primary:success:done"}, kinds(slot)); diff != "" {
			t.Errorf("the item with the slot (-want +got):\n%s", diff)
		}
		a := waiter
		if diff := cmp.Diff([]string{"r0:primary:rejected:failover", "r1:failover:success:done"}, kinds(a)); diff != "" {
			t.Fatalf("the item that waited (-want +got):\n%s", diff)
		}
		if a[0].QueueWait != 10*sec || a[0].Reason != ReasonBulkheadFull || a[1].Start != 10*sec {
			t.Errorf("rejected attempt: queue wait %v, reason %q; failover at %v; want 10s, bulkhead_full, 10s", a[0].QueueWait, a[0].Reason, a[1].Start)
		}
	})
}

// Pacing: min_interval spaces request starts on a route.
func TestPacing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		f0 := newFake("r0", t0, always(step{}))
		r0 := route("r0", f0)
		r0.MinInterval = 5 * sec
		e := mustNew(t, []Route{r0}, DefaultPolicy(), Options{})
		e.Run(t.Context(), testItems(4), nil)
		if diff := cmp.Diff([]time.Duration{0, 5 * sec, 10 * sec, 15 * sec}, f0.calls()); diff != "" {
			t.Errorf("call starts (-want +got):\n%s", diff)
		}
	})
}

// E5: a panic in one item's Accept (the review layer's parser) fails only
// that item.
func TestPanicInOneItem(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		f0 := &panicsOnCall{Provider: newFake("r0", t0, always(step{Delay: sec})), n: 5}
		e := mustNew(t, []Route{route("r0", f0)}, policy(func(p *Policy) { p.MaxConcurrency = 1 }), Options{})
		items := testItems(8)
		items[3].Accept = func(*Response) error { panic("parser bug") }
		results := e.Run(t.Context(), items, nil)
		for i, r := range results {
			var pe *PanicError
			wantPanic := i == 3 || i == 5
			if got := r.Status == StatusFailed && r.Class == ClassUnknown && errors.As(r.Err, &pe); got != wantPanic {
				t.Errorf("item %d: %s %s %v; want panic failure %v", i, r.Status, r.Class, r.Err, wantPanic)
			}
			if !wantPanic && r.Status != StatusDone {
				t.Errorf("item %d: %s, want done", i, r.Status)
			}
		}
	})
}

// panicsOnCall is Provider, except that its call n panics (a provider bug).
type panicsOnCall struct {
	Provider
	n int

	mu    sync.Mutex
	calls int
}

func (p *panicsOnCall) Complete(ctx context.Context, req *Request) (*Response, error) {
	p.mu.Lock()
	n := p.calls
	p.calls++
	p.mu.Unlock()
	if n == p.n {
		panic("provider bug")
	}
	return p.Provider.Complete(ctx, req)
}

// Streaming routes get an idle watchdog inside the attempt, and a
// first-token watchdog only when the route sets one (issue 22: seed 003's
// healthy backend averaged 25.4 s to its first token, so no default may
// cut there).
func TestStreamTimeouts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		r               Route
		body            int
		deadline        time.Duration
		wantTTFT, wantI time.Duration
	}{
		{"no first-token watchdog by default", Route{}, 4000, 2 * time.Minute, 0, 30 * sec},
		{"none for a huge request either", Route{}, 10_000_000, 5 * time.Minute, 0, 30 * sec},
		{"idle clipped to the attempt", Route{}, 4000, 8 * sec, 0, 8 * sec},
		{"route values win", Route{FirstTokenTimeout: 90 * sec, IdleTimeout: 45 * sec}, 4000, 5 * time.Minute, 90 * sec, 45 * sec},
		{"an opted-in watchdog is clipped to the attempt", Route{FirstTokenTimeout: 90 * sec}, 4000, 60 * sec, 60 * sec, 30 * sec},
	}
	for _, tt := range tests {
		ttft, idle := StreamTimeouts(tt.r, tt.body, tt.deadline)
		if ttft != tt.wantTTFT || idle != tt.wantI {
			t.Errorf("%s: StreamTimeouts(%d, %v) = %v, %v, want %v, %v", tt.name, tt.body, tt.deadline, ttft, idle, tt.wantTTFT, tt.wantI)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		f0 := newFake("r0", time.Now(), always(step{}))
		r0 := route("r0", f0)
		r0.Stream = true
		e := mustNew(t, []Route{r0}, DefaultPolicy(), Options{})
		res := e.Run(t.Context(), testItems(1), nil)[0]
		got := f0.reqs[0]
		if !got.Stream || got.FirstTokenTimeout != 0 || got.IdleTimeout != 30*sec || got.Model != "model-r0" {
			t.Errorf("request = stream %v, ttft %v, idle %v, model %q", got.Stream, got.FirstTokenTimeout, got.IdleTimeout, got.Model)
		}
		if a := res.Attempts[0]; a.FirstTokenTimeout != 0 || a.IdleTimeout != 30*sec {
			t.Errorf("attempt watchdogs %v, %v", a.FirstTokenTimeout, a.IdleTimeout)
		}
	})
}

// B8: the review-wide retry budget, max(3, 10% of calls).
func TestRetryBudget(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		f0 := newFake("r0", t0, always(step{Status: 500}))
		f1 := newFake("r1", t0, always(step{}))
		r0 := route("r0", f0)
		r0.Breaker.Disabled = true
		e := mustNew(t, []Route{r0, route("r1", f1)}, policy(func(p *Policy) { p.MaxConcurrency = 1 }), Options{})
		results := e.Run(t.Context(), testItems(20), nil)
		retries, exhausted := 0, 0
		for _, r := range results {
			for _, a := range r.Attempts {
				if a.Kind == KindRetry {
					retries++
				}
				if a.Reason == ReasonRetryBudget {
					exhausted++
				}
			}
		}
		calls := f0.count() + f1.count()
		if allowed := max(3, calls/10); retries > allowed || retries < allowed-1 || exhausted == 0 {
			t.Errorf("%d retries over %d calls (%d refused by the budget), want max(3, 10%%)", retries, calls, exhausted)
		}
	})
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	p := newFake("p", time.Now(), always(step{}))
	tests := []struct {
		name   string
		routes []Route
		pol    func(*Policy)
	}{
		{"no routes", nil, nil},
		{"no provider", []Route{{Name: "a"}}, nil},
		{"duplicate names", []Route{route("a", p), route("a", p)}, nil},
		{"zero budget", []Route{route("a", p)}, func(p *Policy) { p.Budget = 0 }},
		{"reserve over budget", []Route{route("a", p)}, func(p *Policy) { p.Reserve = p.Budget }},
		{"negative retries", []Route{route("a", p)}, func(p *Policy) { p.MaxRetriesPerRoute = -1 }},
		{"no request timeout", []Route{route("a", p)}, func(p *Policy) { p.RequestTimeout = 0 }},
		{"negative schedule", []Route{route("a", p)}, func(p *Policy) { p.BackoffSchedule = []time.Duration{-1} }},
	}
	for _, tt := range tests {
		if _, err := New(tt.routes, policy(tt.pol), Options{}); err == nil {
			t.Errorf("New(%s) = nil error, want one", tt.name)
		}
	}
	e, err := New([]Route{route("a", p)}, Policy{Budget: time.Minute, ItemBudget: time.Minute, RequestTimeout: time.Minute, MaxConcurrency: 1}, Options{})
	if err != nil {
		t.Fatalf("New with an old-style Policy: %v", err)
	}
	if got := e.Policy(); got.MaxQueueWait != 10*sec || got.RetryBudgetMin != 3 || got.MaxRetryAfter != 30*sec {
		t.Errorf("New did not default the new fields: %+v", got)
	}
}
