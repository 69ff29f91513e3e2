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
