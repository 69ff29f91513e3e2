package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/org/warden/review"
)

// TestApproximateLinesMarked: a finding whose lines the review guessed
// (the model's fell outside the chunk) says so in every format, and an
// exact one does not.
func TestApproximateLinesMarked(t *testing.T) {
	t.Parallel()
	r := &review.Report{Schema: review.Schema, Outcome: review.OutcomeComplete,
		Items: []review.Item{{Skill: "s", Path: "a.go", Status: review.StatusReviewed}},
		Findings: []review.Finding{
			{Skill: "s", Severity: review.SeverityHigh, Title: "Guessed", Path: "a.go", StartLine: 9, EndLine: 9, Clamped: true},
			{Skill: "s", Severity: review.SeverityMedium, Title: "Exact", Path: "a.go", StartLine: 3, EndLine: 4},
		}}
	for _, f := range []Format{FormatText, FormatMarkdown, FormatSARIF, FormatJSON} {
		var buf bytes.Buffer
		if err := Write(&buf, r, f, Options{}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		switch f {
		case FormatJSON:
			var got struct{ Findings []struct{ Clamped bool } }
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil || len(got.Findings) != 2 || !got.Findings[0].Clamped || got.Findings[1].Clamped {
				t.Errorf("JSON findings' clamped = %+v (%v), want true then false", got.Findings, err)
			}
		case FormatSARIF:
			if !strings.Contains(out, `"text": "Guessed (approximate lines)"`) || !strings.Contains(out, `"approximateLines": true`) ||
				strings.Count(out, "approximate") != 2 {
				t.Errorf("SARIF does not mark exactly the guessed finding:\n%s", out)
			}
		default:
			if !strings.Contains(out, "a.go:9 (approximate lines)") || strings.Contains(out, "a.go:3-4 (approximate") {
				t.Errorf("%s does not mark exactly the guessed finding's lines:\n%s", f, out)
			}
		}
	}
}

// TestHeadlineFoundAndShown: when max_findings or report_on leave findings
// out, the headline says how many were found and how many are shown.
func TestHeadlineFoundAndShown(t *testing.T) {
	t.Parallel()
	r := &review.Report{Schema: review.Schema, Outcome: review.OutcomeComplete,
		Items:  []review.Item{{Skill: "s", Path: "a.go", Status: review.StatusReviewed}},
		Policy: review.Policy{MaxFindings: 50, ReportOn: "info"},
	}
	for range 50 {
		r.Findings = append(r.Findings, review.Finding{Skill: "s", Severity: review.SeverityHigh, Title: "x", Path: "a.go", StartLine: 1, EndLine: 1})
	}
	r.Summary.FindingsDropped.MaxFindings = 438
	want := "488 findings, 50 shown (max_findings): 50 high"
	if got := Headline(r); !strings.Contains(got, want) {
		t.Errorf("Headline = %q, want it to contain %q", got, want)
	}
	var text, md bytes.Buffer
	if err := Write(&text, r, FormatText, Options{}); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(text.String(), "\n"); !strings.Contains(first, want) {
		t.Errorf("text headline = %q, want it to contain %q", first, want)
	}
	if err := Write(&md, r, FormatMarkdown, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(md.String(), "## warden: Complete — 1 of 1 items reviewed, "+mdEscape(want)+"\n") || !strings.Contains(md.String(), "### Findings (50 shown of 488 found)") {
		t.Errorf("Markdown does not give found and shown counts:\n%.400s", md.String())
	}
	r.Summary.FindingsDropped = review.FindingsDropped{}
	if got := Headline(r); !strings.HasSuffix(got, "50 findings (50 high)") {
		t.Errorf("Headline with nothing dropped = %q, want \"50 findings (50 high)\"", got)
	}
}

// TestHeadlineNamesOutputContract: a model that answers, but not with the
// JSON the prompt asks for, is named in the headline; the outcome stays.
func TestHeadlineNamesOutputContract(t *testing.T) {
	t.Parallel()
	r := &review.Report{Schema: review.Schema, Outcome: review.OutcomeProviderUnavailable,
		Items: []review.Item{{Skill: "s", Path: "a.go", Status: review.StatusFailed, Reason: "bad_response", Route: "primary",
			Answer: "Sure! Here is my review", AnswerProblem: review.ProblemNotContract}},
		Diagnoses: []review.Diagnosis{{Kind: review.DiagnosisOutputContract, Routes: []string{"primary"}, Calls: 2,
			Message: `primary: model ignores the output contract: it said: "Sure! Here is my review"`, Excerpt: "Sure! Here is my review"}},
	}
	want := "Provider unavailable — 0 of 1 items reviewed (bad_response on route primary); the model of route primary ignores the output contract"
	if got := Headline(r); got != want {
		t.Errorf("Headline = %q, want %q", got, want)
	}
	var md bytes.Buffer
	if err := Write(&md, r, FormatMarkdown, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "Sure! Here is my review") {
		t.Errorf("Markdown does not show what the model said:\n%s", md.String())
	}
}

// TestTextIgnoredReadable: the text report lists ignored paths one a line,
// grouped by reason with a count, and caps each group (Prometheus: 1,304
// paths made a 140,888-character line).
func TestTextIgnoredReadable(t *testing.T) {
	t.Parallel()
	r := &review.Report{Schema: review.Schema, Outcome: review.OutcomeComplete}
	for i := range 1304 {
		r.Ignored = append(r.Ignored, review.Ignored{Path: "web/ui/module/lezer-promql/src/file" + strings.Repeat("x", i%7) + ".js", Reason: "limit:lines"})
	}
	r.Ignored = append(r.Ignored, review.Ignored{Path: "go.sum", Reason: "lockfile"})
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatText, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	longest := 0
	for l := range strings.Lines(out) {
		longest = max(longest, len(l))
	}
	if longest > 200 || !strings.Contains(out, "  limit:lines (1,304)\n") || !strings.Contains(out, "    … and 1,284 more (--format json lists every path)\n") ||
		!strings.Contains(out, "  lockfile (1)\n    go.sum\n") {
		t.Errorf("text ignored list (longest line %d):\n%s", longest, out)
	}
}

// TestTextNotReviewedFolded: an outage of 600 items lists the first 50 in
// the text report and counts the rest (the headline has them all by
// reason; JSON lists each); 50 are listed whole.
func TestTextNotReviewedFolded(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ items, rows int }{{50, 50}, {600, 50}} {
		r := &review.Report{Schema: review.Schema, Outcome: review.OutcomeProviderUnavailable}
		for i := range tt.items {
			r.Items = append(r.Items, review.Item{Skill: "code-review", Path: fmt.Sprintf("f%03d.go", i), StartLine: 1, EndLine: 3,
				Status: review.StatusFailed, Reason: "server_error", Route: "primary"})
		}
		var buf bytes.Buffer
		if err := Write(&buf, r, FormatText, Options{}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		rows := strings.Count(out, "  failed  server_error")
		more := fmt.Sprintf("  … and %d more items (--format json lists every item, with its attempts)\n", tt.items-tt.rows)
		if rows != tt.rows || strings.Contains(out, "more items (--format json") != (tt.items > tt.rows) ||
			(tt.items > tt.rows && !strings.Contains(out, more)) || !strings.Contains(out, fmt.Sprintf("Not reviewed (%s)", review.Count(tt.items))) {
			t.Errorf("%d items: %d rows listed, want %d and the count of the rest:\n%.3000s", tt.items, rows, tt.rows, out)
		}
	}
}
