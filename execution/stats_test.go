package execution

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/org/warden/internal/fakeopenai"
)

// TestStatsHealth: time to first token and failovers in and out are
// counted per route, and every failover out of one route is a failover into
// the next.
func TestStatsHealth(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		// r0: items 0 and 1 answer (TTFT 1s, 3s); then 503s. Items 2 and
		// 3 are retried and fail over: 4 failures among 6 outcomes are not
		// yet a rate (MinCalls 10, issue 22), so the breaker stays closed.
		// r1 answers with TTFT 2s.
		f0 := newFake("r0", t0, func(n int) step {
			switch n {
			case 0:
				return step{Delay: 2 * sec, FirstByte: sec}
			case 1:
				return step{Delay: 4 * sec, FirstByte: 3 * sec}
			}
			return step{Delay: sec, Status: 503}
		})
		f1 := newFake("r1", t0, always(step{Delay: 3 * sec, FirstByte: 2 * sec}))
		e := mustNew(t, []Route{route("r0", f0), route("r1", f1)}, policy(func(p *Policy) {
			p.MaxConcurrency = 1
			p.RetryBudgetMin = 10
		}), Options{})
		res, got := e.RunStats(t.Context(), testItems(4), nil)
		for i, r := range res {
			if r.Status != StatusDone {
				t.Fatalf("item %d: %s (%v), want done", i, r.Status, kinds(r.Attempts))
			}
		}
		want := []RouteStats{
			{Name: "r0", Model: "model-r0", Calls: 6, OK: 2, Failed: 4, Retries: 2,
				Breaker: BreakerClosed, P50: sec, P95: 4 * sec, Max: 4 * sec, TTFTP50: sec, TTFTP95: 3 * sec, FailoversOut: 2,
				Usage: Usage{PromptTokens: 20, CompletionTokens: 10}},
			{Name: "r1", Model: "model-r1", Calls: 2, OK: 2,
				P50: 3 * sec, P95: 3 * sec, Max: 3 * sec, TTFTP50: 2 * sec, TTFTP95: 2 * sec, FailoversIn: 2,
				Usage: Usage{PromptTokens: 20, CompletionTokens: 10}},
		}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(RouteStats{}, "MaxInFlight")); diff != "" {
			t.Errorf("Stats() mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestRetryAfterRecorded: Attempt.RetryAfter is the server's Retry-After;
// a 429 without one waits RateLimitBackoff but records 0.
func TestRetryAfterRecorded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ra   string
		want time.Duration
	}{
		{"with Retry-After", "7", 7 * sec},
		{"without Retry-After", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f0 := newFake("r0", time.Now(), func(n int) step {
					if n == 0 {
						return fakeopenai.RetryAfter(429, tt.ra)
					}
					return step{}
				})
				e := mustNew(t, []Route{route("r0", f0)}, policy(func(p *Policy) { p.RateLimitBackoff = 20 * sec }), Options{})
				res := e.Run(t.Context(), testItems(1), nil)[0]
				if len(res.Attempts) != 2 {
					t.Fatalf("attempts %v, want a 429 then a retry", kinds(res.Attempts))
				}
				if got := res.Attempts[0].RetryAfter; got != tt.want {
					t.Errorf("Attempts[0].RetryAfter = %v, want %v", got, tt.want)
				}
			})
		})
	}
}
