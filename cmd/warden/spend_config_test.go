package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSpendConfig reads issue 7's keys: batch_skills, the review's spend
// caps, and a route's cached-input price, into the engine's policy and
// routes and the review's options.
func TestSpendConfig(t *testing.T) {
	t.Parallel()
	doc := `[review]
batch_skills = true
max_cost_usd = 0.75
max_total_tokens = 2000000
max_tokens = 2048

[[routes]]
name = "primary"
base_url = "https://openrouter.ai/api/v1"
model = "m"
price_input_per_mtok = 0.6
price_output_per_mtok = 2.5
price_cached_input_per_mtok = 0.15

[[routes]]
name = "fallback"
base_url = "https://example.com/v1"
model = "m2"
price_input_per_mtok = 1
`
	c, err := parseConfig("warden.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Policy()
	routes, err := c.EngineRoutes(func(string) string { return "" }, false, wardenBuild().Version)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Batch             bool
		MaxCost           float64
		MaxTokensTotal    int
		MaxTokens         int
		Cached, CachedOff float64
	}
	want := got{true, 0.75, 2_000_000, 2048, 0.15, 0}
	g := got{c.Review.BatchSkills, p.MaxCostUSD, p.MaxTotalTokens, c.Review.MaxTokens, routes[0].PriceCachedInputPerMTok, routes[1].PriceCachedInputPerMTok}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("parseConfig(spend keys) (-want +got):\n%s", diff)
	}

	for _, tt := range []struct{ doc, want string }{
		{"[review]\nmax_cost_usd = -1\n", "warden.toml:2: review.max_cost_usd: must not be negative, got -1"},
		{"[review]\nmax_total_tokens = -5\n", "warden.toml:2: review.max_total_tokens: must not be negative, got -5"},
		{"[review]\nmax_cost_usd = \"1 dollar\"\n", "warden.toml:2: review.max_cost_usd: cannot decode TOML string into float64"},
		{"[[routes]]\nname = \"a\"\nbase_url = \"http://x\"\nmodel = \"m\"\nprice_cached_input_per_mtok = -0.1\n", "warden.toml:1: routes[0].price_cached_input_per_mtok: must not be negative, got -0.1"},
	} {
		_, err := parseConfig("warden.toml", []byte(tt.doc))
		if err == nil || oneLine(err.Error()) != tt.want {
			t.Errorf("parseConfig(%q) error = %v, want %q", tt.doc, err, tt.want)
		}
	}
}
