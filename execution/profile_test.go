package execution_test

import (
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/execution"
)

// liteLLMProfile is the standard a slow self-hosted LiteLLM fleet adopted
// after a multi-hour incident, expressed as engine settings:
//
//   - request timeout ≥ 300s on slow-model routes (Route.RequestTimeout 300s:
//     a small request gets exactly 300s; the adaptive rule may grow it for a
//     large one, never above the 10-minute ceiling);
//   - 2 retries with 15s and 45s backoff on 408 and 5xx
//     (MaxRetriesPerRoute 2, BackoffSchedule [15s, 45s]; the retries share
//     the 300s request deadline, so a retry that cannot fit is not made);
//   - no retry on 401/403 (the engine never retries auth: the route is
//     disabled and the item fails loudly);
//   - 429 honours Retry-After, or waits 60s without one
//     (RateLimitBackoff 60s, MaxRetryAfter 60s so that the 60s wait is taken
//     on the same route rather than failing over).
//
// The item budget (10m) holds the 300s route request plus a failover; the
// review budget is 30m. The review-wide retry budget (max(3, 10% of calls))
// still applies on top, as everywhere.
func liteLLMProfile() (execution.Policy, routeSpec) {
	p := execution.DefaultPolicy()
	p.Budget = 30 * time.Minute
	p.ItemBudget = 10 * time.Minute
	p.RequestTimeout = 300 * time.Second
	p.MaxRetriesPerRoute = 2
	p.BackoffSchedule = []time.Duration{15 * time.Second, 45 * time.Second}
	p.RateLimitBackoff = 60 * time.Second
	p.MaxRetryAfter = 60 * time.Second
	return p, routeSpec{name: "litellm", timeout: 300 * time.Second}
}

func TestLiteLLMProfile(t *testing.T) {
	t.Parallel()
	statuses := func(codes ...int) func(int, time.Duration) reply {
		return func(n int, _ time.Duration) reply {
			if n < len(codes) {
				return reply{delay: time.Second, status: codes[n]}
			}
			return reply{delay: time.Second}
		}
	}
	tests := []struct {
		name      string
		script    func(int, time.Duration) reply
		wantCalls []time.Duration // when the server saw each call
		wantKinds []string        // kind:class per attempt
		wantDone  bool
	}{
		{
			name:      "5xx twice: retries after 15s and 45s",
			script:    statuses(503, 502),
			wantCalls: []time.Duration{0, 16 * sec, 62 * sec},
			wantKinds: []string{"primary:overloaded", "retry:server_error", "retry:success"},
			wantDone:  true,
		},
		{
			name:      "408 is retried like 5xx",
			script:    statuses(408),
			wantCalls: []time.Duration{0, 16 * sec},
			wantKinds: []string{"primary:timeout", "retry:success"},
			wantDone:  true,
		},
		{
			name:      "5xx three times: two retries, then the item fails",
			script:    statuses(500, 500, 500),
			wantCalls: []time.Duration{0, 16 * sec, 62 * sec},
			wantKinds: []string{"primary:server_error", "retry:server_error", "retry:server_error"},
		},
		{
			name:      "401: no retry",
			script:    statuses(401),
			wantCalls: []time.Duration{0},
			wantKinds: []string{"primary:auth"},
		},
		{
			name:      "403: no retry",
			script:    statuses(403),
			wantCalls: []time.Duration{0},
			wantKinds: []string{"primary:auth"},
		},
		{
			name: "429 with Retry-After: 7 is honoured",
			script: func(n int, _ time.Duration) reply {
				if n == 0 {
					return reply{status: 429, header: map[string]string{"Retry-After": "7"}}
				}
				return reply{}
			},
			wantCalls: []time.Duration{0, 7 * sec}, // plus < 0.7s of jitter, checked below
			wantKinds: []string{"primary:rate_limited", "retry:success"},
			wantDone:  true,
		},
		{
			name: "429 without Retry-After waits 60s",
			script: func(n int, _ time.Duration) reply {
				if n == 0 {
					return reply{status: 429}
				}
				return reply{}
			},
			wantCalls: []time.Duration{0, 60 * sec}, // plus < 1s of jitter
			wantKinds: []string{"primary:rate_limited", "retry:success"},
			wantDone:  true,
		},
		{
			name:      "a slow model answering after 280s is waited for",
			script:    always(reply{delay: 280 * sec}),
			wantCalls: []time.Duration{0},
			wantKinds: []string{"primary:success"},
			wantDone:  true,
		},
		{
			name:      "a model that never answers ends at 300s, not retried",
			script:    always(reply{hang: true}),
			wantCalls: []time.Duration{0},
			wantKinds: []string{"primary:timeout"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				p, spec := liteLLMProfile()
				spec.script = tt.script
				w := newWorld(t, []routeSpec{spec})
				e, err := execution.New(w.routes, p, execution.Options{Rand: rand.New(rand.NewPCG(1, 2))})
				if err != nil {
					t.Fatal(err)
				}
				res := e.Run(t.Context(), items(1), nil)[0]
				var kinds []string
				for _, a := range res.Attempts {
					kinds = append(kinds, a.Kind.String()+":"+a.Class.String())
				}
				if diff := cmp.Diff(tt.wantKinds, kinds); diff != "" {
					t.Errorf("attempts (-want +got):\n%s", diff)
				}
				calls := w.servers[0].calls()
				if len(calls) != len(tt.wantCalls) {
					t.Fatalf("calls at %v, want %v", calls, tt.wantCalls)
				}
				for i, c := range calls {
					if c < tt.wantCalls[i] || c >= tt.wantCalls[i]+time.Second {
						t.Errorf("call %d at %v, want %v (+ < 1s jitter for Retry-After)", i, c, tt.wantCalls[i])
					}
				}
				if got := res.Status == execution.StatusDone; got != tt.wantDone {
					t.Errorf("done = %v (%s %s %v), want %v", got, res.Status, res.Class, res.Err, tt.wantDone)
				}
				for _, a := range res.Attempts {
					if a.TimeoutBase != 300*sec || a.Deadline > 300*sec {
						t.Errorf("attempt base %v, deadline %v; want base 300s and retries inside the one 300s request deadline", a.TimeoutBase, a.Deadline)
					}
				}
			})
		})
	}
}
