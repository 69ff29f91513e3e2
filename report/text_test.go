package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/org/warden/review"
)

func TestTextColor(t *testing.T) {
	t.Parallel()
	for _, tc := range goldenCases() {
		for _, color := range []bool{false, true} {
			opts := tc.opts
			opts.Color = color
			var buf bytes.Buffer
			if err := Write(&buf, tc.report, FormatText, opts); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(buf.String(), "\x1b["); got != color {
				t.Errorf("Write(%s, text, Color=%v) has escape codes = %v, want %v", tc.name, color, got, color)
			}
		}
		for _, f := range []Format{FormatJSON, FormatMarkdown, FormatSARIF} {
			var buf bytes.Buffer
			if err := Write(&buf, tc.report, f, Options{Color: true}); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(buf.String(), "\x1b") {
				t.Errorf("Write(%s, %v, Color=true) has escape codes, want none outside text", tc.name, f)
			}
		}
	}
}

// TestTextUntrusted checks model- and diff-provided text cannot drive the
// terminal: no escape sequences, no carriage returns, no bidi overrides.
func TestTextUntrusted(t *testing.T) {
	t.Parallel()
	evil := "ok\x1b]0;pwned\x07\x1b[2J\rfake\u202eevil\x9b31m"
	r := &review.Report{
		Outcome: review.OutcomePartial,
		Findings: []review.Finding{{Skill: evil, Severity: review.SeverityHigh, Title: evil, Description: evil,
			Path: evil, StartLine: 1, EndLine: 1, Suggestion: evil}},
		Items:   []review.Item{{Skill: evil, Path: evil, Status: review.StatusFailed, Reason: evil, Route: evil}},
		Ignored: []review.Ignored{{Path: evil, Reason: evil}},
		Routes:  []review.RouteStats{{Name: evil, Model: evil}},
	}
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatText, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"\x1b", "\r", "\x07", "\u202e", "\u009b"} {
		if strings.Contains(buf.String(), bad) {
			t.Errorf("Write(text) contains %q:\n%q", bad, buf.String())
		}
	}
}

func TestLongHeadline(t *testing.T) {
	t.Parallel()
	item := func(status review.ItemStatus, reason, route string) review.Item {
		return review.Item{Skill: "s", Path: "a.go", Status: status, Reason: reason, Route: route}
	}
	high := review.Finding{Severity: review.SeverityHigh}
	tests := []struct {
		name string
		in   review.Report
		want string
	}{
		{"complete", review.Report{Outcome: review.OutcomeComplete, DurationMS: 41234,
			Items:    []review.Item{item(review.StatusReviewed, "", "p")},
			Findings: []review.Finding{high}},
			"complete — 1 finding (1 high), 1 of 1 items reviewed in 41.2s"},
		{"cost cap before any call", review.Report{Outcome: review.OutcomePartial, DurationMS: 10,
			Items: []review.Item{item(review.StatusSkipped, "budget:cost", ""), item(review.StatusSkipped, "budget:cost", "")}},
			"PARTIAL — 0 of 2 items reviewed; 2 not reviewed (budget:cost 2); no findings in the reviewed items in 10ms"},
		{"several causes", review.Report{Outcome: review.OutcomeProviderUnavailable, DurationMS: 2000,
			Items: []review.Item{item(review.StatusFailed, "auth", "primary"), item(review.StatusFailed, "timeout", "backup"),
				item(review.StatusFailed, "auth", "primary"), item(review.StatusSkipped, "", "")}},
			"PROVIDER UNAVAILABLE — 0 of 4 items reviewed (auth on route primary: 2, skipped: 1, timeout on route backup: 1) in 2s"},
		{"complete but an item failed", review.Report{Outcome: review.OutcomeComplete,
			Items: []review.Item{item(review.StatusReviewed, "", "p"), item(review.StatusFailed, "timeout", "p")}},
			"COMPLETE — 1 of 2 items reviewed; 1 not reviewed (timeout 1); no findings in the reviewed items in 0ms"},
		{"summary only", review.Report{Outcome: review.OutcomePartial, Summary: review.Summary{Planned: 4, Reviewed: 1}},
			"PARTIAL — 1 of 4 items reviewed; 3 not reviewed; no findings in the reviewed items in 0ms"},
		{"dry run", review.Report{Outcome: review.OutcomeDryRun, Items: []review.Item{item(review.StatusPlanned, "", "")},
			Ignored: []review.Ignored{{Path: "go.sum"}}},
			"dry run — 1 work item planned, 1 path ignored (no model call made)"},
	}
	for _, tt := range tests {
		if got := longHeadline(&tt.in); got != tt.want {
			t.Errorf("longHeadline(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
