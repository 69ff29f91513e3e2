package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/org/warden/review"
)

// Label is the line every rendering of a fault-scored run starts with.
func (r *FaultResult) Label() string {
	return r.Header.Label() + "; every answer was played through each scenario's fault schedule"
}

// Write renders the result in format, one of Formats (WriteFaults).
func (r *FaultResult) Write(w io.Writer, format string) error { return WriteFaults(w, format, r) }

// WriteFaults renders the result in format, one of Formats.
func WriteFaults(w io.Writer, format string, r *FaultResult) error {
	switch format {
	case "text":
		return writeFaultsText(w, r)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			*FaultResult
			Label string `json:"label"`
		}{r, r.Label()})
	case "markdown":
		return writeFaultsMarkdown(w, r)
	}
	return fmt.Errorf("format %q: want text, json or markdown", format)
}

// faultCells are a row's cells, as both tables show them.
func faultCells(row FaultRow) []string {
	wrong := "0"
	if n := len(row.Wrong); n > 0 {
		wrong = fmt.Sprintf("%d WRONG", n)
	}
	wall := fmt.Sprintf("%v / %v", ms(row.WallMS), ms(row.BudgetMS))
	if n := len(row.OverBudget); n > 0 {
		wall += fmt.Sprintf(" (%d OVER)", n)
	}
	recall := fmt.Sprintf("%s (%d/%d)", pct(row.Recall), row.Detected, row.Known)
	if row.RecallKept != nil {
		recall += fmt.Sprintf(", %s of no faults", pct(row.RecallKept))
	}
	reviewed := fmt.Sprintf("%d/%d", row.Reviewed, row.Items)
	if row.Misses > 0 {
		reviewed += fmt.Sprintf(" (%d not in the recording)", row.Misses)
	}
	tokens := "n/a"
	if row.TokensPerItem != nil {
		tokens = fmt.Sprintf("%.0f", *row.TokensPerItem)
	}
	calls := per(row.CallsPerItem) + " / " + per(row.CallsPerReviewed)
	return []string{row.Scenario, outcomes(row.Outcomes), wrong, wall, calls, tokens, reviewed, recall}
}

var faultHeads = []string{"scenario", "outcomes", "wrong", "longest case / budget", "calls per item / reviewed item", "tokens per reviewed item", "reviewed", "recall"}

func ms(v int64) time.Duration { return (time.Duration(v) * time.Millisecond).Round(time.Second / 10) }

func per(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", *v)
}

// outcomes is "4 complete, 1 partial", in the outcomes' order.
func outcomes(m map[review.Outcome]int) string {
	var parts []string
	for _, o := range []review.Outcome{review.OutcomeComplete, review.OutcomePartial, review.OutcomeProviderUnavailable} {
		if m[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", m[o], o))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func writeFaultsText(w io.Writer, r *FaultResult) error {
	ew := &errWriter{w: w}
	clean := 0
	for _, c := range r.Cases {
		if c.Clean {
			clean++
		}
	}
	ew.printf("warden eval under fault schedules: %d cases (%d with known findings, %d clean)\n", len(r.Cases), len(r.Cases)-clean, clean)
	ew.printf("%s\n\n", r.Label())
	tw := tabwriter.NewWriter(ew.w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(faultHeads, "\t"))
	for _, row := range r.Rows {
		fmt.Fprintln(tw, strings.Join(faultCells(row), "\t"))
	}
	if ew.err == nil {
		ew.err = tw.Flush()
	}
	for _, row := range r.Rows {
		for _, wr := range row.Wrong {
			ew.printf("WRONG OUTCOME %s, case %s: %s\n", row.Scenario, wr.Case, wr.Problem)
		}
		for _, c := range row.OverBudget {
			ew.printf("OVER BUDGET %s, case %s: the review took longer than its budget of %v\n", row.Scenario, c, ms(row.BudgetMS))
		}
	}
	return ew.err
}

func writeFaultsMarkdown(w io.Writer, r *FaultResult) error {
	ew := &errWriter{w: w}
	ew.printf("## warden eval under fault schedules\n\n> %s\n\n", r.Label())
	ew.printf("| %s |\n|%s\n", strings.Join(faultHeads, " | "), strings.Repeat("---|", len(faultHeads)))
	for _, row := range r.Rows {
		cells := faultCells(row)
		for i := range cells {
			cells[i] = mdCell(cells[i])
		}
		ew.printf("| %s |\n", strings.Join(cells, " | "))
	}
	for _, row := range r.Rows {
		for _, wr := range row.Wrong {
			ew.printf("\n- **wrong outcome** %s, case %s: %s", mdCell(row.Scenario), mdCell(wr.Case), mdCell(wr.Problem))
		}
		for _, c := range row.OverBudget {
			ew.printf("\n- **over budget** %s, case %s", mdCell(row.Scenario), mdCell(c))
		}
	}
	ew.printf("\n")
	return ew.err
}
