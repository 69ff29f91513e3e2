package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/review"
)

func TestHeadline(t *testing.T) {
	t.Parallel()
	failed := func(path, reason, route string) review.Item {
		return review.Item{Skill: "s", Path: path, Status: review.StatusFailed, Reason: reason, Route: route}
	}
	tests := []struct {
		name string
		in   *review.Report
		want string
	}{
		{"nil", nil, "No report"},
		{"nothing to review", &review.Report{Outcome: review.OutcomeComplete}, "Complete — nothing needed review (no changed file)"},
		{"complete, no findings", &review.Report{Outcome: review.OutcomeComplete,
			Items: []review.Item{{Status: review.StatusReviewed}, {Status: review.StatusReviewed}}},
			"Complete — 2 of 2 items reviewed, no findings"},
		{"complete with findings", &review.Report{Outcome: review.OutcomeComplete,
			Items:    []review.Item{{Status: review.StatusReviewed}},
			Findings: []review.Finding{{Severity: review.SeverityHigh}, {Severity: review.SeverityLow}}},
			"Complete — 1 of 1 items reviewed, 2 findings (1 high, 1 low)"},
		{"partial", &review.Report{Outcome: review.OutcomePartial,
			Items: []review.Item{{Status: review.StatusReviewed}, failed("a.go", "timeout", "p"), failed("b.go", "timeout", "p"),
				{Status: review.StatusSkipped, Reason: "budget"}}},
			"Partial — 1 of 4 items reviewed; 3 not reviewed (timeout 2, budget 1)"},
		{"cancelled before any call", &review.Report{Outcome: review.OutcomePartial,
			Items: []review.Item{{Status: review.StatusSkipped, Reason: "cancelled"}}},
			"Partial — 0 of 1 items reviewed; 1 not reviewed (cancelled 1)"},
		{"provider unavailable", &review.Report{Outcome: review.OutcomeProviderUnavailable,
			Items: []review.Item{failed("a.go", "auth", "primary"), failed("b.go", "auth", "primary")}},
			"Provider unavailable — 0 of 2 items reviewed (auth on route primary)"},
		// A report that says complete while an item was not reviewed is
		// never shown as complete without the gap.
		{"complete with a gap", &review.Report{Outcome: review.OutcomeComplete,
			Items: []review.Item{{Status: review.StatusReviewed}, failed("a.go", "timeout", "p")}},
			"Complete — 1 of 2 items reviewed; 1 not reviewed (timeout 1)"},
		{"dry run", &review.Report{Outcome: review.OutcomeDryRun, Items: []review.Item{{Status: review.StatusPlanned}}},
			"Dry run — 1 work item planned, 0 paths ignored (no model call made)"},
		{"unknown outcome", &review.Report{Outcome: "weird\nstuff"}, `Outcome "weird stuff" — 0 of 0 items reviewed`},
	}
	for _, tt := range tests {
		if got := Headline(tt.in); got != tt.want {
			t.Errorf("Headline(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestGroupByReason(t *testing.T) {
	t.Parallel()
	items := []review.Item{
		{Skill: "sec", Path: "auth/session.go", StartLine: 120, EndLine: 160, Status: review.StatusSkipped, Reason: "cancelled"},
		{Skill: "sec", Path: "auth/session.go", StartLine: 10, EndLine: 88, Status: review.StatusFailed, Reason: "cancelled",
			Route: "b", Attempts: []review.Attempt{{Route: "a"}, {Route: "a"}, {Route: "b"}}},
		{Skill: "style", Path: "auth/session.go", StartLine: 10, EndLine: 88, Status: review.StatusSkipped, Reason: "cancelled"},
		{Skill: "style", Path: "auth/session.go", StartLine: 50, EndLine: 119, Status: review.StatusSkipped, Reason: "cancelled"},
		{Skill: "sec", Path: "web/app.ts", Status: review.StatusFailed, Reason: "timeout", Route: "a"},
		{Skill: "sec", Path: "main.go", StartLine: 1, EndLine: 5, Status: review.StatusReviewed},
		{Skill: "sec", Path: "web/app.ts", StartLine: 3, EndLine: 9, Status: review.StatusFailed, Reason: "timeout", Route: "a"},
	}
	want := []reasonGroup{
		{reason: "cancelled", failed: 1, skipped: 3, items: 4, files: []fileGroup{{
			path:   "auth/session.go",
			ranges: []lineSpan{{10, 160}}, // 10-88, 50-119 and 120-160 touch or overlap
			skills: []string{"sec", "style"},
			routes: []string{"a → b"},
		}}},
		{reason: "timeout", failed: 2, items: 2, files: []fileGroup{{
			path: "web/app.ts", ranges: []lineSpan{{3, 9}}, whole: true, skills: []string{"sec"}, routes: []string{"a"},
		}}},
	}
	got := groupByReason(items)
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(reasonGroup{}, fileGroup{}, lineSpan{})); diff != "" {
		t.Errorf("groupByReason mismatch (-want +got):\n%s", diff)
	}
}

func TestMergeSpans(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   []lineSpan
		want string
	}{
		{nil, ""},
		{[]lineSpan{{120, 160}, {10, 88}}, "10-88, 120-160"},
		{[]lineSpan{{10, 88}, {10, 88}}, "10-88"},
		{[]lineSpan{{1, 10}, {11, 20}}, "1-20"},
		{[]lineSpan{{1, 30}, {5, 8}}, "1-30"},
		{[]lineSpan{{7, 7}}, "7"},
	}
	for _, tt := range tests {
		if got := spansText(mergeSpans(tt.in)); got != tt.want {
			t.Errorf("spansText(mergeSpans(%v)) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFallbacks(t *testing.T) {
	t.Parallel()
	at := func(route, class, reason string) review.Attempt {
		return review.Attempt{Route: route, Class: class, Reason: reason}
	}
	items := []review.Item{
		// Served by the first route after a retry: not a fallback.
		{Path: "a.go", Status: review.StatusReviewed, Route: "primary",
			Attempts: []review.Attempt{at("primary", "timeout", ""), at("primary", "success", "")}},
		// Failed on the fallback: not served at all, so not a fallback.
		{Path: "b.go", Status: review.StatusFailed, Reason: "timeout", Route: "backup",
			Attempts: []review.Attempt{at("primary", "timeout", ""), at("backup", "timeout", "")}},
		// Two hops, the first not even sent.
		{Path: "c.go", Status: review.StatusReviewed, Route: "third",
			Attempts: []review.Attempt{at("primary", "rejected", "circuit_open"), at("backup", "timeout", ""),
				at("backup", "rate_limited", ""), at("third", "success", "")}},
		// No Route recorded: the last attempt's route served it.
		{Path: "d.go", Status: review.StatusReviewed,
			Attempts: []review.Attempt{at("primary", "overloaded", ""), at("backup", "success", "")}},
		// No attempts: nothing to derive.
		{Path: "e.go", Status: review.StatusReviewed, Route: "backup"},
	}
	var got []string
	for _, f := range fallbacks(items) {
		got = append(got, f.item.Path+": "+f.path)
	}
	want := []string{
		"c.go: primary (circuit_open) → backup (rate_limited) → third",
		"d.go: primary (overloaded) → backup",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fallbacks mismatch (-want +got):\n%s", diff)
	}
}

func TestFmtCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   int
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {65535, "65,535"}, {1234567, "1,234,567"}, {-1500, "-1,500"}}
	for _, tt := range tests {
		if got := review.Count(tt.in); got != tt.want {
			t.Errorf("review.Count(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
