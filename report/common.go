package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/org/warden/execution"
	"github.com/org/warden/review"
)

// counts are the item and finding totals every human format states.
type counts struct {
	planned, reviewed, failed, skipped, notReviewed int
}

// countItems counts from the items themselves, so that an item that was not
// reviewed can never be hidden by a stale summary. Anything whose status is
// not "reviewed" (failed, skipped, or an unknown status) counts as not
// reviewed. Only when the report carries no items does it fall back to the
// summary.
func countItems(r *review.Report) counts {
	if len(r.Items) == 0 {
		s := r.Summary
		return counts{
			planned: s.Planned, reviewed: s.Reviewed, failed: s.Failed, skipped: s.Skipped,
			notReviewed: max(0, s.Planned-s.Reviewed),
		}
	}
	var c counts
	for _, it := range r.Items {
		c.planned++
		switch it.Status {
		case review.StatusReviewed:
			c.reviewed++
		case review.StatusFailed:
			c.failed++
			c.notReviewed++
		case review.StatusSkipped:
			c.skipped++
			c.notReviewed++
		default:
			c.notReviewed++
		}
	}
	return c
}

// notReviewed returns the items that were not reviewed, in report order
// (priority order).
func notReviewed(r *review.Report) []review.Item {
	var out []review.Item
	for _, it := range r.Items {
		if it.Status != review.StatusReviewed {
			out = append(out, it)
		}
	}
	return out
}

// reasonOf is an item's reason, or its status when the reason is missing.
func reasonOf(it review.Item) string {
	return cmp.Or(it.Reason, string(it.Status), "unknown")
}

// tally counts keys, most frequent first, then by name.
type tallyEntry struct {
	key string
	n   int
}

func tally(keys []string) []tallyEntry {
	m := map[string]int{}
	for _, k := range keys {
		m[k]++
	}
	out := make([]tallyEntry, 0, len(m))
	for k, n := range m {
		out = append(out, tallyEntry{k, n})
	}
	slices.SortFunc(out, func(a, b tallyEntry) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	return out
}

// reasonBreakdown is "timeout 2, budget 1".
func reasonBreakdown(items []review.Item) string {
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = OneLine(reasonOf(it))
	}
	return joinTally(tally(keys), func(e tallyEntry) string {
		return e.key + " " + review.Count(e.n)
	})
}

// causeBreakdown is "auth on route primary" when every item failed for the
// same cause on the same route, else "auth on route primary: 30, timeout on
// route backup: 10" (FailureCause: what the provider did, not what warden
// stopped later); then how many items warden stopped after those failures:
// "server_error on route primary; 33 then stopped by the circuit breaker".
func causeBreakdown(r *review.Report, items []review.Item) string {
	keys := make([]string, len(items))
	var stops []string
	for i, it := range items {
		k := OneLine(FailureCause(r, it))
		if it.Route != "" {
			k += " on route " + OneLine(it.Route)
		}
		keys[i] = k
		if by := stoppedBy[it.Reason]; by != "" && k != OneLine(reasonOf(it)) {
			stops = append(stops, by)
		}
	}
	t := tally(keys)
	s := t[0].key
	if len(t) > 1 {
		s = joinTally(t, func(e tallyEntry) string { return e.key + ": " + review.Count(e.n) })
	}
	if len(stops) > 0 {
		s += "; " + joinTally(tally(stops), func(e tallyEntry) string { return review.Count(e.n) + " then stopped by " + e.key })
	}
	return s
}

// stoppedBy names what stopped an item whose reason is one of the
// engine's stop reasons rather than a failure of its own call.
var stoppedBy = map[string]string{
	execution.ReasonCircuitOpen:  "the circuit breaker",
	execution.ReasonHalfOpenBusy: "the circuit breaker",
	execution.ReasonUnresponsive: "the circuit breaker",
	execution.ReasonRetryBudget:  "the retry budget",
	execution.ReasonBulkheadFull: "the concurrency cap",
}

// FailureCause is what the provider did to an item that was not
// reviewed, for the headline and the check run's title: its reason, but
// for an item the engine stopped (the circuit breaker, the retry budget)
// after failures, the class of its own last call, else the class most of
// its route's calls failed with ("server_error" for a route that answered
// 500 until its breaker opened, not "probe_failed"). The item's own
// reason stays in the lists of what was not reviewed.
func FailureCause(r *review.Report, it review.Item) string {
	reason := reasonOf(it)
	if stoppedBy[reason] == "" {
		return reason
	}
	if it.Class != "" && it.Class != execution.ClassRejected.String() {
		return it.Class
	}
	if c := routeFailure(r, it.Route); c != "" {
		return c
	}
	return reason
}

// routeFailure is the class most of a route's failed calls had ("" when
// none failed): what the provider did on it.
func routeFailure(r *review.Report, route string) string {
	var classes []string
	seen := map[int]bool{}
	for _, it := range r.Items {
		if it.Request > 0 {
			if seen[it.Request] {
				continue // the items of one request share its attempts
			}
			seen[it.Request] = true
		}
		for _, a := range it.Attempts {
			switch a.Class {
			case "", execution.ClassSuccess.String(), execution.ClassRejected.String(), execution.ClassCancelled.String():
				continue
			}
			if a.Route == route {
				classes = append(classes, a.Class)
			}
		}
	}
	if t := tally(classes); len(t) > 0 {
		return t[0].key
	}
	return ""
}

// joinTally joins at most four entries and says how many more there were.
func joinTally(t []tallyEntry, f func(tallyEntry) string) string {
	const maxShown = 4
	var parts []string
	for i, e := range t {
		if i == maxShown {
			parts = append(parts, review.Count(len(t)-maxShown)+" more")
			break
		}
		parts = append(parts, f(e))
	}
	return strings.Join(parts, ", ")
}

// severityBreakdown is "1 high, 2 medium", most severe first.
func severityBreakdown(fs []review.Finding) string {
	n := map[review.Severity]int{}
	for _, f := range fs {
		n[f.Severity]++
	}
	sevs := make([]review.Severity, 0, len(n))
	for s := range n {
		sevs = append(sevs, s)
	}
	slices.Sort(sevs)
	slices.Reverse(sevs)
	parts := make([]string, len(sevs))
	for i, s := range sevs {
		parts[i] = review.Count(n[s]) + " " + s.String()
	}
	return strings.Join(parts, ", ")
}

// findingsPhrase is "no findings", "1 finding (1 high)", "3 findings (1
// high, 2 medium)", or, when the review left some out of the report,
// found and shown: "488 findings, 50 shown (max_findings): 50 high".
// Found counts every valid finding the models reported: those in the
// report and those max_findings, report_on and the per-answer cap left
// out (FindingsDropped); findings without text or skill are not findings.
func findingsPhrase(r *review.Report) string {
	fs := r.Findings
	d := r.Summary.FindingsDropped
	var why []string
	for _, b := range []struct {
		n    int
		name string
	}{{d.MaxFindings, "max_findings"}, {d.BelowReportOn, "report_on " + OneLine(r.Policy.ReportOn)}, {d.AnswerCap, "answer cap"}} {
		if b.n > 0 {
			why = append(why, b.name)
		}
	}
	if found := len(fs) + d.MaxFindings + d.BelowReportOn + d.AnswerCap; found > len(fs) {
		s := fmt.Sprintf("%s, %s shown (%s)", review.Counted(found, "finding", "findings"), review.Count(len(fs)), strings.Join(why, ", "))
		if len(fs) > 0 {
			s += ": " + severityBreakdown(fs)
		}
		return s
	}
	switch len(fs) {
	case 0:
		return "no findings"
	case 1:
		return "1 finding (" + severityBreakdown(fs) + ")"
	}
	return fmt.Sprintf("%s findings (%s)", review.Count(len(fs)), severityBreakdown(fs))
}

// contractNote names the routes whose model ignored the output contract
// (review.DiagnosisOutputContract): "; the model of route primary ignores
// the output contract", or "" when none did.
func contractNote(r *review.Report) string {
	var routes []string
	for _, d := range r.Diagnoses {
		if d.Kind == review.DiagnosisOutputContract {
			routes = append(routes, d.Routes...)
		}
	}
	switch len(routes) {
	case 0:
		return ""
	case 1:
		return "; the model of route " + OneLine(routes[0]) + " ignores the output contract"
	}
	return "; the models of routes " + OneLine(strings.Join(routes, ", ")) + " ignore the output contract"
}

// longHeadline is the first line of the text report and of the SARIF notes,
// without the "warden: " prefix: the outcome, the gap, the findings and the
// duration. The Markdown summary uses Headline; both are headline.
func longHeadline(r *review.Report) string {
	return headline(r, headlineStyle{
		label: func(o review.Outcome) string {
			switch o {
			case review.OutcomeDryRun:
				return "dry run"
			case review.OutcomeComplete:
				return "complete"
			case review.OutcomeProviderUnavailable:
				return "PROVIDER UNAVAILABLE"
			}
			return ""
		},
		gapLabel: func(o review.Outcome) string {
			return cmp.Or(strings.ToUpper(OneLine(string(o))), "UNKNOWN OUTCOME")
		},
		count:         strconv.Itoa,
		findingsFirst: true,
		noFindings:    "; no findings in the reviewed items",
		suffix:        " in " + fmtElapsed(r.DurationMS),
	})
}

// headlineStyle is how a sink words the one headline.
type headlineStyle struct {
	label         func(review.Outcome) string // of dry-run, complete, provider-unavailable
	gapLabel      func(review.Outcome) string // of any other outcome, or a complete one with gaps
	count         func(int) string
	findingsFirst bool   // a complete review: "2 findings, 3 of 3 items reviewed"
	noFindings    string // what a review with gaps and no findings adds
	suffix        string // after everything but a dry run: the duration
}

// headline is the one headline builder: the outcome first and, when items
// were not reviewed, how many and why; the coverage of the change in
// changed files and lines (review.Coverage, when the report has it): what
// was not reviewed and why, what policy excluded; what came from the
// results cache; then the findings, the duration, and last where the
// change's text addresses the AI reviewer (AddressedNote).
func headline(r *review.Report, st headlineStyle) string {
	c := countItems(r)
	addressed := ""
	if note := AddressedNote(r); note != "" {
		addressed = "; " + note
	}
	label := st.label(r.Outcome)
	cov := &r.Coverage
	switch r.Outcome {
	case review.OutcomeDryRun:
		return fmt.Sprintf("%s — %s planned, %s ignored (no model call made)", label,
			review.Counted(c.planned, "work item", "work items"), review.Counted(len(r.Ignored), "path", "paths"))
	case review.OutcomeComplete:
		if c.planned == 0 && c.notReviewed == 0 && len(r.Findings) == 0 && cov.Complete() {
			return label + " — " + NothingReviewed(r) + st.suffix
		}
		if c.notReviewed == 0 && cov.Complete() {
			items := fmt.Sprintf("%s of %s items reviewed%s", st.count(c.reviewed), st.count(c.planned), cachedNote(r))
			s := fmt.Sprintf("%s — %s, %s", label, items, findingsPhrase(r))
			if st.findingsFirst {
				s = fmt.Sprintf("%s — %s, %s", label, findingsPhrase(r), items)
			}
			return s + scopeNote(r) + st.suffix + addressed
		}
	case review.OutcomeProviderUnavailable:
		s := fmt.Sprintf("%s — %s of %s items reviewed", label, st.count(c.reviewed), st.count(c.planned))
		if nr := notReviewed(r); len(nr) > 0 {
			s += " (" + causeBreakdown(r, nr) + ")"
		}
		s += contractNote(r) + limitNote(r)
		if len(r.Findings) > 0 {
			s += "; " + findingsPhrase(r)
		}
		return s + st.suffix + addressed
	}
	// Partial, an unknown outcome, or a "complete" report whose items or
	// coverage say otherwise: name the outcome as reported, and the gap:
	// first in changed files and lines when the report has its coverage.
	s := st.gapLabel(r.Outcome) + " — "
	if cov.Known() {
		s += cov.Amounts() + limitNote(r) + "; "
	}
	s += fmt.Sprintf("%s of %s items reviewed%s", st.count(c.reviewed), st.count(c.planned), cachedNote(r))
	if nr := notReviewed(r); len(nr) > 0 {
		s += fmt.Sprintf("; %s not reviewed (%s)", st.count(len(nr)), reasonBreakdown(nr))
	} else if c.notReviewed > 0 {
		s += fmt.Sprintf("; %s not reviewed", st.count(c.notReviewed))
	}
	s += contractNote(r)
	if len(r.Findings) > 0 {
		s += "; " + findingsPhrase(r)
	} else {
		s += st.noFindings
	}
	return s + st.suffix + addressed
}

// limitNote is "; not reviewed: 1,022 files over max_files" when a
// planning limit left code in scope unreviewed (the items' own gaps are
// said with them), else "".
func limitNote(r *review.Report) string {
	if b := r.Coverage.LimitBreakdown(); b != "" {
		return "; not reviewed: " + b
	}
	return ""
}

// NothingReviewed says why a complete review reviewed nothing: "nothing
// needed review (3 files excluded: 2 generated, 1 lockfile)", or "(no
// changed file)". A review in which nothing was reviewed is never a
// success that does not say so and why.
func NothingReviewed(r *review.Report) string {
	cov := &r.Coverage
	switch {
	case cov.Known() && cov.ExcludedFiles() > 0:
		return fmt.Sprintf("nothing needed review (%s excluded: %s)", review.Counted(cov.ExcludedFiles(), "file", "files"), OneLine(cov.ExcludedBreakdown()))
	case len(r.Ignored) > 0:
		return "nothing needed review (" + review.Counted(len(r.Ignored), "path", "paths") + " ignored)"
	}
	return "nothing needed review (no changed file)"
}

// cachedNote is " (20 from the results cache)" when reviewed items were
// answered from the results cache, else "": a cached answer is never
// shown as a fresh review.
func cachedNote(r *review.Report) string {
	if n := r.Summary.Cached; n > 0 {
		return " (" + review.Count(n) + " from the results cache)"
	}
	return ""
}

// scopeNote is the coverage of a complete review: "; 7 changed files
// reviewed (108 lines); 4 files excluded (1 generated, ...)", and what
// limits left out when they are out of scope; "" for a report without
// coverage.
func scopeNote(r *review.Report) string {
	cov := &r.Coverage
	if !cov.Known() {
		return ""
	}
	s := "; " + cov.Summary()
	if n := cov.ExcludedFiles(); n > 0 {
		s += fmt.Sprintf("; %s excluded (%s)", review.Counted(n, "file", "files"), OneLine(cov.ExcludedBreakdown()))
	}
	if cov.LimitsLeftOut() {
		s += " (limits_out_of_scope)"
	}
	return s
}

// listed splits findings into those shown at the threshold and those hidden.
func listed(fs []review.Finding, reportOn review.Severity) (shown, hidden []review.Finding) {
	for _, f := range fs {
		if f.Severity.ShownAt(reportOn) {
			shown = append(shown, f)
		} else {
			hidden = append(hidden, f)
		}
	}
	return shown, hidden
}

// hiddenLine is "2 findings below medium not shown (1 low, 1 info)".
func hiddenLine(hidden []review.Finding, reportOn review.Severity) string {
	return fmt.Sprintf("%s below %s not shown (%s)",
		review.Counted(len(hidden), "finding", "findings"), reportOn, severityBreakdown(hidden))
}

// droppedLines say, one line per reason, how many findings the review left
// out of the report and under which bound: "3 more findings not shown
// (max_findings 50)". None when nothing was dropped.
func droppedLines(r *review.Report) []string {
	d := r.Summary.FindingsDropped
	var out []string
	if d.MaxFindings > 0 {
		out = append(out, fmt.Sprintf("%s not shown (max_findings %d); the most severe are kept",
			review.Counted(d.MaxFindings, "more finding", "more findings"), r.Policy.MaxFindings))
	}
	if d.BelowReportOn > 0 {
		out = append(out, fmt.Sprintf("%s below %s not shown (report_on %s)",
			review.Counted(d.BelowReportOn, "finding", "findings"), OneLine(r.Policy.ReportOn), OneLine(r.Policy.ReportOn)))
	}
	if d.AnswerCap > 0 {
		out = append(out, fmt.Sprintf("%s not shown: one answer may hold at most %d findings (answer cap)",
			review.Counted(d.AnswerCap, "finding", "findings"), review.MaxFindingsPerAnswer))
	}
	if d.NoText > 0 {
		out = append(out, fmt.Sprintf("%s without a title or description dropped", review.Counted(d.NoText, "finding", "findings")))
	}
	if d.UnknownSkill > 0 {
		out = append(out, fmt.Sprintf("%s naming no skill of %s batch dropped",
			review.Counted(d.UnknownSkill, "finding", "findings"), pick(d.UnknownSkill, "its", "their")))
	}
	return append(out, verificationLines(r)...)
}

// byLocation orders findings by path, then lines, then most severe first.
func byLocation(a, b review.Finding) int {
	return cmp.Or(
		strings.Compare(a.Path, b.Path),
		cmp.Compare(a.StartLine, b.StartLine),
		cmp.Compare(a.EndLine, b.EndLine),
		cmp.Compare(b.Severity, a.Severity),
		strings.Compare(a.Skill, b.Skill),
		strings.Compare(a.Title, b.Title),
	)
}

// bySeverity orders findings most severe first, then by location.
func bySeverity(a, b review.Finding) int {
	if c := cmp.Compare(b.Severity, a.Severity); c != 0 {
		return c
	}
	return byLocation(a, b)
}

func sorted(fs []review.Finding, f func(a, b review.Finding) int) []review.Finding {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, f)
	return out
}

// ApproximateLines marks the location of a finding whose lines the model
// gave outside the reviewed change, so the review moved them into it
// (review.Finding.Clamped): every sink shows it beside the lines.
const ApproximateLines = "approximate lines"

// findingLoc is "path:12-18", with " (approximate lines)" when the lines
// were guessed.
func findingLoc(f review.Finding) string {
	loc := textLoc(dash(f.Path), f.StartLine, f.EndLine)
	if f.Clamped {
		loc += " (" + ApproximateLines + ")"
	}
	return loc
}

// lineRange is "12-18", "12", or "" when the start is unknown.
func lineRange(start, end int, sep string) string {
	if start <= 0 {
		return ""
	}
	if end <= start {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + sep + strconv.Itoa(end)
}

// fmtElapsed rounds a duration for people: "850ms", "41.2s", "2m5.4s".
func fmtElapsed(ms int64) string {
	if ms < 1000 {
		return strconv.FormatInt(max(ms, 0), 10) + "ms"
	}
	return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond).String()
}

// fmtTimeout is an exact duration, "2m0s", or "-" when unset.
func fmtTimeout(ms int64) string {
	if ms <= 0 {
		return "-"
	}
	return (time.Duration(ms) * time.Millisecond).String()
}

func fmtCost(usd float64) string { return fmt.Sprintf("$%.4f", usd) }

// pair is "3.1s/9.8s", or "-" when both are unknown (zero).
func pair(p50, p95 int64) string {
	if p50 <= 0 && p95 <= 0 {
		return "-"
	}
	return fmtElapsed(p50) + "/" + fmtElapsed(p95)
}

// tokensPair is a route's prompt and completion tokens, "12,345/2,345".
func tokensPair(rt review.RouteStats) string {
	return review.Count(rt.PromptTokens) + "/" + review.Count(rt.CompletionTokens)
}

// unknownCost is how every sink shows a cost it cannot know (tokens spent
// on a route without a price): unknown, never "$0.0000", which reads as
// free. The JSON report keeps its numbers (cost_usd 0, routes[].priced
// false).
const unknownCost = "–"

// routeCost is a route's cost, or unknownCost for a route without a price
// (a zero cost there means unknown, not free).
func routeCost(rt review.RouteStats) string {
	if !rt.Priced && rt.CostUSD == 0 {
		return unknownCost
	}
	return fmtCost(rt.CostUSD)
}

// usageCost is the review's cost: dollars when every route that spent
// tokens has a price; unknownCost when none has; a lower bound naming the
// unpriced routes (each through name, the sink's own neutralising) when
// some have.
func usageCost(r *review.Report, name func(string) string) string {
	var priced bool
	var unpriced []string
	for _, rt := range r.Routes {
		switch {
		case rt.PromptTokens+rt.CompletionTokens == 0:
		case rt.Priced || rt.CostUSD > 0:
			priced = true
		default:
			unpriced = append(unpriced, name(rt.Name))
		}
	}
	switch {
	case len(unpriced) == 0 && (priced || r.Usage.CostUSD > 0 || r.Usage.PromptTokens+r.Usage.CompletionTokens == 0):
		return fmtCost(r.Usage.CostUSD)
	case len(unpriced) == 0, !priced:
		return unknownCost + " (no price configured)"
	}
	return fmt.Sprintf("at least %s (no price configured for %s %s)", fmtCost(r.Usage.CostUSD),
		review.Plural(len(unpriced), "route", "routes"), strings.Join(unpriced, ", "))
}

// modelCalled reports whether the review called a model: a route has
// calls or rejected attempts, or an item has an attempt. A review with
// nothing to review, or whose every answer came from the results cache,
// called none.
func modelCalled(r *review.Report) bool {
	if len(r.Items) == 0 {
		return false
	}
	for _, rt := range r.Routes {
		if rt.Calls > 0 || rt.Rejected > 0 {
			return true
		}
	}
	for _, it := range r.Items {
		if len(it.Attempts) > 0 {
			return true
		}
	}
	return false
}

// cacheLine says how many reviewed items the results cache answered and
// who answered them then: "2 of the 3 reviewed items came from the results
// cache, answered earlier by moonshotai/kimi-k2 at openrouter.ai (route
// primary); no model was called for them". "" when none did.
func cacheLine(r *review.Report) string {
	n := r.Summary.Cached
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s of the %s reviewed %s from the results cache, answered earlier by %s; no model was called for %s",
		review.Count(n), review.Count(r.Summary.Reviewed), pick(n, "item came", "items came"), cacheWho(r), pick(n, "it", "them"))
}

// cacheWho is who answered the items served from the results cache:
// "moonshotai/kimi-k2 at openrouter.ai (route primary)", the model and
// endpoint the cache's key holds and the current route with them; several
// joined, most items first.
func cacheWho(r *review.Report) string {
	var by []string
	for _, it := range r.Items {
		if !it.Cached {
			continue
		}
		who := cmp.Or(OneLine(it.CachedModel), "an unrecorded model")
		if e := OneLine(it.CachedEndpoint); e != "" {
			who += " at " + e
		}
		if rt := OneLine(it.Route); rt != "" {
			who += " (route " + rt + ")"
		}
		by = append(by, who)
	}
	return joinTally(tally(by), func(e tallyEntry) string { return e.key })
}

// fallbackNone is the line of a review that called a model and had no
// fallback: it speaks only of the items that called one.
func fallbackNone(r *review.Report) string {
	if r.Summary.Cached > 0 {
		return "none; every reviewed item that called a model was served by its first attempt's route (the " +
			review.Counted(r.Summary.Cached, "item", "items") + " from the results cache called none)."
	}
	return "none; every reviewed item was served by its first attempt's route."
}

// fallbackSummary is "2 items were served by a route other than their first
// attempt's (fallback: 2)".
func fallbackSummary(fbs []fallbackItem) string {
	by := make([]string, len(fbs))
	for i, f := range fbs {
		by[i] = f.route
	}
	served := joinTally(tally(by), func(e tallyEntry) string { return e.key + ": " + review.Count(e.n) })
	return fmt.Sprintf("%s served by a route other than %s first attempt's (%s)",
		wereItems(len(fbs)), pick(len(fbs), "its", "their"), served)
}

// sanitize removes what must never reach a terminal or a renderer from
// untrusted text: C0 and C1 control characters (escape sequences), bidi
// overrides and isolates (Trojan Source), and invalid UTF-8. Newlines are
// kept when keepNewlines is set (CRLF becomes LF); tabs are kept.
func sanitize(s string, keepNewlines bool) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for i, w := 0, 0; i < len(s); i += w {
		r, size := utf8.DecodeRuneInString(s[i:])
		w = size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n':
			if keepNewlines {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		case r == '\t':
			b.WriteByte('\t')
		case unicode.IsControl(r), IsBidiControl(r):
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// IsBidiControl reports whether r reorders text (bidi embeddings, overrides,
// isolates and marks): untrusted text can use it to make what is shown
// differ from what is there, so every sink drops it.
func IsBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut
// with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// dash stands in for an empty cell.
func dash(s string) string { return cmp.Or(s, "-") }

// ignoredWords is a path's reason as the lists show it: the reason, and
// for a file a limit cut, how many of its lines were not reviewed ("partly
// reviewed: 43 lines over max_changed_lines" for limit:lines:partial).
func ignoredWords(x review.Ignored) string {
	if x.Reason == "limit:lines:partial" {
		return fmt.Sprintf("partly reviewed: %s over max_changed_lines", review.Counted(x.Lines, "line", "lines"))
	}
	if x.Lines > 0 {
		return fmt.Sprintf("%s (%s)", x.Reason, review.Counted(x.Lines, "changed line", "changed lines"))
	}
	return x.Reason
}
