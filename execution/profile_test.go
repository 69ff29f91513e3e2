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
// after a multi-hour incident, as a route profile (issue 11): the route
// carries Profile = ProfileLiteLLM and the policy only has to hold it:
//
//   - no client timeout below 300s: each attempt gets its own deadline of
//     at least 300s (the standard's rule is per request);
//   - 2 retries on 408, 5xx and its own timeout after 15s and 45s (a
//     Retry-After may lengthen a wait, never shorten it);
//   - no retry on 401/403;
//   - 429 honours Retry-After, or waits 60s without one.
//
// The item budget holds 3 attempts × 5m + 1m of backoff (Policy.Validate).
func liteLLMProfile() (execution.Policy, routeSpec) {
	p := execution.DefaultPolicy()
	p.Budget = 30 * time.Minute
	p.ItemBudget = 16 * time.Minute
	return p, routeSpec{name: "litellm"}
}

func TestLiteLLMProfile(t *testing.T) {
	t.Parallel()
	statuses := func(codes ...int) func(int, time.Duration) reply {
		return func(n int, _ time.Duration) reply {
			if n < len(codes) {
				return reply{Delay: time.Second, Status: codes[n]}
			}
			return reply{Delay: time.Second}
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
			// Three failures and no answer open the breaker; the item, its
			// retries spent, waits for the route (issue 22's outage
			// patience) and is readmitted after the schedule's 45s.
			name:      "5xx three times: two retries, then readmitted once the route answers",
			script:    statuses(500, 500, 500),
			wantCalls: []time.Duration{0, 16 * sec, 62 * sec, 108 * sec},
			wantKinds: []string{"primary:server_error", "retry:server_error", "retry:server_error", "readmit:success"},
			wantDone:  true,
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
					return reply{Status: 429, Header: map[string]string{"Retry-After": "7"}}
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
					return reply{Status: 429}
				}
				return reply{}
			},
			wantCalls: []time.Duration{0, 60 * sec}, // plus < 1s of jitter
			wantKinds: []string{"primary:rate_limited", "retry:success"},
			wantDone:  true,
		},
		{
			name:      "a slow model answering after 280s is waited for",
			script:    always(reply{Delay: 280 * sec}),
			wantCalls: []time.Duration{0},
			wantKinds: []string{"primary:success"},
			wantDone:  true,
		},
		{
			// Seed 003 §3: "On timeout (408) or 5xx: retry up to 2 times
			// with exponential backoff (15s, 45s)": the client's own
			// timeout too (issue 22), each retry with its own 300s.
			name:      "a model that never answers: its own timeout retried after 15s and 45s",
			script:    always(reply{Hang: true}),
			wantCalls: []time.Duration{0, 315 * sec, 660 * sec},
			wantKinds: []string{"primary:timeout", "retry:timeout", "retry:timeout"},
		},
		{
			name: "timed out twice, then the provider recovers: the second retry answers",
			script: func(n int, _ time.Duration) reply {
				if n < 2 {
					return reply{Hang: true}
				}
				return reply{Delay: 20 * sec}
			},
			wantCalls: []time.Duration{0, 315 * sec, 660 * sec},
			wantKinds: []string{"primary:timeout", "retry:timeout", "retry:success"},
			wantDone:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				p, spec := liteLLMProfile()
				spec.script = tt.script
				w := newWorld(t, []routeSpec{spec})
				w.routes[0].Profile = execution.ProfileLiteLLM
				if err := p.Validate(w.routes); err != nil {
					t.Fatal(err)
				}
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
					if a.TimeoutBase != 300*sec || a.Deadline != 300*sec {
						t.Errorf("attempt %d base %v, deadline %v; want base 300s and each attempt its own 300s deadline", a.Number, a.TimeoutBase, a.Deadline)
					}
				}
			})
		})
	}
}
