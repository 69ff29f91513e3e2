package review

import (
	"slices"

	"github.com/org/warden/execution"
)

// ItemReasons lists every Item.Reason a review can produce: the class of a
// failed item (every execution class but success, and
// ReasonPromptTruncated, and the engine's stop reasons that failureReason
// reports instead of the class: circuit_open, retry_budget, ...) and the
// reason of a skipped one
// (execution.SkipReasons). Sinks explain each of them.
func ItemReasons() []string {
	var out []string
	for _, c := range execution.Classes() {
		if c != execution.ClassSuccess {
			out = append(out, c.String())
		}
	}
	out = append(out, ReasonPromptTruncated)
	for _, r := range stopReasons { // what stopped a failed item, where it says more than its class
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	for _, r := range execution.SkipReasons {
		if !slices.Contains(out, r) { // cancelled is a class and a skip reason
			out = append(out, r)
		}
	}
	return out
}
