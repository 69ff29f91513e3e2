package execution

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/org/warden/internal/fakeopenai"
)

// Regression tests for issue 11's engine rules, at the incidents' own time
// scales, in virtual time. Each one failed on main (or did not compile:
// route profiles and Policy.Validate did not exist).

const minute = time.Minute

func countStatus(rs []Result) (done, failed, skipped int) {
	for _, r := range rs {
		switch r.Status {
		case StatusDone:
			done++
		case StatusFailed:
			failed++
		case StatusSkipped:
			skipped++
		}
	}
	return done, failed, skipped
}

// itemCalls counts the requests an item's attempts sent, probes included.
func sentCalls(rs []Result) (items, probes int) {
	for _, r := range rs {
		for _, a := range r.Attempts {
			switch {
			case a.Class == ClassRejected:
			case a.Kind == KindProbe:
				probes++
			default:
				items++
			}
		}
	}
	return items, probes
}

// Problem 1: a wedged primary with 300 s deadlines and a healthy fallback,
// 40 items. On main: 40 primary calls, 40 timeouts, 0 breaker opens,
// 26 min 40 s. Now the breaker opens on the first wave (at most the route's
// cap of timeouts), every item is reviewed, and the wall is one primary
// deadline plus the fallback's own work, within 10%.
func TestIssue11WedgedPrimaryOpensBreaker(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		pf := newFake("primary", t0, always(step{Hang: true}))
		ff := newFake("fallback", t0, always(step{Delay: 20 * sec}))
		p0, fb := route("primary", pf), route("fallback", ff)
		p0.RequestTimeout, p0.MaxConcurrency, fb.MaxConcurrency = 300*sec, 4, 4
		pol := policy(func(p *Policy) { p.ItemBudget = 10 * minute; p.Budget = 30 * minute })
		routes := []Route{p0, fb}
		if err := pol.Validate(routes); err != nil {
			t.Fatal(err)
		}
		e := mustNew(t, routes, pol, Options{})
		res, st := e.RunStats(t.Context(), testItems(40), nil)
		wall := time.Since(t0)
		done, _, _ := countStatus(res)
		work := 40 * 20 * sec / 4 // the fallback's own work: 40 answers of 20s, 4 at a time
		t.Logf("wall %v, reviewed %d/40, primary calls %d (probes %d), timeouts %d, breaker opens %d", wall, done, pf.count(), st[0].Probes, st[0].Timeouts, st[0].CircuitOpens)
		if done != 40 {
			t.Errorf("reviewed %d of 40, want all", done)
		}
		if st[0].CircuitOpens == 0 {
			t.Errorf("primary breaker never opened")
		}
		if items := pf.count() - st[0].Probes; items > 4 {
			t.Errorf("primary got %d item calls, want at most its cap (4) before the breaker opens", items)
		}
		if limit := (300*sec + work) * 11 / 10; wall > limit {
			t.Errorf("wall %v, want ≤ %v (one primary deadline + the fallback's work + 10%%)", wall, limit)
		}
	})
}

// The single-route wedge, under the defaults and under the profile: never a
// second wave of full-deadline timeouts (at most 1.1 calls per item), and
// the verdict provider-unavailable within the outage patience (issue 22:
// the item budget, counted from the first unanswered call, sent at 0; the
// items waiting for the route's trial calls fail then). With or without a
// probe model: on the last route the trial calls are the items' own
// requests.
func TestIssue11WedgedSingleRoute(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		profile    Profile
		probeModel string
		limit      time.Duration
	}{
		{"defaults", ProfileNone, "", 5 * minute},
		{"litellm profile, probe model", ProfileLiteLLM, "probe-model", 16 * minute},
		{"litellm profile, own model", ProfileLiteLLM, "", 16 * minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				f := newFake("only", t0, always(step{Hang: true}))
				r := route("only", f)
				r.Profile, r.ProbeModel = tt.profile, tt.probeModel
				pol := policy(func(p *Policy) {
					if tt.profile != ProfileNone {
						p.ItemBudget, p.Budget = 16*minute, 30*minute
					}
				})
				if err := pol.Validate([]Route{r}); err != nil {
					t.Fatal(err)
				}
				e := mustNew(t, []Route{r}, pol, Options{})
				res := e.Run(t.Context(), testItems(40), nil)
				wall := time.Since(t0)
				done, failed, _ := countStatus(res)
				items, probes := sentCalls(res)
				t.Logf("wall %v, reviewed %d, failed %d, calls %d (+%d probes), %.2f per item", wall, done, failed, items, probes, float64(f.count())/40)
				if done != 0 || failed != 40 {
					t.Errorf("reviewed %d, failed %d; want provider-unavailable (0, 40)", done, failed)
				}
				if wall > tt.limit {
					t.Errorf("wall %v, want ≤ %v", wall, tt.limit)
				}
				if per := float64(f.count()) / 40; per > 1.1 {
					t.Errorf("%.2f calls per item, want ≤ 1.1", per)
				}
			})
		})
	}
}

// Problem 3: a 2-second blip (503 for the calls that start in the first
// 2 s) on a single route, 40 items. On main with the profile: 0 reviewed,
// 40 failed in 16 s (circuit_open 34, retry_budget 6). Now ≥ 95% reviewed,
// under the profile and under the defaults.
func TestIssue11BlipOnSingleRoute(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		profile Profile
		answer  time.Duration
	}{
		{"litellm profile", ProfileLiteLLM, 30 * sec},
		{"defaults", ProfileNone, 20 * sec},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				f := newFake("only", t0, func(int) step {
					if time.Since(t0) < 2*sec {
						return step{Delay: 100 * time.Millisecond, Status: 503}
					}
					return step{Delay: tt.answer}
				})
				r := route("only", f)
				r.Profile = tt.profile
				pol := policy(func(p *Policy) {
					if tt.profile != ProfileNone {
						p.ItemBudget, p.Budget = 16*minute, 30*minute
					}
				})
				e := mustNew(t, []Route{r}, pol, Options{})
				res := e.Run(t.Context(), testItems(40), nil)
				done, failed, skipped := countStatus(res)
				t.Logf("wall %v, reviewed %d, failed %d, skipped %d, calls %d", time.Since(t0), done, failed, skipped, f.count())
				if done < 38 {
					for i, r := range res {
						if r.Status != StatusDone {
							t.Logf("item %d: %s %s %s %v", i, r.Status, r.Class, r.Reason, kinds(r.Attempts))
						}
					}
					t.Errorf("reviewed %d of 40, want ≥ 95%%", done)
				}
			})
		})
	}
}

// bigItems returns n items whose body is about chars characters.
func bigItems(n, chars int) []Item {
	out := make([]Item, n)
	for i := range out {
		out[i] = Item{Request: &Request{
			Messages:  []Message{{Role: "system", Content: "review"}, {Role: "user", Content: fmt.Sprintf("hunk %d\n%s", i, strings.Repeat("x", chars))}},
			MaxTokens: 1000,
		}}
	}
	return out
}

// Problem 4: large requests (17.5k characters, 4× the 2m base = 8m) leave
// room to fail over. On main: 16 of 16 failed on the primary, the fallback
// was never called; with budget = "90s" or "2m30s" the fallback got 0
// calls. Now the primary attempt is held so that one failover attempt of
// the fallback's deadline fits.
func TestIssue11LargeRequestsFailOver(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name         string
		budget       time.Duration
		items        int
		wantDeadline time.Duration // the primary attempt's
	}{
		{"default budgets", 0, 16, 3 * minute},
		{"budget 90s", 90 * sec, 1, 30 * sec},
		{"budget 2m30s", 150 * sec, 1, 60 * sec},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				pf := newFake("primary", t0, always(step{Hang: true}))
				ff := newFake("fallback", t0, always(step{Delay: 10 * sec}))
				pol := policy(func(p *Policy) {
					if tt.budget > 0 {
						p.Budget = tt.budget
					}
				})
				e := mustNew(t, []Route{route("primary", pf), route("fallback", ff)}, pol, Options{})
				its := bigItems(tt.items, 17_500)
				if _, eff, _ := e.Timeout(e.Routes()[0], its[0].Request); eff != 8*minute {
					t.Fatalf("effective timeout %v, want 8m (17.5k characters: 4×)", eff)
				}
				res := e.Run(t.Context(), its, nil)
				done, _, _ := countStatus(res)
				t.Logf("wall %v, reviewed %d/%d, fallback calls %d, primary deadline %v", time.Since(t0), done, tt.items, ff.count(), res[0].Attempts[0].Deadline)
				if done*100 < tt.items*95 {
					t.Errorf("reviewed %d of %d, want ≥ 95%%", done, tt.items)
				}
				if a := res[0].Attempts[0]; a.Route != "primary" || a.Deadline != tt.wantDeadline {
					t.Errorf("first attempt on %s with deadline %v, want primary with %v", a.Route, a.Deadline, tt.wantDeadline)
				}
				if tt.budget == 0 {
					if d, err := e.Deadline(its[0].Request); err != nil || d != tt.wantDeadline {
						t.Errorf("Deadline() = %v, %v; want %v: the dry run shows what the item gets", d, err, tt.wantDeadline)
					}
				}
			})
		})
	}
}

// Problem 5: the retry rules, to the letter.
func TestIssue11RetryRules(t *testing.T) {
	t.Parallel()
	seq := func(steps ...step) func(int) step {
		return func(n int) step {
			if n < len(steps) {
				return steps[n]
			}
			return step{}
		}
	}
	tests := []struct {
		name      string
		profile   Profile
		routes    int
		script    func(int) step
		wantCalls []time.Duration // on r0
		wantKinds []string
	}{
		{
			// On main: calls at 0s, 1s, 2s (Retry-After 0 replaced the backoff).
			name: "profile: Retry-After 0 does not shorten 15s, 45s", profile: ProfileLiteLLM, routes: 1,
			script:    seq(fakeopenai.RetryAfter(503, "0"), fakeopenai.RetryAfter(500, "0")),
			wantCalls: []time.Duration{0, 15 * sec, 60 * sec},
			wantKinds: []string{"r0:primary:overloaded:retry", "r0:retry:server_error:retry", "r0:retry:success:done"},
		},
		{
			name: "profile: a longer Retry-After lengthens the wait", profile: ProfileLiteLLM, routes: 1,
			script:    seq(fakeopenai.RetryAfter(503, "40")),
			wantCalls: []time.Duration{0, 40 * sec},
			wantKinds: []string{"r0:primary:overloaded:retry", "r0:retry:success:done"},
		},
		{
			name: "profile: 429 without Retry-After waits 60s", profile: ProfileLiteLLM, routes: 1,
			script:    seq(step{Status: 429}),
			wantCalls: []time.Duration{0, 60 * sec},
			wantKinds: []string{"r0:primary:rate_limited:retry", "r0:retry:success:done"},
		},
		{
			// On main: it failed at once (max_retry_after 30s < rate_limit_backoff 60s).
			name: "defaults: 429 without Retry-After waits rate_limit_backoff", routes: 1,
			script:    seq(step{Status: 429}),
			wantCalls: []time.Duration{0, 60 * sec},
			wantKinds: []string{"r0:primary:rate_limited:retry", "r0:retry:success:done"},
		},
		{
			// On main: r0, r0, r1, r1, r2, r2 (one retry per route).
			name: "defaults: one retry per item across all routes", routes: 3,
			script:    always(step{Status: 500}),
			wantCalls: []time.Duration{0, 1 * sec}, // the seeded U[0,2s) backoff
			// The last route, with no answer at all, is then waited for
			// (outage.go): its trial calls are readmissions, not retries.
			wantKinds: []string{"r0:primary:server_error:retry", "r0:retry:server_error:failover", "r1:failover:server_error:failover",
				"r2:failover:server_error:wait", "r2:readmit:server_error:wait", "r2:readmit:server_error:wait",
				"r2:readmit:server_error:wait", "r2:readmit:server_error:wait", "r2:readmit:rejected:fail"},
		},
		{
			// On main: retried after using 79% of its deadline.
			name: "defaults: no retry after the attempt used most of its deadline", routes: 2,
			script:    always(step{Delay: 70 * sec, Status: 503}),
			wantCalls: []time.Duration{0},
			// r1's failover used 10 s of its deadline: retried once, then
			// waited for (its readmissions are not retries).
			wantKinds: []string{"r0:primary:overloaded:failover", "r1:failover:overloaded:retry", "r1:retry:overloaded:wait",
				"r1:readmit:overloaded:wait", "r1:readmit:overloaded:wait", "r1:readmit:overloaded:wait", "r1:readmit:rejected:fail"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				var routes []Route
				var fakes []*fakeProvider
				for i := range tt.routes {
					f := newFake(fmt.Sprint("r", i), t0, tt.script)
					if i > 0 {
						f.script = always(step{Status: 500})
						if strings.Contains(tt.name, "most of its deadline") {
							f.script = always(step{Delay: 10 * sec, Status: 503})
						}
					}
					fakes = append(fakes, f)
					r := route(f.name, f)
					r.Profile = tt.profile
					routes = append(routes, r)
				}
				pol := policy(func(p *Policy) {
					if tt.profile != ProfileNone {
						p.ItemBudget, p.Budget = 16*minute, 30*minute
					}
				})
				e := mustNew(t, routes, pol, Options{})
				res := e.Run(t.Context(), testItems(1), nil)[0]
				got := fakes[0].calls()
				for i := range got {
					got[i] = got[i].Truncate(time.Second)
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.wantCalls) {
					t.Errorf("r0 calls at %v, want %v", got, tt.wantCalls)
				}
				if g := fmt.Sprint(kinds(res.Attempts)); g != fmt.Sprint(tt.wantKinds) {
					t.Errorf("attempts %s, want %v", g, tt.wantKinds)
				}
			})
		})
	}
}

// Problem 5: a 401 or 403 is auth whatever the body's code says, and auth
// is never retried. On main a 401 saying rate_limit_exceeded was retried.
func TestIssue11AuthStatusWinsOverBody(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		status int
		code   string
		want   Class
	}{
		{401, "rate_limit_exceeded", ClassAuth},
		{403, "overloaded", ClassAuth},
		{401, "server_busy", ClassAuth},
		{403, "insufficient_quota", ClassPayment},
		{403, "content_policy_violation", ClassBadRequest},
	} {
		if got := Classify(nil, &ProviderError{Status: tt.status, Code: tt.code}); got != tt.want {
			t.Errorf("Classify(%d %s) = %s, want %s", tt.status, tt.code, got, tt.want)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		f := newFake("r0", time.Now(), func(int) step { return step{Status: 401} })
		wrapped := providerFunc(func(req *Request) error {
			_, err := f.Complete(t.Context(), req)
			if pe, ok := err.(*ProviderError); ok {
				pe.Code = "rate_limit_exceeded"
			}
			return err
		})
		e := mustNew(t, []Route{route("r0", wrapped)}, DefaultPolicy(), Options{})
		res := e.Run(t.Context(), testItems(1), nil)[0]
		if f.count() != 1 || res.Class != ClassAuth {
			t.Errorf("401 rate_limit_exceeded: %d calls, class %s; want 1 call, auth", f.count(), res.Class)
		}
	})
}

// providerFunc adapts a function that returns only an error (nil: an
// answer) to a Provider.
type providerFunc func(*Request) error

func (f providerFunc) Complete(_ context.Context, req *Request) (*Response, error) {
	if err := f(req); err != nil {
		return nil, err
	}
	return &Response{Content: "ok"}, nil
}

// Problem 7: the LiteLLM standard as a route profile: request starts at
// least 5 s apart, the 300 s floor (120 s for litellm-aux) as each attempt's
// deadline, and no watchdog below it.
func TestIssue11ProfileFloorAndPacing(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		profile Profile
		floor   time.Duration
	}{{ProfileLiteLLM, 300 * sec}, {ProfileLiteLLMAux, 120 * sec}} {
		t.Run(tt.profile.String(), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				f := newFake("r0", t0, always(step{Delay: 70 * sec}))
				r := route("r0", f)
				r.Profile, r.RequestTimeout = tt.profile, 30*sec // a configured base below the floor is raised
				pol := policy(func(p *Policy) { p.ItemBudget, p.Budget = 16*minute, 30*minute })
				e := mustNew(t, []Route{r}, pol, Options{})
				res := e.Run(t.Context(), testItems(8), nil)
				calls := f.calls()
				for i := 1; i < len(calls); i++ {
					if gap := calls[i] - calls[i-1]; gap < 5*sec {
						t.Errorf("calls %d and %d started %v apart, want ≥ 5s", i-1, i, gap)
					}
				}
				for i, r := range res {
					if r.Status != StatusDone {
						t.Errorf("item %d: %s %s", i, r.Status, r.Class)
					}
					if a := r.Attempts[0]; a.TimeoutBase != tt.floor || a.Deadline != tt.floor {
						t.Errorf("item %d: base %v, deadline %v; want the %v floor", i, a.TimeoutBase, a.Deadline, tt.floor)
					}
				}
				if ft, idle := e.streamTimeouts(r, 1000, tt.floor); ft != 0 || idle < tt.floor {
					t.Errorf("watchdogs %v, %v on a profile route, want no first-token watchdog and idle ≥ the %v floor", ft, idle, tt.floor)
				}
				opted := r
				opted.FirstTokenTimeout = 10 * sec // an opted-in watchdog below the floor is raised to it
				if ft, _ := e.streamTimeouts(opted, 1000, tt.floor); ft != tt.floor {
					t.Errorf("first-token watchdog %v on a profile route, want the %v floor", ft, tt.floor)
				}
			})
		})
	}
}

// Time scales composed at load time: an impossible combination is one
// error naming the setting and the numbers.
func TestIssue11Validate(t *testing.T) {
	t.Parallel()
	prof := func(name string, p Profile) Route { return Route{Name: name, Model: "m", Profile: p} }
	plain := func(name string, d time.Duration) Route { return Route{Name: name, Model: "m", RequestTimeout: d} }
	tests := []struct {
		name    string
		pol     func(*Policy)
		routes  []Route
		wantKey string
		wantMsg string
	}{
		{"defaults, two routes", nil, []Route{plain("a", 0), plain("b", 0)}, "", ""},
		{"profile with 16m item budget", func(p *Policy) { p.ItemBudget, p.Budget = 16*minute, 30*minute }, []Route{prof("slow", ProfileLiteLLM)}, "", ""},
		{"profile in the default 5m", nil, []Route{prof("slow", ProfileLiteLLM)}, KeyItemBudget,
			`5m0s cannot hold route "slow": 3 attempts × 5m0s + 1m0s backoff`},
		{"profile with a fallback", func(p *Policy) { p.ItemBudget, p.Budget = 16*minute, 30*minute }, []Route{prof("slow", ProfileLiteLLM), plain("fast", 0)}, KeyItemBudget,
			`16m0s cannot hold route "slow": 3 attempts × 5m0s + 1m0s backoff + 2m0s failover to "fast"`},
		{"a base longer than the item budget", nil, []Route{plain("a", 4*minute), plain("b", 0)}, KeyItemBudget,
			`5m0s cannot hold route "a": 1 attempt × 4m0s (its retries share it) + 2m0s failover to "b"`},
		{"review budget below the floor", func(p *Policy) { p.ItemBudget, p.Budget = 16*minute, 5*minute }, []Route{prof("slow", ProfileLiteLLM)}, KeyBudget,
			`5m0s leaves 4m30s to work (less the 30s reserve), less than route "slow"'s 5m0s floor (profile litellm)`},
		{"a watchdog below the floor", func(p *Policy) { p.ItemBudget = 16 * minute; p.Budget = 30 * minute },
			[]Route{{Name: "slow", Profile: ProfileLiteLLM, Stream: true, FirstTokenTimeout: 10 * sec}}, KeyFirstTokenTimeout,
			`10s is below route "slow"'s 5m0s floor (profile litellm): no client timeout may be shorter`},
		{"a breaker window shorter than twice the longest attempt", nil,
			[]Route{{Name: "a", Breaker: BreakerSettings{Window: 5 * minute}}}, KeyBreakerWindow,
			`5m0s is shorter than twice route "a"'s longest attempt (5m0s)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := policy(tt.pol).Validate(tt.routes)
			var ce *CompositionError
			switch {
			case tt.wantKey == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tt.wantKey == "":
			case !errors.As(err, &ce):
				t.Errorf("Validate = %v, want a *CompositionError", err)
			case ce.Key != tt.wantKey || ce.Msg != tt.wantMsg:
				t.Errorf("Validate = %s: %s\nwant        %s: %s", ce.Key, ce.Msg, tt.wantKey, tt.wantMsg)
			}
		})
	}
}
