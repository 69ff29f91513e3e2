package execution

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRouteCost(t *testing.T) {
	t.Parallel()
	r := Route{PriceInputPerMTok: 2, PriceOutputPerMTok: 8, PriceCachedInputPerMTok: 0.5}
	tests := []struct {
		name  string
		route Route
		u     Usage
		want  float64
	}{
		{"no usage", r, Usage{}, 0},
		{"uncached prompt and completion", r, Usage{PromptTokens: 1_000_000, CompletionTokens: 1_000_000}, 2 + 8},
		{"cached part at the cached price", r, Usage{PromptTokens: 1_000_000, CachedTokens: 600_000}, 0.4*2 + 0.6*0.5},
		{"all cached", r, Usage{PromptTokens: 1_000_000, CachedTokens: 1_000_000, CompletionTokens: 500_000}, 0.5 + 4},
		{"cached price unset bills the input price", Route{PriceInputPerMTok: 2}, Usage{PromptTokens: 1_000_000, CachedTokens: 1_000_000}, 2},
		{"more cached than prompt is capped", r, Usage{PromptTokens: 1_000_000, CachedTokens: 3_000_000}, 0.5},
		{"no prices", Route{}, Usage{PromptTokens: 5, CompletionTokens: 5, CachedTokens: 5}, 0},
	}
	for _, tt := range tests {
		if got := tt.route.Cost(tt.u); fmt.Sprintf("%.9f", got) != fmt.Sprintf("%.9f", tt.want) {
			t.Errorf("%s: Route.Cost(%+v) = %.9f, want %.9f", tt.name, tt.u, got, tt.want)
		}
	}
}

func TestItemPromptTokens(t *testing.T) {
	t.Parallel()
	msgs := func(n ...int) *Request {
		req := &Request{}
		for _, k := range n {
			req.Messages = append(req.Messages, Message{Role: "user", Content: strings.Repeat("x", k)})
		}
		return req
	}
	tests := []struct {
		name string
		it   Item
		want int
	}{
		{"chars over 4", Item{Request: msgs(400, 400)}, 200},
		{"rounded up", Item{Request: msgs(401)}, 101},
		{"caller's estimate wins", Item{Request: msgs(400), EstimatedPromptTokens: 7}, 7},
		{"no request", Item{}, 0},
	}
	for _, tt := range tests {
		if got := tt.it.PromptTokens(); got != tt.want {
			t.Errorf("%s: PromptTokens() = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// noUsage answers at once and reports no usage.
type noUsage struct{}

func (noUsage) Complete(_ context.Context, req *Request) (*Response, error) {
	return &Response{Content: "ok", Model: req.Model}, nil
}

// TestSpendCaps checks which items a cost or token cap skips: the first item
// whose estimate does not fit the spend so far, and every item after it, in
// the order given.
func TestSpendCaps(t *testing.T) {
	t.Parallel()
	// sized returns items whose prompts are the given token estimates
	// (4 characters each) with 100 completion tokens.
	sized := func(tokens ...int) []Item {
		out := make([]Item, len(tokens))
		for i, n := range tokens {
			out[i] = Item{Request: &Request{
				Messages:  []Message{{Role: "user", Content: strings.Repeat("abcd", n)}},
				MaxTokens: 100,
			}}
		}
		return out
	}
	priced := func(name string, p Provider, in, out float64) Route {
		r := route(name, p)
		r.PriceInputPerMTok, r.PriceOutputPerMTok = in, out
		return r
	}
	// Every fake answer uses 10 prompt and 5 completion tokens: at $1/$2
	// per million, 2e-5 USD. An item of P prompt tokens is estimated at
	// (P·1 + 100·2)/1e6 USD and P+100 tokens.
	const done, cost, tokens = "done", "skipped:budget:cost", "skipped:budget:tokens"
	tests := []struct {
		name   string
		routes func(f Provider) []Route
		pol    func(*Policy)
		items  []Item
		want   []string
	}{
		{
			name:   "no cap runs everything",
			routes: func(f Provider) []Route { return []Route{priced("r0", f, 1, 2)} },
			pol:    func(p *Policy) { p.MaxConcurrency = 1 },
			items:  sized(100, 100, 100, 1000, 10, 10),
			want:   []string{done, done, done, done, done, done},
		},
		{
			// Item 3: 3·2e-5 spent + 1.2e-3 estimated > 1e-3. Items 4 and 5
			// would fit, but the first item that does not fit ends dispatching.
			name:   "cost cap stops at the first item that does not fit",
			routes: func(f Provider) []Route { return []Route{priced("r0", f, 1, 2)} },
			pol:    func(p *Policy) { p.MaxConcurrency, p.MaxCostUSD = 1, 1e-3 },
			items:  sized(100, 100, 100, 1000, 10, 10),
			want:   []string{done, done, done, cost, cost, cost},
		},
		{
			// Items in flight count at their estimate (3e-4 each): the
			// fourth would make 1.2e-3 > 1e-3 before any answer came back.
			name:   "items in flight count at their estimate",
			routes: func(f Provider) []Route { return []Route{priced("r0", f, 1, 2)} },
			pol:    func(p *Policy) { p.MaxConcurrency, p.MaxCostUSD = 4, 1e-3 },
			items:  sized(100, 100, 100, 100, 100, 100),
			want:   []string{done, done, done, cost, cost, cost},
		},
		{
			// Spend accumulates: item k starts while 15k + 300 ≤ 340 tokens.
			name:   "token cap counts spent tokens",
			routes: func(f Provider) []Route { return []Route{priced("r0", f, 1, 2)} },
			pol:    func(p *Policy) { p.MaxConcurrency, p.MaxTotalTokens = 1, 340 },
			items:  sized(200, 200, 200, 200, 200, 10),
			want:   []string{done, done, done, tokens, tokens, tokens},
		},
		{
			name:   "token cap with a free route",
			routes: func(f Provider) []Route { return []Route{priced("r0", f, 0, 0)} },
			pol:    func(p *Policy) { p.MaxConcurrency, p.MaxTotalTokens, p.MaxCostUSD = 1, 200, 1 },
			items:  sized(100, 101, 10),
			want:   []string{done, tokens, tokens},
		},
		{
			// Without usage, an answer counts at its estimate: 3e-4 each.
			name:   "answers without usage count at their estimate",
			routes: func(Provider) []Route { return []Route{priced("r0", noUsage{}, 1, 2)} },
			pol:    func(p *Policy) { p.MaxConcurrency, p.MaxCostUSD = 1, 1e-3 },
			items:  sized(100, 100, 100, 100, 100),
			want:   []string{done, done, done, cost, cost},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := newFake("r0", time.Now(), always(step{Delay: sec}))
				e := mustNew(t, tt.routes(f), policy(tt.pol), Options{})
				var got []string
				for _, r := range e.Run(t.Context(), tt.items, nil) {
					s := r.Status.String()
					if r.Status == StatusSkipped {
						s += ":" + r.Reason
					}
					got = append(got, s)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Run(%d items) statuses (-want +got):\n%s", len(tt.items), diff)
				}
			})
		})
	}
}

// TestSpendCapPricesTheFirstUsableRoute: once the primary is disabled, an
// item's estimate is priced on the next route.
func TestSpendCapPricesTheFirstUsableRoute(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dead := newFake("r0", time.Now(), always(step{Status: 401}))
		ok := newFake("r1", time.Now(), always(step{Delay: sec}))
		r0, r1 := route("r0", dead), route("r1", ok)
		// On r0 an item is estimated at (100·100 + 100·100)/1e6 = 0.02 USD,
		// on r1 at 2e-4; the cap fits one item's estimate on r0, not two.
		r0.PriceInputPerMTok, r0.PriceOutputPerMTok, r0.FailoverOnAuth = 100, 100, true
		r1.PriceInputPerMTok, r1.PriceOutputPerMTok = 1, 1
		e := mustNew(t, []Route{r0, r1}, policy(func(p *Policy) { p.MaxConcurrency, p.MaxCostUSD = 1, 0.02001 }), Options{})
		its := make([]Item, 4)
		for i := range its {
			its[i] = Item{Request: &Request{Messages: []Message{{Role: "user", Content: strings.Repeat("abcd", 100)}}, MaxTokens: 100}}
		}
		var got []string
		for _, r := range e.Run(t.Context(), its, nil) {
			got = append(got, r.Status.String()+":"+r.Reason)
		}
		want := []string{"done:", "done:", "done:", "done:"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Run statuses (-want +got):\n%s", diff)
		}
	})
}

func TestNewRejectsNegativeCaps(t *testing.T) {
	t.Parallel()
	f := newFake("r0", time.Now(), always(step{}))
	for _, mod := range []func(*Policy){
		func(p *Policy) { p.MaxCostUSD = -1 },
		func(p *Policy) { p.MaxTotalTokens = -1 },
	} {
		if _, err := New([]Route{route("r0", f)}, policy(mod), Options{}); err == nil {
			t.Errorf("New(negative cap) = nil error, want an error")
		}
	}
	r := route("r0", f)
	r.PriceCachedInputPerMTok = -1
	if _, err := New([]Route{r}, DefaultPolicy(), Options{}); err == nil {
		t.Errorf("New(negative cached price) = nil error, want an error")
	}
}
