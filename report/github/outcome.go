package github

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/org/warden/execution"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// The check-run conclusions GitHub accepts ("action_required, cancelled,
// failure, neutral, success, skipped, timed_out"; stale is set by GitHub
// only). GitHub API docs: https://docs.github.com/rest/checks/runs#update-a-check-run
const (
	ConclusionSuccess        = "success"
	ConclusionNeutral        = "neutral"
	ConclusionFailure        = "failure"
	ConclusionCancelled      = "cancelled"
	ConclusionSkipped        = "skipped"
	ConclusionTimedOut       = "timed_out"
	ConclusionActionRequired = "action_required"
)

// Conclusions lists every conclusion GitHub accepts.
var Conclusions = []string{
	ConclusionActionRequired, ConclusionCancelled, ConclusionFailure, ConclusionNeutral,
	ConclusionSkipped, ConclusionSuccess, ConclusionTimedOut,
}

// IncompleteConclusions lists the values the incomplete-conclusion input may
// take: every conclusion except success and skipped. neutral is among them
// for teams that want an incomplete review to pass required checks (it
// does: see Passes); it is never the default.
var IncompleteConclusions = []string{
	ConclusionFailure, ConclusionActionRequired, ConclusionCancelled, ConclusionTimedOut, ConclusionNeutral,
}

// DefaultIncompleteConclusion is the incomplete-conclusion input's default:
// a conclusion branch protection does not count as passing, so that a
// partial or provider-unavailable review never lets a pull request merge
// unless a maintainer accepts it (/warden accept, AcceptedOutput) or
// finishes it (/warden resume).
const DefaultIncompleteConclusion = ConclusionFailure

// Passes reports whether branch protection counts a check run with
// conclusion c as passing a required status check: success, neutral and
// skipped do; every other conclusion, and a check run not completed,
// blocks the merge. "A job that is skipped will report its status as
// Success. It will not prevent a pull request from merging, even if it is
// a required check", and neutral and skipped are "treated as a success"
// (docs.github.com/en/pull-requests/collaborating-with-pull-requests/collaborating-on-repositories-with-code-quality-features/about-status-checks#check-statuses-and-conclusions;
// palantir/bulldozer v1.12.0 changed to accept skipped and neutral,
// "matching GitHub's behavior").
func Passes(c string) bool {
	return c == ConclusionSuccess || c == ConclusionNeutral || c == ConclusionSkipped
}

// ParseIncompleteConclusion checks the incomplete-conclusion input; empty
// gives DefaultIncompleteConclusion.
func ParseIncompleteConclusion(s string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if v == "" {
		return DefaultIncompleteConclusion, nil
	}
	if slices.Contains(IncompleteConclusions, v) {
		return v, nil
	}
	return "", fmt.Errorf("incomplete-conclusion %q: want one of %s (never success or skipped; neutral passes required checks)",
		s, strings.Join(IncompleteConclusions, ", "))
}

// Conclusion is the one place that maps a review to a check-run conclusion
// (DESIGN.md §4 and §7, issue 4):
//
//	cancelled                                    → cancelled
//	a finding at or above failOn (any outcome)   → failure
//	complete, findings (none blocking)           → neutral
//	complete, text addressed to the AI reviewer  → neutral
//	complete, no findings                        → success
//	partial, provider-unavailable, anything else → incomplete (default failure)
//
// A report that says complete while one of its items or of the changed
// lines in scope was not reviewed (review.Report.Complete) is treated as
// incomplete. incomplete is checked with ParseIncompleteConclusion; an
// invalid value gives the default, never success.
//
// Text of the change addressed to the AI reviewer (review.Report.
// Injections: "report no findings", a role tag) is a possible injection
// the models may have obeyed, so such a review is never a success; it
// does not fail the gate by itself either (its findings are low, below
// the default fail-on), so it is neutral, which passes required checks
// and says in the title why it is not clean.
func Conclusion(r *review.Report, failOn review.Severity, incomplete string, cancelled bool) string {
	if cancelled {
		return ConclusionCancelled
	}
	if r == nil {
		return incompleteOr(incomplete)
	}
	if r.Blocks(failOn) {
		return ConclusionFailure
	}
	if !r.Complete() {
		return incompleteOr(incomplete)
	}
	if len(r.Findings) > 0 || len(r.Injections) > 0 {
		return ConclusionNeutral
	}
	return ConclusionSuccess
}

func incompleteOr(incomplete string) string {
	c, err := ParseIncompleteConclusion(incomplete)
	if err != nil {
		return DefaultIncompleteConclusion
	}
	return c
}

type itemCounts struct{ planned, reviewed int }

func countItems(r *review.Report) itemCounts {
	if len(r.Items) == 0 {
		return itemCounts{r.Summary.Planned, r.Summary.Reviewed}
	}
	c := itemCounts{planned: len(r.Items)}
	for _, it := range r.Items {
		if it.Status == review.StatusReviewed {
			c.reviewed++
		}
	}
	return c
}

// MaxTitle caps the check run's output.title. GitHub's OpenAPI description
// gives no maxLength for it (only summary and text: "Maximum length: 65535
// characters"); 255 is the documented cap of an annotation's title ("The
// maximum size is 255 characters") and what other GitHub clients cap the
// check title at (devops-thiago/ThrillhouseBot#503), so it is the safe bound.
const MaxTitle = 255

// Title is the one place that words the check run's title. It starts with
// the outcome:
//
//	Complete: no findings
//	Complete: nothing needed review (3 files excluded: 2 generated, 1 lockfile)
//	Complete: 3 findings, 1 high
//	Partial: 37 of 40 reviewed, 3 timed out
//	Partial: 37 of 40 reviewed, 2 timed out, 1 skipped (budget); 2 findings, 1 critical
//	Partial: 300 of 1,510 files reviewed (1,022 files over max_files, 188 files over max_changed_lines)
//	Provider unavailable: 0 of 40 reviewed (auth)
//	Cancelled: 12 of 40 reviewed; 1 finding
//	Complete: no findings; 2 via fallback
//	Complete: no findings; 20 from the results cache
//	Complete: no findings; text addressed to the AI reviewer in the pull request's description
//	Complete: 1 finding; text addressed to the AI reviewer in 1 changed line
//
// Only critical and high findings are counted by severity; the total counts
// every finding. A review whose limits left changed files in scope
// unreviewed (review.Coverage) counts files. Where the change's text
// addresses the AI reviewer (report.AddressedNote) follows the findings,
// then the reviewed items answered from the results cache and those a
// fallback route served: none is ever silent. The title is at most
// MaxTitle bytes, on one line.
func Title(r *review.Report, cancelled bool) string {
	if r == nil {
		r = &review.Report{}
	}
	tail := ""
	if note := report.AddressedNote(r); note != "" {
		tail = "; " + note
	}
	if n := report.ServedByFallback(r); n > 0 {
		tail += fmt.Sprintf("; %d via fallback", n)
	}
	if n := r.Summary.Cached; n > 0 {
		tail += "; " + review.Count(n) + " from the results cache"
	}
	c := countItems(r)
	cov := &r.Coverage
	var s string
	switch {
	case cancelled:
		s = fmt.Sprintf("Cancelled: %d of %d reviewed", c.reviewed, c.planned)
	case r.Outcome == review.OutcomeDryRun:
		s = fmt.Sprintf("Dry run: %d planned", c.planned)
	case r.Complete():
		switch {
		case len(r.Findings) > 0:
			return clipTitle("Complete: " + findingsTitle(r) + tail)
		case c.planned == 0:
			return clipTitle("Complete: " + report.NothingReviewed(r))
		default:
			return clipTitle("Complete: no findings" + tail)
		}
	case r.Outcome == review.OutcomeProviderUnavailable:
		s = fmt.Sprintf("Provider unavailable: %d of %d reviewed", c.reviewed, c.planned)
		if causes := failureCauses(r); causes != "" {
			s += " (" + causes + ")"
		}
	default:
		name := "Partial"
		if r.Outcome != review.OutcomePartial && r.Outcome != review.OutcomeComplete {
			name = "Incomplete"
			if o := titleWord(string(r.Outcome)); o != "" {
				name += " (" + o + ")"
			}
		}
		if lim := cov.LimitBreakdown(); lim != "" {
			s = fmt.Sprintf("%s: %s of %s files reviewed (%s)", name, review.Count(cov.Reviewed.Files), review.Count(cov.InScope.Files), lim)
			if c.planned > c.reviewed {
				s += fmt.Sprintf("; %d of %d items", c.reviewed, c.planned)
			}
		} else {
			s = fmt.Sprintf("%s: %d of %d reviewed", name, c.reviewed, c.planned)
		}
		if gaps := gapBreakdown(r); gaps != "" {
			s += ", " + gaps
		} else if c.planned > c.reviewed {
			s += fmt.Sprintf(", %d not reviewed", c.planned-c.reviewed)
		}
	}
	if len(r.Findings) > 0 {
		s += "; " + findingsTitle(r)
	}
	return clipTitle(s + tail)
}

// findingsTitle is "1 finding", "3 findings, 1 high" or "5 findings, 1
// critical, 2 high"; when the review left findings out of the report
// (max_findings, report_on, the answer cap), found and shown: "488
// findings, 50 shown, 50 high".
func findingsTitle(r *review.Report) string {
	fs := r.Findings
	d := r.Summary.FindingsDropped
	found := len(fs) + d.MaxFindings + d.BelowReportOn + d.AnswerCap
	s := strconv.Itoa(found) + " finding"
	if found != 1 {
		s += "s"
	}
	if found > len(fs) {
		s += ", " + strconv.Itoa(len(fs)) + " shown"
	}
	var crit, high int
	for _, f := range fs {
		switch {
		case f.Severity >= review.SeverityCritical:
			crit++
		case f.Severity == review.SeverityHigh:
			high++
		}
	}
	if crit > 0 {
		s += fmt.Sprintf(", %d critical", crit)
	}
	if high > 0 {
		s += fmt.Sprintf(", %d high", high)
	}
	return s
}

// gapBreakdown is "3 timed out, 2 skipped (budget)": the items not reviewed,
// grouped by what became of them, most frequent first.
func gapBreakdown(r *review.Report) string {
	var keys []string
	for _, it := range r.Items {
		if it.Status == review.StatusReviewed {
			continue
		}
		keys = append(keys, gapPhrase(it))
	}
	return joinCounts(keys, func(k string, n int) string { return strconv.Itoa(n) + " " + k })
}

func gapPhrase(it review.Item) string {
	reason := titleWord(it.Reason)
	switch {
	case it.Status == review.StatusFailed && reason == execution.ClassTimeout.String():
		return "timed out"
	case it.Status == review.StatusFailed && reason == execution.ClassRateLimited.String():
		return "rate limited"
	case it.Status == review.StatusFailed && reason != "":
		return "failed (" + reason + ")"
	case it.Status == review.StatusFailed:
		return "failed"
	case it.Status == review.StatusSkipped && reason == execution.ReasonCancelled:
		return "cancelled"
	case it.Status == review.StatusSkipped && reason != "":
		return "skipped (" + reason + ")"
	case it.Status == review.StatusSkipped:
		return "skipped"
	}
	return "not reviewed"
}

// failureCauses is "auth" or "auth, timeout": the distinct causes of the
// items not reviewed (report.FailureCause: what the provider did), most
// frequent first.
func failureCauses(r *review.Report) string {
	var keys []string
	for _, it := range r.Items {
		if it.Status != review.StatusReviewed {
			keys = append(keys, titleWord(report.FailureCause(r, it)))
		}
	}
	return joinCounts(keys, func(k string, _ int) string { return k })
}

// joinCounts joins at most four groups of equal keys, most frequent first,
// then by name, and says how many groups more there were.
func joinCounts(keys []string, f func(k string, n int) string) string {
	n := map[string]int{}
	for _, k := range keys {
		n[k]++
	}
	uniq := make([]string, 0, len(n))
	for k := range n {
		uniq = append(uniq, k)
	}
	slices.SortFunc(uniq, func(a, b string) int {
		return cmp.Or(cmp.Compare(n[b], n[a]), strings.Compare(a, b))
	})
	const maxShown = 4
	var parts []string
	for i, k := range uniq {
		if i == maxShown {
			parts = append(parts, fmt.Sprintf("%d more", len(uniq)-maxShown))
			break
		}
		parts = append(parts, f(k, n[k]))
	}
	return strings.Join(parts, ", ")
}

// titleWord makes untrusted text (a reason, an outcome) fit a one-line
// title: control characters dropped, white space collapsed, at most 40
// bytes.
func titleWord(s string) string {
	return clipBytes(strings.Join(strings.Fields(report.Sanitize(s)), " "), 40, "…")
}

func clipTitle(s string) string {
	return clipBytes(strings.Join(strings.Fields(report.Sanitize(s)), " "), MaxTitle, "…")
}

// clipBytes cuts s to at most n bytes on a rune boundary, ending with mark.
func clipBytes(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	cut := max(0, n-len(mark))
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// The check runs of a pull request that was not reviewed: each title and
// conclusion has its home here, next to Conclusion and Title.

// ErrorOutput is the check run of a review that stopped on err before it
// could report: failure, "Error: <err>", the summary saying what and that
// nothing was published as clean.
func ErrorOutput(err error, what, after string) CheckOutput {
	msg := report.OneLine(err.Error())
	return CheckOutput{Conclusion: ConclusionFailure, Title: "Error: " + msg,
		Summary: what + ":\n\n    " + msg + "\n\n" + after}
}

// InternalErrorOutput is the check run of a run that panicked.
func InternalErrorOutput() CheckOutput {
	return CheckOutput{Conclusion: ConclusionFailure, Title: "Error: warden stopped on an internal error",
		Summary: "warden stopped on an internal error before it could report; nothing was reviewed as clean."}
}

// SkippedOutput is the check run of a pull request warden deliberately does
// not review (a draft, a bot's): skipped, which passes required checks.
func SkippedOutput(why, summary string) CheckOutput {
	return CheckOutput{Conclusion: ConclusionSkipped, Title: "Skipped: " + why, Summary: summary}
}

// NotReviewedOutput is the check run of a pull request warden could not
// review though it should have (a fork without the model key, an analysis
// that left no report, an untrusted author under trusted-authors-only):
// the incomplete conclusion, never success, and like an incomplete review
// it offers the way out and may be accepted (IncompleteNote).
func NotReviewedOutput(incomplete, why, summary string) CheckOutput {
	c := incompleteOr(incomplete)
	return CheckOutput{Conclusion: c, Title: "Not reviewed: " + why, Summary: IncompleteNote(c) + "\n\n" + summary, Records: []string{AcceptableRecord}}
}

// Acceptable reports whether the check run of r fails required checks only
// because the review is incomplete, so that a maintainer may accept it
// (/warden accept): it is not complete, no finding blocks, and it was not
// cancelled.
func Acceptable(r *review.Report, failOn review.Severity, cancelled bool) bool {
	return r != nil && !cancelled && r.Outcome != review.OutcomeDryRun && !r.Complete() && !r.Blocks(failOn)
}

// IsAcceptable reports whether check run run is one /warden accept may
// accept: warden's (the app it acts as, or GitHub Actions'), completed
// with the sealed AcceptableRecord among the records that end its summary
// (CheckRecords), and not accepted yet. Nothing in the summary's text
// counts: a file named after the record puts its text there, not its seal.
func (c *Client) IsAcceptable(run CheckRunInfo, app string) bool {
	if run.App != "" && run.App != "github-actions" && run.App != app {
		return false
	}
	recs := c.CheckRecords(run.Summary)
	if _, _, accepted := acceptedIn(recs); accepted {
		return false
	}
	return slices.Contains(recs, AcceptableRecord)
}

// AcceptableRecord is the hidden record (CheckOutput.Records) of a check
// run that /warden accept may accept (Acceptable, NotReviewedOutput).
const AcceptableRecord = "acceptable:v1"

// IncompleteNote opens the summary of an incomplete review's check run: it
// says whether the conclusion passes required checks and, when it does
// not, the way out: finish the review, or accept it on purpose. (A check
// run button to resume, "requested actions", belongs beside it.)
func IncompleteNote(conclusion string) string {
	if Passes(conclusion) {
		return fmt.Sprintf("> **This incomplete review passes required checks** (conclusion %s, input incomplete-conclusion): the pull request may merge with code warden did not review.", conclusion)
	}
	return fmt.Sprintf(incompleteNotePrefix+" (conclusion %s). "+
		"A maintainer can finish it with `/warden resume` (only what was not reviewed calls the model) "+
		"or accept it as it is with `/warden accept [reason]`, which this check run then records.", conclusion)
}

// incompleteNotePrefix opens IncompleteNote when the check does not pass.
const incompleteNotePrefix = "> **This check does not pass required checks: the review is incomplete**"

// Acceptance is a maintainer's /warden accept of an incomplete review.
type Acceptance struct {
	By     string    // the login that accepted
	Commit string    // the head commit whose check run was accepted
	Reason string    // as given; "" for none
	At     time.Time // when
}

// acceptedRE reads AcceptedOutput's record.
var acceptedRE = regexp.MustCompile(`^accepted:v1 by=([A-Za-z0-9\[\]-]+) commit=([0-9a-f]{40})$`)

// Accepted reads the acceptance recorded in a check run's summary (its
// sealed records): who accepted which commit. ok is false when there is
// none.
func (c *Client) Accepted(summary string) (by, commit string, ok bool) {
	return acceptedIn(c.CheckRecords(summary))
}

func acceptedIn(records []string) (by, commit string, ok bool) {
	for _, r := range records {
		if m := acceptedRE.FindStringSubmatch(r); m != nil {
			return m[1], m[2], true
		}
	}
	return "", "", false
}

// AcceptedOutput is the check run of an incomplete review a maintainer
// accepted: neutral, which passes required checks and is not a success;
// the title says who accepted what; the summary records who, which
// commit, when and why, above what the review said. Its sealed records
// are kept (the state the next push reads) less AcceptableRecord (it is
// accepted once), and the acceptance's own is added. Annotations are
// GitHub's to keep.
func (c *Client) AcceptedOutput(title, summary string, a Acceptance) CheckOutput {
	reason := "no reason given"
	if a.Reason != "" {
		reason = "“" + report.Neutralize(report.OneLine(a.Reason), "") + "”"
	}
	record := fmt.Sprintf("## warden: accepted by @%s\n\n**@%s accepted this incomplete review** of commit `%s` on %s: %s. "+
		"What the review did not cover stays unreviewed; this acceptance only lets the check pass required checks. "+
		"It holds for this commit only: a new push is reviewed afresh.\n\n---\n\n",
		a.By, a.By, a.Commit, a.At.UTC().Format("2006-01-02 15:04 MST"), reason)
	records := slices.DeleteFunc(c.CheckRecords(summary), func(r string) bool { return r == AcceptableRecord })
	records = append(records, fmt.Sprintf("accepted:v1 by=%s commit=%s", a.By, a.Commit))
	rest := stripRecords(summary)
	if strings.HasPrefix(rest, incompleteNotePrefix) { // it passes now
		if _, after, ok := strings.Cut(rest, "\n\n"); ok {
			rest = after
		}
	}
	rest = strings.TrimRight(rest, "\n") + "\n"
	rest = clipText(rest, MaxOutputText-len(record)-recordsLen(records), "\n\n_(the review's summary was cut to fit)_\n")
	return CheckOutput{
		Conclusion: ConclusionNeutral,
		Title:      clipTitle("Accepted by @" + a.By + ": " + strings.TrimPrefix(title, "Stale: ")),
		Summary:    record + rest,
		Records:    records,
	}
}

// CheckRecords are the texts of the sealed records that end a check run's
// summary (CompleteCheckRun writes CheckOutput.Records there, one a line,
// after everything else). A record anywhere above them, or one whose seal
// does not hold, is text.
func (c *Client) CheckRecords(summary string) []string {
	lines := strings.Split(strings.TrimRight(summary, "\n"), "\n")
	var out []string
	for i := len(lines) - 1; i >= 0; i-- {
		rec, ok := c.LastRecord(lines[i])
		if !ok {
			break
		}
		if rec.Sealed {
			out = append(out, rec.Text)
		}
	}
	slices.Reverse(out)
	return out
}

// stripRecords is summary less the records that end it.
func stripRecords(summary string) string {
	lines := strings.Split(strings.TrimRight(summary, "\n"), "\n")
	n := len(lines)
	for len(lines) > 0 {
		m := recordRE.FindString(lines[len(lines)-1])
		if m == "" || m != lines[len(lines)-1] {
			break
		}
		lines = lines[:len(lines)-1]
	}
	if len(lines) == n {
		return summary
	}
	return strings.Join(lines, "\n") + "\n"
}

// recordsLen is what records take at the end of a summary, sealed.
func recordsLen(records []string) int {
	n := 0
	for _, r := range records {
		n += len("\n<!-- warden: sig= -->") + len(r) + sealLen + 1
	}
	return n
}

// StaleTitle is the title of a report published on a commit that is no
// longer the pull request's head.
func StaleTitle(title string) string { return clipTitle("Stale: " + title) }
