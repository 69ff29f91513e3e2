package review

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/org/warden/hunks"
)

// BenchmarkPrompt measures building the requests of the fixture change:
// "request" is one request (the built-in code-review skill on a 40-line
// chunk), "plan" is NewPlan of all 48 items (prompts, fence tags and the
// adaptive timeout of each).
func BenchmarkPrompt(b *testing.B) {
	_, hp, _ := fixture(b, fixtureFiles, hunks.Options{})
	sk := builtins()[0]
	c := &hp.Chunks[0]
	b.Run("request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buildRequest(sk, c, fixturePR, DefaultMaxTokens)
		}
	})
	eng := newEngine(b, &fakeModel{}, nil, nil)
	for _, batch := range []bool{false, true} {
		b.Run(fmt.Sprintf("plan/batch_skills=%v", batch), func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				p, err := NewPlan(hp, eng, Options{Skills: builtins(), Change: fixturePR, BatchSkills: batch})
				if err != nil {
					b.Fatal(err)
				}
				n = len(p.Items)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/item")
		})
	}
}

// BenchmarkParseAnswer measures reading a model's answer with 5 findings:
// plain JSON, JSON after prose in a code fence, and a batched answer split
// per skill.
func BenchmarkParseAnswer(b *testing.B) {
	var fs []map[string]any
	for i := range 5 {
		fs = append(fs, map[string]any{
			"skill": []string{"code-review", "security-review"}[i%2], "severity": "high",
			"title":       fmt.Sprintf("Nil dereference of the session in handler %d", i),
			"description": "The session can be nil when the cookie is missing; the handler dereferences it without a check, which panics the request goroutine.",
			"start_line":  10 + i, "end_line": 12 + i, "suggestion": "if s == nil {\n\treturn errNoSession\n}", "confidence": 0.8,
		})
	}
	raw, _ := json.Marshal(map[string]any{"findings": fs})
	answer := string(raw)
	names := []string{"code-review", "security-review"}
	for _, tc := range []struct {
		name  string
		parse func(string) error
		in    string
	}{
		{"json", func(s string) error { _, err := ParseAnswer(s); return err }, answer},
		{"prose+fence", func(s string) error { _, err := ParseAnswer(s); return err }, "Here is my review of the change.\n\n```json\n" + answer + "\n```\n"},
		{"batch", func(s string) error { _, err := parseBatchAnswer(s, names); return err }, answer},
		{"validate", func(s string) error {
			fs, err := ParseAnswer(s)
			validate(fs, lineRange{10, 20}, Finding{Skill: "code-review", Path: "a.go"}, nil)
			return err
		}, answer},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.in)))
			for b.Loop() {
				if err := tc.parse(tc.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
