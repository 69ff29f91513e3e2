package review

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/fakeopenai"
)

// TestPolicyAudit: the report's policy records the retry settings and every
// route as configured, with the key's variable name and the base URL's host
// only: no key, no path, no credentials in the URL.
func TestPolicyAudit(t *testing.T) {
	t.Parallel()
	const secret = "sk-or-v1-SECRET-in-url"
	eng := newEngine(t, &fakeModel{}, func(r *execution.Route) {
		r.BaseURL = "https://user:" + secret + "@openrouter.ai/api/v1?key=" + secret
		r.APIKeyEnv = "OPENROUTER_API_KEY"
		r.Model = "moonshotai/kimi-k2"
		r.RequestTimeout = 90 * time.Second
		r.Stream = true
		r.NoSchema = true
		r.PriceInputPerMTok, r.PriceOutputPerMTok = 0.6, 2.5
	}, func(p *execution.Policy) {
		p.BackoffSchedule = []time.Duration{15 * time.Second, 45 * time.Second}
	})
	r := reviewOneFile(t, eng)
	wantRoutes := []RoutePolicy{{
		Name: "primary", Model: "moonshotai/kimi-k2", BaseURLHost: "openrouter.ai", APIKeyEnv: "OPENROUTER_API_KEY",
		RequestTimeoutMS: 90000, MaxConcurrency: 8, Stream: true, JSONSchema: false,
		PriceInputPerMTok: 0.6, PriceOutputPerMTok: 2.5,
		// Issue 11: what a request really gets, its retries, the breaker's window (2 × the 90s × 8 ceiling).
		AttemptDeadlineMS: 90000, RetriesPerRoute: 1, BreakerWindowMS: 600000,
	}}
	if diff := cmp.Diff(wantRoutes, r.Policy.Routes); diff != "" {
		t.Errorf("Run policy routes (-want +got):\n%s", diff)
	}
	got := [5]int64{int64(r.Policy.RetryBudgetMin), r.Policy.MaxRetryAfterMS, r.Policy.MaxQueueWaitMS, r.Policy.CooldownWaitMaxMS, int64(len(r.Policy.BackoffScheduleMS))}
	if want := [5]int64{3, 30000, 10000, 10000, 2}; got != want {
		t.Errorf("Run policy retry settings = %v, want %v", got, want)
	}
	if r.Policy.RetryBudgetRatio != 0.1 {
		t.Errorf("Run policy retry_budget_ratio = %g, want 0.1", r.Policy.RetryBudgetRatio)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "SECRET") || strings.Contains(string(b), "user:") {
		t.Errorf("the report holds the base URL's credentials:\n%s", b)
	}
}

// reviewOneFile plans and runs a review of one fixture file on eng.
func reviewOneFile(t *testing.T, eng *execution.Engine) *Report {
	t.Helper()
	_, hp, _ := fixture(t, fixtureFiles[6:7], hunks.Options{})
	opts := Options{Skills: builtins()}
	p, err := NewPlan(hp, eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	return Run(t.Context(), p, eng, opts)
}

// TestPolicyOutagePatience: the report's policy records the outage
// patience in effect, in JSON as outage_patience_ms: the item budget by
// default, else the configured one.
func TestPolicyOutagePatience(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mod  func(*execution.Policy)
		want int64
	}{
		{"default: the item budget", nil, 300000},
		{"a 16-minute item budget", func(p *execution.Policy) { p.ItemBudget, p.Budget = 16*time.Minute, 30*time.Minute }, 960000},
		{"set", func(p *execution.Policy) { p.OutagePatience = 2 * time.Minute }, 120000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eng := newEngine(t, &fakeModel{}, nil, tt.mod)
			r := reviewOneFile(t, eng)
			if r.Policy.OutagePatienceMS != tt.want {
				t.Errorf("policy outage patience %d ms, want %d", r.Policy.OutagePatienceMS, tt.want)
			}
			b, err := json.Marshal(r.Policy)
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf(`"outage_patience_ms":%d`, tt.want); !strings.Contains(string(b), want) {
				t.Errorf("policy JSON %s lacks %s", b, want)
			}
		})
	}
}

// TestRouteHealthMapped: review maps every route-health number from the
// engine's statistics of the run (each call takes 2 s of virtual time, so
// the percentiles are exact).
func TestRouteHealthMapped(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := &fakeModel{origin: time.Now(), script: always(fakeopenai.Answer{Delay: 2 * time.Second}),
			usage: execution.Usage{PromptTokens: 10000, CompletionTokens: 10, CachedTokens: 40}}
		eng := newEngine(t, m, func(r *execution.Route) { r.PriceInputPerMTok = 1 }, nil)
		_, hp, _ := fixture(t, fixtureFiles[6:7], hunks.Options{})
		opts := Options{Skills: builtins()}
		p, err := NewPlan(hp, eng, opts)
		if err != nil {
			t.Fatal(err)
		}
		r := Run(t.Context(), p, eng, opts)
		n := len(p.Items)
		want := []RouteStats{{
			Name: "primary", Model: "test-model", Calls: n, OK: n, P50MS: 2000, P95MS: 2000,
			CostUSD: float64(10000*n) / 1e6, PromptTokens: 10000 * n, CompletionTokens: 10 * n, CachedTokens: 40 * n, Priced: true,
		}}
		if diff := cmp.Diff(want, r.Routes); diff != "" {
			t.Errorf("Run routes (-want +got):\n%s", diff)
		}
		if len(r.Diagnoses) != 0 {
			t.Errorf("Run diagnoses = %v, want none for a clean review", r.Diagnoses)
		}
	})
}
