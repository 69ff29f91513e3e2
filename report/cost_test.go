package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/org/warden/review"
)

// TestUnknownCostIsNotZero: tokens spent on a route without a price show
// the cost as unknown ("–"), never "$0.0000", in the usage line of the
// text report, the Markdown budget and both route tables; a priced route
// shows dollars; with some routes unpriced the sum is a lower bound. The
// JSON keeps cost_usd a number (0 when unknown; routes[].priced says which).
func TestUnknownCostIsNotZero(t *testing.T) {
	t.Parallel()
	route := func(name string, priced bool, cost float64) review.RouteStats {
		return review.RouteStats{Name: name, Model: "m", Calls: 2, OK: 2, PromptTokens: 1200, CompletionTokens: 80, Priced: priced, CostUSD: cost}
	}
	cases := []struct {
		name         string
		routes       []review.RouteStats
		usd          float64
		text, md     string
		tableUnknown bool
	}{
		{"unpriced", []review.RouteStats{route("local", false, 0)}, 0,
			"Usage: 1,200 prompt tokens, 80 completion tokens, cost – (no price configured)\n",
			"- **Cost:** – (no price configured)\n", true},
		{"priced", []review.RouteStats{route("paid", true, 0.0123)}, 0.0123,
			"Usage: 1,200 prompt tokens, 80 completion tokens, $0.0123\n",
			"- **Cost:** $0.0123\n", false},
		{"priced and free", []review.RouteStats{route("free", true, 0)}, 0,
			"Usage: 1,200 prompt tokens, 80 completion tokens, $0.0000\n",
			"- **Cost:** $0.0000\n", false},
		{"mixed", []review.RouteStats{route("paid", true, 0.0123), route("local", false, 0)}, 0.0123,
			"Usage: 2,400 prompt tokens, 160 completion tokens, at least $0.0123 (no price configured for route local)\n",
			"- **Cost:** at least $0.0123 (no price configured for route local)\n", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := &review.Report{Schema: review.Schema, Outcome: review.OutcomeComplete, Routes: c.routes, Policy: testPolicy(),
				Summary: review.Summary{Planned: 1, Reviewed: 1}, Items: []review.Item{reviewedItem("code-review", "a.go", 1, 5, 10)}}
			for _, rt := range c.routes {
				r.Usage.PromptTokens += rt.PromptTokens
				r.Usage.CompletionTokens += rt.CompletionTokens
			}
			r.Usage.CostUSD = c.usd
			out := map[Format]string{}
			for _, f := range []Format{FormatText, FormatMarkdown, FormatJSON} {
				var b bytes.Buffer
				if err := Write(&b, r, f, Options{}); err != nil {
					t.Fatal(err)
				}
				out[f] = b.String()
			}
			if !strings.Contains(out[FormatText], c.text) {
				t.Errorf("text lacks %q:\n%s", c.text, out[FormatText])
			}
			if !strings.Contains(out[FormatMarkdown], c.md) {
				t.Errorf("markdown lacks %q:\n%s", c.md, out[FormatMarkdown])
			}
			for f, s := range out {
				if f != FormatJSON && c.tableUnknown != strings.Contains(s, "–") {
					t.Errorf("%s: shows an unknown cost: %t, want %t:\n%s", f, !c.tableUnknown, c.tableUnknown, s)
				}
				if f != FormatJSON && c.usd == 0 && c.tableUnknown && strings.Contains(s, "$0.0000") {
					t.Errorf("%s: an unknown cost reads as $0.0000:\n%s", f, s)
				}
			}
			if !strings.Contains(out[FormatJSON], `"cost_usd": `) || strings.Contains(out[FormatJSON], `"cost_usd": null`) {
				t.Errorf("JSON: cost_usd is not a number:\n%s", out[FormatJSON])
			}
		})
	}
}
