package review

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// att is an attempt on route with class, duration and effective deadline.
func att(route, class string, durMS, effMS int64) Attempt {
	return Attempt{Route: route, Model: "m-" + route, Kind: "primary", TimeoutBaseMS: effMS, TimeoutEffectiveMS: effMS,
		DurationMS: durMS, Class: class}
}

func at(a Attempt, startMS int64) Attempt { a.StartMS = startMS; return a }

func items(attempts ...[]Attempt) []Item {
	out := make([]Item, len(attempts))
	for i, as := range attempts {
		out[i] = Item{Skill: "code-review", Path: "a.go", Attempts: as}
	}
	return out
}

func TestDiagnose(t *testing.T) {
	t.Parallel()
	const s = 1000
	routes := []RouteStats{{Name: "primary"}, {Name: "fallback"}}
	policy := Policy{RateLimitBackoffMS: 60 * s, Routes: []RoutePolicy{
		{Name: "primary", Model: "kimi-k2", APIKeyEnv: "OPENROUTER_API_KEY"},
		{Name: "fallback", Model: "gpt-4.1-mini"},
	}}
	tests := []struct {
		name  string
		items []Item
		want  []Diagnosis
	}{
		{name: "no attempts", want: []Diagnosis{}},
		{name: "all succeeded", items: items([]Attempt{att("primary", "success", 3*s, 120*s)}), want: []Diagnosis{}},
		{
			name: "deadline too short",
			items: items(
				[]Attempt{att("primary", "success", 100*s, 120*s)},
				[]Attempt{att("primary", "success", 110*s, 120*s)},
				[]Attempt{att("primary", "timeout", 120*s, 120*s)},
			),
			want: []Diagnosis{{Kind: DiagnosisDeadlineTooShort, Routes: []string{"primary"}, Calls: 1,
				Message: "primary: deadline likely too short: successes p95 110 s against a 120 s deadline (1 of 3 calls timed out)"}},
		},
		{
			name: "exactly 75% is close",
			items: items(
				[]Attempt{att("primary", "success", 90*s, 120*s)},
				[]Attempt{att("primary", "timeout", 120*s, 120*s)},
			),
			want: []Diagnosis{{Kind: DiagnosisDeadlineTooShort, Routes: []string{"primary"}, Calls: 1,
				Message: "primary: deadline likely too short: successes p95 90 s against a 120 s deadline (1 of 2 calls timed out)"}},
		},
		{
			name: "below 75% is intermittent",
			items: items(
				[]Attempt{att("primary", "success", 89_900, 120*s)},
				[]Attempt{att("primary", "timeout", 120*s, 120*s)},
			),
			want: []Diagnosis{{Kind: DiagnosisIntermittent, Routes: []string{"primary"}, Calls: 1,
				Message: "primary: backend stalls intermittently: 1 of 2 calls timed out although successes p95 was 89.9 s against a 120 s deadline"}},
		},
		{
			name: "no success: stalled",
			items: items(
				[]Attempt{att("primary", "timeout", 120*s, 120*s)},
				[]Attempt{att("primary", "timeout", 120*s, 120*s), att("primary", "rejected", 0, 120*s)},
			),
			want: []Diagnosis{{Kind: DiagnosisStalled, Routes: []string{"primary"}, Calls: 2,
				Message: "primary: backend stalled or unreachable: 2 of 2 calls timed out and none succeeded"}},
		},
		{
			name:  "two routes in one item: provider-wide",
			items: items([]Attempt{att("primary", "timeout", 120*s, 120*s), att("fallback", "timeout", 60*s, 120*s)}),
			want: []Diagnosis{
				{Kind: DiagnosisProviderWide, Routes: []string{"primary", "fallback"}, Calls: 2,
					Message: "primary, fallback: provider-wide event: calls timed out on 2 routes at once (2 timeouts)"},
				{Kind: DiagnosisStalled, Routes: []string{"primary"}, Calls: 1,
					Message: "primary: backend stalled or unreachable: 1 of 1 call timed out and none succeeded"},
				{Kind: DiagnosisStalled, Routes: []string{"fallback"}, Calls: 1,
					Message: "fallback: backend stalled or unreachable: 1 of 1 call timed out and none succeeded"},
			},
		},
		{
			name: "overlapping in time on two routes: provider-wide",
			items: items(
				[]Attempt{at(att("primary", "timeout", 120*s, 120*s), 10*s)},
				[]Attempt{at(att("fallback", "timeout", 120*s, 120*s), 100*s)},
				[]Attempt{at(att("fallback", "success", 5*s, 120*s), 300*s)},
			),
			want: []Diagnosis{
				{Kind: DiagnosisProviderWide, Routes: []string{"primary", "fallback"}, Calls: 2,
					Message: "primary, fallback: provider-wide event: calls timed out on 2 routes at once (2 timeouts)"},
				{Kind: DiagnosisStalled, Routes: []string{"primary"}, Calls: 1,
					Message: "primary: backend stalled or unreachable: 1 of 1 call timed out and none succeeded"},
				{Kind: DiagnosisIntermittent, Routes: []string{"fallback"}, Calls: 1,
					Message: "fallback: backend stalls intermittently: 1 of 2 calls timed out although successes p95 was 5 s against a 120 s deadline"},
			},
		},
		{
			name: "apart in time on two routes: not provider-wide",
			items: items(
				[]Attempt{at(att("primary", "timeout", 120*s, 120*s), 10*s)},
				[]Attempt{at(att("fallback", "timeout", 120*s, 120*s), 200*s)},
			),
			want: []Diagnosis{
				{Kind: DiagnosisStalled, Routes: []string{"primary"}, Calls: 1,
					Message: "primary: backend stalled or unreachable: 1 of 1 call timed out and none succeeded"},
				{Kind: DiagnosisStalled, Routes: []string{"fallback"}, Calls: 1,
					Message: "fallback: backend stalled or unreachable: 1 of 1 call timed out and none succeeded"},
			},
		},
		{
			name:  "auth names the key variable",
			items: items([]Attempt{att("primary", "auth", 200, 120*s), att("fallback", "success", 3*s, 120*s)}),
			want: []Diagnosis{{Kind: DiagnosisAuth, Routes: []string{"primary"}, Calls: 1,
				Message: "primary: key or permission problem, not model quality: 1 call answered 401/403; check the key in OPENROUTER_API_KEY and its permissions"}},
		},
		{
			name:  "payment",
			items: items([]Attempt{att("fallback", "payment", 200, 120*s)}),
			want: []Diagnosis{{Kind: DiagnosisPayment, Routes: []string{"fallback"}, Calls: 1,
				Message: "fallback: payment required, not model quality: 1 call answered 402 (out of credits)"}},
		},
		{
			name:  "unknown model",
			items: items([]Attempt{att("fallback", "model_not_found", 200, 120*s)}),
			want: []Diagnosis{{Kind: DiagnosisModelNotFound, Routes: []string{"fallback"}, Calls: 1,
				Message: `fallback: model name not served by this route ("gpt-4.1-mini"): 1 call answered model not found`}},
		},
		{
			name: "rate limited with Retry-After",
			items: items([]Attempt{
				func() Attempt { a := att("primary", "rate_limited", 100, 120*s); a.RetryAfterMS = 7 * s; return a }(),
				att("primary", "success", 2*s, 120*s),
			}),
			want: []Diagnosis{{Kind: DiagnosisRateLimited, Routes: []string{"primary"}, Calls: 1,
				Message: "primary: rate limited; honoured Retry-After 7 s (1 call answered 429)"}},
		},
		{
			name:  "rate limited without Retry-After",
			items: items([]Attempt{att("primary", "rate_limited", 100, 120*s), att("fallback", "success", 2*s, 120*s)}),
			want: []Diagnosis{{Kind: DiagnosisRateLimited, Routes: []string{"primary"}, Calls: 1,
				Message: "primary: rate limited; no Retry-After given, the route cooled down 60 s (1 call answered 429)"}},
		},
		{
			name: "a batch's attempts count once",
			items: func() []Item {
				its := items([]Attempt{att("primary", "timeout", 120*s, 120*s)}, []Attempt{att("primary", "timeout", 120*s, 120*s)})
				its[0].Request, its[1].Request = 1, 1
				return its
			}(),
			want: []Diagnosis{{Kind: DiagnosisStalled, Routes: []string{"primary"}, Calls: 1,
				Message: "primary: backend stalled or unreachable: 1 of 1 call timed out and none succeeded"}},
		},
		{
			name:  "a route the report does not list comes last",
			items: items([]Attempt{att("zeta", "auth", 100, 120*s), att("primary", "auth", 100, 120*s)}),
			want: []Diagnosis{
				{Kind: DiagnosisAuth, Routes: []string{"primary"}, Calls: 1,
					Message: "primary: key or permission problem, not model quality: 1 call answered 401/403; check the key in OPENROUTER_API_KEY and its permissions"},
				{Kind: DiagnosisAuth, Routes: []string{"zeta"}, Calls: 1,
					Message: "zeta: key or permission problem, not model quality: 1 call answered 401/403; check the route's API key and its permissions"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &Report{Items: tt.items, Routes: routes, Policy: policy}
			if diff := cmp.Diff(tt.want, Diagnose(r)); diff != "" {
				t.Errorf("Diagnose(%s) mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestDiagnoseConcurrencyCut: when 429s cut a route's concurrency, the
// rate-limited diagnosis says to how many of the route's cap.
func TestDiagnoseConcurrencyCut(t *testing.T) {
	t.Parallel()
	r := &Report{
		Items: []Item{{Path: "a.go", Status: StatusReviewed, Attempts: []Attempt{
			{Route: "primary", Class: "rate_limited", DurationMS: 100, RetryAfterMS: 2000},
			{Route: "primary", Class: "success", DurationMS: 1000},
		}}},
		Routes: []RouteStats{{Name: "primary", ConcurrencyCuts: 1, MinConcurrency: 2}},
		Policy: Policy{Routes: []RoutePolicy{{Name: "primary", MaxConcurrency: 4}}},
	}
	got := Diagnose(r)
	want := "primary: rate limited; honoured Retry-After 2 s (1 call answered 429); concurrent calls cut to 2 (of 4) after 429s"
	if len(got) != 1 || got[0].Message != want {
		t.Errorf("Diagnose = %+v, want one diagnosis %q", got, want)
	}
}
