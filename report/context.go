package report

import (
	"bytes"
	"fmt"

	"github.com/org/warden/review"
)

// textContext lists, under the plan, what each item's request carries
// beyond the hunk ([review] context): nothing when context is off.
func textContext(buf *bytes.Buffer, r *review.Report) {
	var header bool
	for _, it := range r.Items {
		if it.Context == "" {
			continue
		}
		if !header {
			buf.WriteString("\nContext beyond the hunk, per item:\n")
			header = true
		}
		fmt.Fprintf(buf, "  %s %s: %s (%d chars)\n", cell(it.Skill), cell(textLoc(it.Path, it.StartLine, it.EndLine)), OneLine(it.Context), it.ContextChars)
	}
}
