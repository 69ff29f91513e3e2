package report

import (
	"fmt"
	"strings"

	"github.com/org/warden/review"
)

// verificationLines say what the optional verification pass did (review's
// verify.go): how many findings it verified and rejected (rejected ones
// are not shown), or why it did not run. None when verification is off.
func verificationLines(r *review.Report) []string {
	v := r.Verification
	if v == nil {
		return nil
	}
	if r.Outcome == review.OutcomeDryRun {
		return []string{fmt.Sprintf("verification (%s) %s", v.Mode, OneLine(strings.TrimPrefix(v.Skipped, "dry run: ")))}
	}
	if !v.Ran {
		if v.NotVerified == 0 {
			return nil // nothing to verify
		}
		return []string{fmt.Sprintf("verification skipped (%s): %s not verified", OneLine(v.Skipped), review.Counted(v.NotVerified, "finding", "findings"))}
	}
	out := []string{fmt.Sprintf("verification (%s): %d verified, %d rejected and not shown, %d not verified",
		v.Mode, v.Verified, v.Rejected, v.NotVerified)}
	if v.NotVerified > 0 && v.Skipped != "" {
		out = append(out, "not verified: "+OneLine(v.Skipped))
	}
	return out
}
