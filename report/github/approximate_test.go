package github

import (
	"bytes"
	"strings"
	"testing"

	"github.com/org/warden/review"
)

// TestApproximateLinesMarked: a finding with guessed lines says so in its
// check-run annotation, its workflow command and its review comment, whose
// suggestion is then never an applicable block.
func TestApproximateLinesMarked(t *testing.T) {
	t.Parallel()
	f := review.Finding{Skill: "s", Severity: review.SeverityHigh, Title: "Guessed", Description: "d",
		Path: "a.go", StartLine: 9, EndLine: 9, Suggestion: "x := 2", Clamped: true}
	if a := annotations([]review.Finding{f}, ""); len(a) != 1 || a[0].GetTitle() != "[high] Guessed (approximate lines)" {
		t.Errorf("annotation = %+v, want the title marked approximate", a)
	}
	var buf bytes.Buffer
	WriteAnnotations(&buf, []review.Finding{f}, review.SeverityNone)
	if !strings.Contains(buf.String(), "title=[high] Guessed (approximate lines)") {
		t.Errorf("workflow command = %q, want the title marked approximate", buf.String())
	}
	body := commentBody(f, true, "")
	if !strings.Contains(body, "_Approximate lines:") || strings.Contains(body, "```suggestion") {
		t.Errorf("comment body = %q, want it marked approximate and no applicable suggestion", body)
	}
	f.Clamped = false
	if body := commentBody(f, true, ""); strings.Contains(body, "pproximate") || !strings.Contains(body, "```suggestion") {
		t.Errorf("exact comment body = %q, want an applicable suggestion and no mark", body)
	}
}

// TestTitleFoundAndShown: the check run's title gives found and shown
// counts when max_findings left findings out.
func TestTitleFoundAndShown(t *testing.T) {
	t.Parallel()
	r := &review.Report{Outcome: review.OutcomeComplete, Items: []review.Item{{Status: review.StatusReviewed}}}
	for range 50 {
		r.Findings = append(r.Findings, review.Finding{Severity: review.SeverityHigh})
	}
	r.Summary.FindingsDropped.MaxFindings = 438
	if got, want := Title(r, false), "488 findings, 50 shown, 50 high"; !strings.Contains(got, want) {
		t.Errorf("Title = %q, want it to contain %q", got, want)
	}
}
