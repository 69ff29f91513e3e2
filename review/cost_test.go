package review

import (
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/fakeopenai"
)

// TestCachedTokensAndCost: the provider's cached tokens reach the report's
// usage (JSON usage.cached_tokens), and cost is priced with the cached
// price per item, per route and for the review.
func TestCachedTokensAndCost(t *testing.T) {
	t.Parallel()
	u := execution.Usage{PromptTokens: 4000, CompletionTokens: 200, CachedTokens: 3000}
	tests := []struct {
		name        string
		cachedPrice float64
		perCall     float64
	}{
		// 1000 uncached at $2, 3000 cached at $0.5, 200 out at $8 per million.
		{"cached price set", 0.5, (1000*2 + 3000*0.5 + 200*8) / 1e6},
		// Without a cached price, cached tokens cost the input price.
		{"cached price unset", 0, (4000*2 + 200*8) / 1e6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := &fakeModel{usage: u}
			eng := newEngine(t, m, func(r *execution.Route) {
				r.PriceInputPerMTok, r.PriceOutputPerMTok, r.PriceCachedInputPerMTok = 2, 8, tt.cachedPrice
			}, nil)
			_, hp, _ := fixture(t, fixtureFiles[1:3], hunks.Options{})
			opts := Options{Skills: builtins()}
			p, err := NewPlan(hp, eng, opts)
			if err != nil {
				t.Fatal(err)
			}
			r := Run(t.Context(), p, eng, opts)
			n := len(p.Items)
			want := Usage{PromptTokens: 4000 * n, CompletionTokens: 200 * n, CachedTokens: 3000 * n, CostUSD: tt.perCall * float64(n)}
			approx := cmpopts.EquateApprox(0, 1e-12)
			if diff := cmp.Diff(want, r.Usage, approx); diff != "" {
				t.Errorf("Run usage (-want +got):\n%s", diff)
			}
			for i, it := range r.Items {
				if diff := cmp.Diff(tt.perCall, it.CostUSD, approx); diff != "" {
					t.Errorf("item %d cost (-want +got):\n%s", i, diff)
				}
			}
			if len(r.Routes) != 1 || cmp.Diff(want.CostUSD, r.Routes[0].CostUSD, approx) != "" {
				t.Errorf("route cost = %+v, want %g", r.Routes, want.CostUSD)
			}
			b, _ := json.Marshal(r.Usage)
			var j map[string]float64
			if err := json.Unmarshal(b, &j); err != nil || j["cached_tokens"] != float64(3000*n) {
				t.Errorf("JSON usage = %s, want cached_tokens %d", b, 3000*n)
			}
		})
	}
}

// TestCostCapSkipsInPriorityOrder runs the fixture with a cost cap that
// fits some items: the first item whose estimate does not fit, and every
// item after it in priority order, end skipped with reason budget:cost; the
// outcome is partial; and the cap is in the report's policy.
func TestCostCapSkipsInPriorityOrder(t *testing.T) {
	t.Parallel()
	_, hp, _ := fixture(t, fixtureFiles, hunks.Options{})
	synctest.Test(t, func(t *testing.T) {
		// Every answer: 3,000 prompt and 100 completion tokens, $0.0034 at
		// $1/$4 per million. Each item is estimated from its prompt
		// (characters / 4) and max_tokens (1,000) before it starts. Item i
		// takes 10 s + i·7 ms, so that no two calls end at the same instant.
		var lat *latencyModel
		m := &fakeModel{origin: time.Now(), script: func(req *execution.Request) fakeopenai.Answer { return lat.of(req) },
			usage: execution.Usage{PromptTokens: 3000, CompletionTokens: 100}}
		const maxTokens, capUSD, perCall = 1000, 0.05, 0.0034
		eng := newEngine(t, m, func(r *execution.Route) { r.PriceInputPerMTok, r.PriceOutputPerMTok = 1, 4 },
			func(p *execution.Policy) { p.MaxConcurrency, p.MaxCostUSD = 4, capUSD })
		opts := Options{Skills: builtins(), Change: fixturePR, MaxTokens: maxTokens}
		p, err := NewPlan(hp, eng, opts)
		if err != nil {
			t.Fatal(err)
		}
		lat = newLatencyModel(p, 1)
		for i := range lat.lat {
			lat.lat[i] = 10*time.Second + time.Duration(i)*7*time.Millisecond
		}
		// The expected run: 4 slots; an item starts when a slot frees, if
		// the spend of the calls ended so far, plus the estimates of those
		// in flight, plus its own estimate fit the cap.
		type call struct {
			end time.Duration
			est float64
		}
		var want []string
		var inflight []call
		now, spent, stopped := time.Duration(0), 0.0, false
		for i, wi := range p.Items {
			if len(inflight) == 4 {
				k := 0
				for j, c := range inflight {
					if c.end < inflight[k].end {
						k = j
					}
				}
				now, spent = inflight[k].end, spent+perCall
				inflight = append(inflight[:k], inflight[k+1:]...)
			}
			est := (float64(execution.Item{Request: wi.Request}.PromptTokens()) + maxTokens*4) / 1e6
			reserved := 0.0
			for _, c := range inflight {
				reserved += c.est
			}
			if stopped || spent+reserved+est > capUSD {
				stopped = true
				want = append(want, "skipped:budget:cost")
				continue
			}
			inflight = append(inflight, call{now + lat.lat[i], est})
			want = append(want, "reviewed:")
		}
		r := Run(t.Context(), p, eng, opts)
		var got []string
		for _, it := range r.Items {
			got = append(got, string(it.Status)+":"+it.Reason)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Run(cap $%g) items (-want +got):\n%s", capUSD, diff)
		}
		if r.Summary.Reviewed == 0 || r.Summary.Skipped == 0 || r.Outcome != OutcomePartial {
			t.Errorf("Run(cap) = %+v, %s; want some reviewed, some skipped, partial", r.Summary, r.Outcome)
		}
		if r.Usage.CostUSD > capUSD {
			t.Errorf("Run(cap $%g) spent $%g", capUSD, r.Usage.CostUSD)
		}
		if r.Policy.MaxCostUSD != capUSD {
			t.Errorf("report policy max_cost_usd = %g, want %g", r.Policy.MaxCostUSD, capUSD)
		}
		t.Logf("cap $%g: %d reviewed, %d skipped (budget:cost), spent $%.4f", capUSD, r.Summary.Reviewed, r.Summary.Skipped, r.Usage.CostUSD)
	})
}
