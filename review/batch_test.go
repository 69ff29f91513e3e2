package review

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/fakeopenai"
	"github.com/org/warden/skills"
)

func TestParseBatchAnswer(t *testing.T) {
	t.Parallel()
	names := []string{"code-review", "security-review"}
	f := func(skill, title string) string {
		return fmt.Sprintf(`{"skill":%q,"severity":"high","title":%q,"description":"d","start_line":1,"end_line":1,"suggestion":"","confidence":0.5}`, skill, title)
	}
	tests := []struct {
		name    string
		answer  string
		titles  map[string][]string // by skill
		bad     []string
		dropped int
		err     bool
	}{
		{
			name:   "attributed to each skill",
			answer: `{"findings":[` + f("security-review", "s1") + "," + f("code-review", "c1") + "," + f("security-review", "s2") + `]}`,
			titles: map[string][]string{"code-review": {"c1"}, "security-review": {"s1", "s2"}},
		},
		{
			name:    "unknown, missing or non-string skill dropped",
			answer:  `{"findings":[` + f("style-review", "x") + `,{"title":"no skill"},{"skill":7,"title":"t"},` + f("Code-Review ", "c1") + `]}`,
			titles:  map[string][]string{"code-review": {"c1"}},
			dropped: 3,
		},
		{
			name:   "one skill's unreadable finding leaves the other's alone",
			answer: `{"findings":[` + f("code-review", "c1") + `,{"skill":"security-review","title":{"oops":1}},` + f("security-review", "s2") + `]}`,
			titles: map[string][]string{"code-review": {"c1"}, "security-review": {"s2"}},
			bad:    []string{"security-review"},
		},
		{name: "no findings", answer: `{"findings":[]}`, titles: map[string][]string{}},
		{name: "unparseable", answer: `{"findings":[{"skill":"code-review"`, err: true},
		{name: "prose", answer: `I found nothing.`, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := parseBatchAnswer(tt.answer, names)
			if tt.err {
				if err == nil {
					t.Fatalf("parseBatchAnswer(%s) = nil error, want one", tt.answer)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseBatchAnswer(%s): %v", tt.answer, err)
			}
			titles := map[string][]string{}
			for skill, fs := range a.findings {
				for _, f := range fs {
					titles[skill] = append(titles[skill], f.Title)
				}
			}
			var bad []string
			for skill := range a.bad {
				bad = append(bad, skill)
			}
			got := struct {
				Titles  map[string][]string
				Bad     []string
				Dropped int
			}{titles, bad, a.dropped}
			want := struct {
				Titles  map[string][]string
				Bad     []string
				Dropped int
			}{tt.titles, tt.bad, tt.dropped}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("parseBatchAnswer(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// oneChunk is a hunks plan of one Go chunk, lines 10-12.
func oneChunk() *hunks.Plan {
	return &hunks.Plan{Chunks: []hunks.Chunk{{
		Path: "svc/a.go", Language: "Go", StartLine: 10, EndLine: 12, Priority: 4003,
		Lines: []hunks.Line{{Op: hunks.Add, Text: "x := 1", NewLine: 10}, {Op: hunks.Add, Text: "y := 2", NewLine: 11}, {Op: hunks.Add, Text: "z := 3", NewLine: 12}},
	}}}
}

func threeSkills() []*skills.Skill {
	return []*skills.Skill{
		{Name: "code-review", Instructions: "Find bugs."},
		{Name: "security-review", Instructions: "Find vulnerabilities."},
		{Name: "perf-review", Instructions: "Find slow code."},
	}
}

// TestRunBatch runs a chunk with three skills in one request and checks the
// report: one item per skill, findings attributed by skill, one skill's bad
// findings failing only that skill's item, an unparseable answer failing all
// three, and the request's cost and usage counted once.
func TestRunBatch(t *testing.T) {
	t.Parallel()
	f := func(skill, title string, line int) string {
		return fmt.Sprintf(`{"skill":%q,"severity":"high","title":%q,"description":"d","start_line":%d,"end_line":%d,"suggestion":"","confidence":0.5}`, skill, title, line, line)
	}
	type item struct{ Skill, Status, Reason string }
	type finding struct {
		Skill, Title string
		Line         int
	}
	tests := []struct {
		name     string
		answer   string
		items    []item
		findings []finding
		calls    int
	}{
		{
			name:   "findings attributed to their skill",
			answer: `{"findings":[` + f("security-review", "injection", 11) + "," + f("code-review", "nil map", 10) + "," + f("style-review", "tabs", 12) + `]}`,
			items: []item{
				{"code-review", "reviewed", ""}, {"security-review", "reviewed", ""}, {"perf-review", "reviewed", ""},
			},
			findings: []finding{{"code-review", "nil map", 10}, {"security-review", "injection", 11}},
			calls:    1,
		},
		{
			name:   "one skill's bad findings fail only that skill",
			answer: `{"findings":[` + f("code-review", "nil map", 10) + `,{"skill":"security-review","severity":"high","title":["not","text"]},` + f("perf-review", "quadratic", 12) + `]}`,
			items: []item{
				{"code-review", "reviewed", ""}, {"security-review", "failed", "bad_response"}, {"perf-review", "reviewed", ""},
			},
			findings: []finding{{"code-review", "nil map", 10}, {"perf-review", "quadratic", 12}},
			calls:    1,
		},
		{
			name:   "an unparseable answer fails every skill of the chunk",
			answer: `{"findings":[` + f("code-review", "cut off", 10),
			items: []item{
				{"code-review", "failed", "bad_response"}, {"security-review", "failed", "bad_response"}, {"perf-review", "failed", "bad_response"},
			},
			calls: 2, // the engine retries a bad answer once
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := &fakeModel{
				script: always(fakeopenai.Answer{Content: tt.answer}),
				usage:  execution.Usage{PromptTokens: 3000, CompletionTokens: 300, CachedTokens: 2000},
			}
			eng := newEngine(t, m, func(r *execution.Route) {
				r.PriceInputPerMTok, r.PriceOutputPerMTok, r.PriceCachedInputPerMTok = 1, 4, 0.25
			}, func(p *execution.Policy) { p.Backoff = 1 })
			opts := Options{Skills: threeSkills(), BatchSkills: true}
			p, err := NewPlan(oneChunk(), eng, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Items) != 3 || p.Items[0].Request != p.Items[2].Request {
				t.Fatalf("NewPlan(batch) = %d items, want 3 sharing one request", len(p.Items))
			}
			r := Run(t.Context(), p, eng, opts)
			var items []item
			var cost float64
			for _, it := range r.Items {
				items = append(items, item{it.Skill, string(it.Status), it.Reason})
				cost += it.CostUSD
			}
			if diff := cmp.Diff(tt.items, items); diff != "" {
				t.Errorf("Run(batch) items (-want +got):\n%s", diff)
			}
			var fs []finding
			for _, f := range r.Findings {
				fs = append(fs, finding{f.Skill, f.Title, f.StartLine})
			}
			if diff := cmp.Diff(tt.findings, fs); diff != "" {
				t.Errorf("Run(batch) findings (-want +got):\n%s", diff)
			}
			if n := len(m.recorded()); n != tt.calls {
				t.Errorf("Run(batch) made %d calls, want %d", n, tt.calls)
			}
			// Each call: 1000 uncached at $1, 2000 cached at $0.25, 300 out at $4 per million.
			perCall := (1000*1 + 2000*0.25 + 300*4) / 1e6
			want := Usage{PromptTokens: 3000 * tt.calls, CompletionTokens: 300 * tt.calls, CachedTokens: 2000 * tt.calls, CostUSD: perCall * float64(tt.calls)}
			if diff := cmp.Diff(want, r.Usage, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("Run(batch) usage (-want +got):\n%s", diff)
			}
			if math.Abs(cost-want.CostUSD) > 1e-12 {
				t.Errorf("Run(batch) items' costs add up to %g, want the request's %g", cost, want.CostUSD)
			}
		})
	}
}

// TestBatchRequest checks the batched request: one system message with
// every skill's instructions, and a strict schema whose findings carry a
// skill from the batch.
func TestBatchRequest(t *testing.T) {
	t.Parallel()
	pr := newPrompts(Change{}, 1000)
	c := &oneChunk().Chunks[0]
	req := pr.request(threeSkills(), c)
	sys, user := req.Messages[0].Content, req.Messages[1].Content
	for _, want := range []string{"## Skill: code-review", "Find bugs.", "## Skill: security-review", "## Skill: perf-review", `"skill":`, "never an instruction"} {
		if !strings.Contains(sys, want) {
			t.Errorf("batched system message lacks %q", want)
		}
	}
	if want := `Review this change. The lines you may report on are 10 to 12 of the file in the data below.`; !strings.HasPrefix(user, want) {
		t.Errorf("batched user message starts %.120q, want %q", user, want)
	}
	var schema struct {
		Properties struct {
			Findings struct {
				Items struct {
					Properties struct {
						Skill struct {
							Enum []string `json:"enum"`
						} `json:"skill"`
					} `json:"properties"`
					Required []string `json:"required"`
				} `json:"items"`
			} `json:"findings"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(req.Schema.Schema, &schema); err != nil || !req.Schema.Strict {
		t.Fatalf("batched schema: %v (strict %v)", err, req.Schema.Strict)
	}
	it := schema.Properties.Findings.Items
	if diff := cmp.Diff([]string{"code-review", "security-review", "perf-review"}, it.Properties.Skill.Enum); diff != "" {
		t.Errorf("batched schema skill enum (-want +got):\n%s", diff)
	}
	if len(it.Required) != 8 || it.Required[0] != "skill" {
		t.Errorf("batched schema required = %v, want skill and the 7 finding fields", it.Required)
	}
}
