package review

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAnswer(t *testing.T) {
	t.Parallel()
	one := `{"findings":[{"severity":"high","title":"t","description":"d","start_line":3,"end_line":4,"suggestion":"","confidence":0.9}]}`
	tests := []struct {
		name    string
		content string
		want    int // findings; -1 for an error
	}{
		{"plain", one, 1},
		{"empty findings", `{"findings":[]}`, 0},
		{"code fence", "```json\n" + one + "\n```", 1},
		{"leading prose", "Here is my review:\n\n" + one + "\nThanks.", 1},
		{"braces in prose before", "In `func f() {` I found:\n" + one, 1},
		{"findings not first key", `{"summary":"x","findings":[{"title":"a"},{"title":"b"}]}`, 2},
		{"nested object first", `{"meta":{"a":1},"findings":[]}`, 0},
		{"empty", "", -1},
		{"whitespace", "  \n ", -1},
		{"prose only", "Looks good to me!", -1},
		{"no findings key", `{"issues":[]}`, -1},
		{"findings null", `{"findings":null}`, -1},
		{"findings wrong type", `{"findings":"none"}`, -1},
		{"truncated", `{"findings":[{"severity":"high","title":"unterminated`, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseAnswer(tt.content)
			if tt.want < 0 {
				if err == nil {
					t.Fatalf("ParseAnswer(%q) = %d findings, want an error", tt.content, len(got))
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAnswer(%q) error: %v", tt.content, err)
			}
			if len(got) != tt.want {
				t.Errorf("ParseAnswer(%q) = %d findings, want %d", tt.content, len(got), tt.want)
			}
		})
	}
}

func TestParseAnswerManyBracesIsBounded(t *testing.T) {
	t.Parallel()
	braces := strings.Repeat("{ ", 200000)
	// An answer whose first key is "findings" is found wherever it is.
	if _, err := ParseAnswer(braces + `{"findings":[]}`); err != nil {
		t.Errorf("ParseAnswer(braces, then an answer) error: %v", err)
	}
	// Other objects are looked for at the first maxObjectStarts braces only.
	if _, err := ParseAnswer(braces + `{"summary":"", "findings":[]}`); err == nil {
		t.Errorf("ParseAnswer(braces, then findings as a later key) = nil error; want the search bounded")
	}
}

func raw(t *testing.T, s string) []rawFinding {
	t.Helper()
	fs, err := ParseAnswer(s)
	if err != nil {
		t.Fatalf("ParseAnswer(%q): %v", s, err)
	}
	return fs
}

func TestValidate(t *testing.T) {
	t.Parallel()
	base := Finding{Skill: "code-review", Path: "a.go", Route: "r", Model: "m"}
	f := func(mod func(*Finding)) Finding {
		g := base
		mod(&g)
		return g
	}
	r := lineRange{10, 20}
	tests := []struct {
		name   string
		answer string
		want   []Finding
	}{
		{
			"inside range keeps suggestion",
			`{"findings":[{"severity":"HIGH","title":" Nil deref ","description":"d","start_line":12,"end_line":13,"suggestion":"x := 1\n","confidence":0.8}]}`,
			[]Finding{f(func(g *Finding) {
				g.Severity, g.Title, g.Description, g.StartLine, g.EndLine, g.Suggestion, g.Confidence = SeverityHigh, "Nil deref", "d", 12, 13, "x := 1", 0.8
			})},
		},
		{
			"outside range is clamped and loses its suggestion",
			`{"findings":[{"severity":"low","title":"t","description":"d","start_line":-5,"end_line":99,"suggestion":"y","confidence":2}]}`,
			[]Finding{f(func(g *Finding) {
				g.Severity, g.Title, g.Description, g.StartLine, g.EndLine, g.Confidence, g.Clamped = SeverityLow, "t", "d", 10, 20, 1, true
			})},
		},
		{
			"end past range clamped",
			`{"findings":[{"severity":"medium","title":"t","description":"d","start_line":18,"end_line":25}]}`,
			[]Finding{f(func(g *Finding) {
				g.Severity, g.Title, g.Description, g.StartLine, g.EndLine, g.Clamped = SeverityMedium, "t", "d", 18, 20, true
			})},
		},
		{
			"lines as strings, reversed",
			`{"findings":[{"severity":"nit","title":"t","description":"d","start_line":"15","end_line":"11","suggestion":""}]}`,
			[]Finding{f(func(g *Finding) {
				g.Severity, g.Title, g.Description, g.StartLine, g.EndLine = SeverityInfo, "t", "d", 11, 15
			})},
		},
		{
			"missing end line is the start line",
			`{"findings":[{"severity":"critical","title":"t","description":"d","start_line":14}]}`,
			[]Finding{f(func(g *Finding) {
				g.Severity, g.Title, g.Description, g.StartLine, g.EndLine = SeverityCritical, "t", "d", 14, 14
			})},
		},
		{
			"unknown severity becomes medium, missing title from description",
			`{"findings":[{"severity":"spicy","description":"First sentence. More.","start_line":10,"end_line":10}]}`,
			[]Finding{f(func(g *Finding) {
				g.Severity, g.Title, g.Description, g.StartLine, g.EndLine = SeverityMedium, "First sentence", "First sentence. More.", 10, 10
			})},
		},
		{
			"empty finding dropped",
			`{"findings":[{"severity":"high","title":"","description":"  "}]}`,
			nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := validate(raw(t, tt.answer), r, base, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("validate(%s) mismatch (-want +got):\n%s", tt.answer, diff)
			}
		})
	}
}

func TestValidateCapsText(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 10000)
	answer, _ := json.Marshal(map[string]any{"findings": []map[string]any{{
		"severity": "low", "title": long, "description": long, "start_line": 1, "end_line": 1,
		"suggestion": strings.Repeat("x", maxFindingSuggestion+1),
	}}})
	got := validate(raw(t, string(answer)), lineRange{1, 1}, Finding{}, nil)
	if len(got) != 1 {
		t.Fatalf("validate(long finding) = %d findings, want 1", len(got))
	}
	if n := len([]rune(got[0].Title)); n > maxFindingTitle+20 {
		t.Errorf("title has %d runes, want at most %d plus the marker", n, maxFindingTitle)
	}
	if n := len([]rune(got[0].Description)); n > maxFindingDescription+20 {
		t.Errorf("description has %d runes, want at most %d plus the marker", n, maxFindingDescription)
	}
	if got[0].Suggestion != "" {
		t.Errorf("suggestion over %d bytes kept; want dropped", maxFindingSuggestion)
	}
}

func TestValidateCapsCount(t *testing.T) {
	t.Parallel()
	var fs []map[string]any
	for range 80 {
		fs = append(fs, map[string]any{"severity": "low", "title": "t", "description": "d", "start_line": 1, "end_line": 1})
	}
	answer, _ := json.Marshal(map[string]any{"findings": fs})
	if got := validate(raw(t, string(answer)), lineRange{1, 1}, Finding{}, nil); len(got) != MaxFindingsPerAnswer {
		t.Errorf("validate(80 findings) kept %d, want %d", len(got), MaxFindingsPerAnswer)
	}
}

func FuzzParseAnswer(f *testing.F) {
	f.Add(`{"findings":[{"severity":"high","title":"t","description":"d","start_line":3,"end_line":4,"suggestion":"s","confidence":0.5}]}`)
	f.Add("```json\n{\"findings\":[]}\n```")
	f.Add(`prose {"findings":[{"start_line":"7","end_line":1e308}]}`)
	f.Add(`{"findings":[{"start_line":-1,"end_line":-2,"severity":null}]}`)
	f.Fuzz(func(t *testing.T, content string) {
		fs, err := ParseAnswer(content)
		if err != nil {
			return
		}
		r := lineRange{5, 9}
		for _, g := range validate(fs, r, Finding{}, nil) {
			if g.StartLine < r.start || g.EndLine > r.end || g.StartLine > g.EndLine {
				t.Fatalf("validate gave lines %d-%d outside %d-%d", g.StartLine, g.EndLine, r.start, r.end)
			}
			if g.Severity < SeverityInfo || g.Severity > SeverityCritical {
				t.Fatalf("validate gave severity %v", g.Severity)
			}
			if g.Clamped && g.Suggestion != "" {
				t.Fatalf("clamped finding kept its suggestion")
			}
		}
	})
}
