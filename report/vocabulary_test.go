package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/org/warden/execution"
	"github.com/org/warden/review"
)

// TestEveryReasonExplained enumerates the reasons an item can carry from
// execution (every class but success, every skip reason) and review
// (prompt_truncated): each has a meaning, and the Markdown summary of a
// review with one item of each counts it under its own reason, with that
// meaning.
func TestEveryReasonExplained(t *testing.T) {
	t.Parallel()
	reasons := review.ItemReasons()
	if len(reasons) < len(execution.Classes())-1+len(execution.SkipReasons)-1 {
		t.Fatalf("ItemReasons() = %v, want every class but success and every skip reason", reasons)
	}
	r := &review.Report{Schema: review.Schema, Outcome: review.OutcomePartial}
	skip := map[string]bool{}
	for _, s := range execution.SkipReasons {
		skip[s] = true
	}
	for i, reason := range reasons {
		if reasonMeaning(reason) == "" {
			t.Errorf("reason %q has no meaning in the summaries", reason)
		}
		st := review.StatusFailed
		if skip[reason] {
			st = review.StatusSkipped
		}
		r.Items = append(r.Items, review.Item{Skill: "k", Path: "f" + string(rune('a'+i)) + ".go", StartLine: 1, EndLine: 1, Status: st, Reason: reason})
	}
	r.Items = append(r.Items, review.Item{Skill: "k", Path: "ok.go", Status: review.StatusReviewed})
	r.Summary = review.Summary{Planned: len(r.Items), Reviewed: 1}
	var md bytes.Buffer
	if err := Write(&md, r, FormatMarkdown, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, reason := range reasons {
		if !strings.Contains(md.String(), "**"+mdEscape(reason)+"** — 1 item") || !strings.Contains(md.String(), reasonMeaning(reason)) {
			t.Errorf("Markdown summary does not count %q with its meaning:\n%s", reason, md.String())
		}
	}
}
