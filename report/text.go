package report

import (
	"bytes"
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/org/warden/review"
)

// ANSI SGR codes. They are only written when Options.Color is set.
const (
	sgrBold    = "1"
	sgrDim     = "2"
	sgrRed     = "31"
	sgrGreen   = "32"
	sgrYellow  = "33"
	sgrCyan    = "36"
	sgrBoldRed = "1;31"
	sgrBoldYel = "1;33"
)

type palette bool

func (p palette) paint(code, s string) string {
	if !p || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func severityColor(s review.Severity) string {
	switch s {
	case review.SeverityCritical:
		return sgrBoldRed
	case review.SeverityHigh:
		return sgrRed
	case review.SeverityMedium:
		return sgrYellow
	case review.SeverityLow:
		return sgrCyan
	}
	return sgrDim
}

func outcomeColor(o review.Outcome) string {
	switch o {
	case review.OutcomeComplete:
		return sgrGreen
	case review.OutcomeProviderUnavailable:
		return sgrBoldRed
	case review.OutcomeDryRun:
		return sgrBold
	}
	return sgrBoldYel
}

// textLoc is "path:12-18".
func textLoc(path string, start, end int) string {
	p := OneLine(path)
	if lr := lineRange(start, end, "-"); lr != "" {
		return p + ":" + lr
	}
	return p
}

// writeText renders the terminal summary. Every string that came from the
// report is sanitized, so a model or a diff cannot emit escape sequences.
func writeText(buf *bytes.Buffer, r *review.Report, opts Options) error {
	p := palette(opts.Color)
	c := countItems(r)
	buf.WriteString(p.paint(outcomeColor(r.Outcome), "warden: "+longHeadline(r)) + "\n")

	textWithheld(buf, r, p)
	textAddressed(buf, r, p)
	if r.Outcome == review.OutcomeDryRun {
		textFindings(buf, r, opts, p) // the secrets', made without a model
		textIgnored(buf, r, p)
		textPlan(buf, r, p)
		textSetupNotes(buf, r, p)
		for _, l := range verificationLines(r) {
			buf.WriteString("\n" + l + "\n")
		}
		return nil
	}
	textFindings(buf, r, opts, p)
	textScope(buf, r, p)
	textNotReviewed(buf, r, c, p)
	textIgnored(buf, r, p)
	if l := cacheLine(r); l != "" {
		buf.WriteString("\n" + p.paint(sgrBold, "Results cache") + ": " + l + ".\n")
	}
	textRoutes(buf, r, p)
	textFallbacks(buf, r, p)
	textDiagnoses(buf, r, p)
	textSetupNotes(buf, r, p)
	textUsage(buf, r)
	return nil
}

func textFindings(buf *bytes.Buffer, r *review.Report, opts Options, p palette) {
	shown, hidden := listed(r.Findings, opts.ReportOn)
	dropped := droppedLines(r)
	if len(shown) == 0 && len(hidden) == 0 && len(dropped) == 0 {
		return
	}
	buf.WriteString("\n" + p.paint(sgrBold, "Findings") + "\n")
	path, first := "", true
	for _, f := range sorted(shown, byLocation) {
		if first || f.Path != path {
			path, first = f.Path, false
			buf.WriteString("\n" + p.paint(sgrBold, dash(OneLine(f.Path))) + "\n")
		} else {
			buf.WriteString("\n")
		}
		label := fmt.Sprintf("%-8s", strings.ToUpper(f.Severity.String()))
		title := OneLine(f.Title)
		if title == "" {
			title = "(untitled)"
		}
		fmt.Fprintf(buf, "  %s  %s  [%s]\n", p.paint(severityColor(f.Severity), label), title, dash(OneLine(f.Skill)))
		const indent = "            "
		buf.WriteString(indent + findingLoc(f) + "\n")
		if d := strings.TrimSpace(sanitize(f.Description, true)); d != "" {
			writeIndented(buf, indent, d)
		}
		if s := strings.Trim(sanitize(f.Suggestion, true), "\n"); strings.TrimSpace(s) != "" {
			buf.WriteString(indent + p.paint(sgrDim, "suggestion:") + "\n")
			writeIndented(buf, indent+"    ", s)
		}
	}
	if len(hidden) > 0 {
		buf.WriteString("\n" + hiddenLine(hidden, opts.ReportOn) + "\n")
	}
	if len(dropped) > 0 {
		buf.WriteString("\n")
		for _, l := range dropped {
			buf.WriteString(l + "\n")
		}
	}
}

// writeIndented writes each line of s with the prefix; blank lines stay
// blank.
func writeIndented(buf *bytes.Buffer, prefix, s string) {
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			buf.WriteString("\n")
			continue
		}
		buf.WriteString(prefix + line + "\n")
	}
}

func textNotReviewed(buf *bytes.Buffer, r *review.Report, c counts, p palette) {
	nr := notReviewed(r)
	if len(nr) == 0 {
		if c.notReviewed > 0 { // the report has a summary but no items
			fmt.Fprintf(buf, "\n%s\n  %d items were not reviewed; the report does not list them.\n",
				p.paint(sgrBoldYel, "Not reviewed ("+strconv.Itoa(c.notReviewed)+")"), c.notReviewed)
		}
		return
	}
	buf.WriteString("\n" + p.paint(sgrBoldYel, "Not reviewed ("+review.Count(len(nr))+")") +
		" — no findings here does not mean no problems\n")
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  STATUS\tREASON\tROUTE\tSKILL\tLOCATION")
	for _, it := range nr[:min(len(nr), textMaxNotReviewed)] {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", cell(string(it.Status)), cell(reasonOf(it)),
			cell(it.Route), cell(it.Skill), cell(textLoc(it.Path, it.StartLine, it.EndLine)))
	}
	tw.Flush()
	if n := len(nr) - textMaxNotReviewed; n > 0 {
		fmt.Fprintf(buf, "  … and %s (--format json lists every item, with its attempts)\n", review.Counted(n, "more item", "more items"))
	}
}

// textMaxNotReviewed is how many items that were not reviewed the text
// report lists, one a line (the headline has them all by reason); the
// count of the rest follows.
const textMaxNotReviewed = 50

// textScope is the coverage of the change in changed files and lines:
// what was reviewed of what was in scope, what was not and why, what
// policy excluded, and what an untrusted author's change had reviewed
// although a convention would exclude it.
func textScope(buf *bytes.Buffer, r *review.Report, p palette) {
	cov := &r.Coverage
	if !cov.Known() {
		return
	}
	color := sgrBold
	if !cov.Complete() {
		color = sgrBoldYel
	}
	buf.WriteString("\n" + p.paint(color, "Coverage") + ": " + cov.Amounts() + "\n")
	for _, g := range cov.NotReviewed {
		fmt.Fprintf(buf, "  not reviewed: %s, %s\n", g.Phrase(), review.Counted(g.Lines, "line", "lines"))
	}
	if len(cov.Excluded) > 0 {
		fmt.Fprintf(buf, "  excluded by policy: %s\n", OneLine(cov.ExcludedBreakdown()))
	}
	if cov.LimitsLeftOut() {
		buf.WriteString("  files over the limits are out of scope (limits_out_of_scope = true): not reviewed, not counted\n")
	}
	if len(cov.Conventions) > 0 {
		var parts []string
		for _, g := range cov.Conventions {
			parts = append(parts, g.KindPhrase())
		}
		fmt.Fprintf(buf, "  reviewed although a convention would exclude them (the author is not trusted): %s\n", OneLine(strings.Join(parts, ", ")))
	}
}

// textWithheld says what the review kept from the models (withheldLines).
func textWithheld(buf *bytes.Buffer, r *review.Report, p palette) {
	lines := withheldLines(r)
	if len(lines) == 0 {
		return
	}
	buf.WriteString("\n" + p.paint(sgrBold, "Withheld from the models (secrets)") + "\n")
	for _, l := range lines {
		buf.WriteString("  " + sanitize(l, false) + "\n")
	}
}

// textAddressed says where the change's text addresses the AI reviewer
// (addressedLines).
func textAddressed(buf *bytes.Buffer, r *review.Report, p palette) {
	lines := addressedLines(r)
	if len(lines) == 0 {
		return
	}
	buf.WriteString("\n" + p.paint(sgrBoldYel, "Addressed to the AI reviewer (possible prompt injection)") + "\n")
	for _, l := range lines {
		buf.WriteString("  " + sanitize(l, false) + "\n")
	}
}

// cell is one tabwriter cell: a single line without tabs.
func cell(s string) string { return dash(OneLine(s)) }

func textIgnored(buf *bytes.Buffer, r *review.Report, p palette) {
	if len(r.Ignored) == 0 {
		return
	}
	buf.WriteString("\n" + p.paint(sgrBold, "Not reviewed in full ("+review.Count(len(r.Ignored))+" paths)") + "\n")
	for _, g := range groupIgnored(r.Ignored) {
		fmt.Fprintf(buf, "  %s (%s)\n", g.reason, review.Count(len(g.paths)))
		for _, path := range g.paths[:min(len(g.paths), textMaxIgnored)] {
			fmt.Fprintf(buf, "    %s\n", path)
		}
		if n := len(g.paths) - textMaxIgnored; n > 0 {
			fmt.Fprintf(buf, "    … and %s (--format json lists every path)\n", review.Counted(n, "more", "more"))
		}
	}
}

// textMaxIgnored is how many paths of one reason the text report lists, one
// a line; the count of the rest follows.
const textMaxIgnored = 20

type ignoredGroup struct {
	reason string
	paths  []string
}

// groupIgnored groups ignored paths by reason, in order of first
// appearance.
func groupIgnored(ig []review.Ignored) []ignoredGroup {
	var out []ignoredGroup
	at := map[string]int{}
	for _, x := range ig {
		reason := dash(OneLine(x.Reason))
		if x.Reason == "limit:lines:partial" {
			reason += " (partly reviewed: their first lines were)"
		}
		i, ok := at[reason]
		if !ok {
			i = len(out)
			at[reason] = i
			out = append(out, ignoredGroup{reason: reason})
		}
		out[i].paths = append(out[i].paths, dash(OneLine(x.Path)))
	}
	return out
}

// textRoutes is the route health table: calls and how they ended (OK,
// timeouts, other failures), duration and time to first token (p50/p95),
// failovers in and out, breaker openings, tokens and cost.
func textRoutes(buf *bytes.Buffer, r *review.Report, p palette) {
	if len(r.Routes) == 0 || !modelCalled(r) {
		return
	}
	buf.WriteString("\n" + p.paint(sgrBold, "Routes") + "\n")
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  ROUTE\tMODEL\tCALLS\tOK\tTIMEOUTS\tFAILED\tP50/P95\tTTFT P50/P95\tFAILOVERS IN/OUT\tCIRCUIT OPENS\tTOKENS IN/OUT\tCOST")
	for _, rt := range r.Routes {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d/%d\t%d\t%s\t%s\n", cell(rt.Name), cell(rt.Model),
			rt.Calls, rt.OK, rt.Timeouts, rt.Failed, pair(rt.P50MS, rt.P95MS), pair(rt.TTFTP50MS, rt.TTFTP95MS),
			rt.FailoversIn, rt.FailoversOut, rt.CircuitOpens, tokensPair(rt), routeCost(rt))
	}
	tw.Flush()
}

// textFallbacks names every reviewed item a fallback route served, or says
// there was none: a fallback is never silent.
func textFallbacks(buf *bytes.Buffer, r *review.Report, p palette) {
	if !modelCalled(r) {
		return
	}
	fbs := fallbacks(r.Items)
	if len(fbs) == 0 {
		if countItems(r).reviewed > r.Summary.Cached {
			buf.WriteString("\nFallbacks: " + fallbackNone(r) + "\n")
		}
		return
	}
	buf.WriteString("\n" + p.paint(sgrBoldYel, "Fallbacks ("+review.Count(len(fbs))+")") + " — " +
		fallbackSummary(fbs) + "\n")
	for _, f := range fbs {
		it := f.item
		fmt.Fprintf(buf, "  %s (%s): %s\n", textLoc(dash(it.Path), it.StartLine, it.EndLine), dash(OneLine(it.Skill)), f.path)
	}
}

// textDiagnoses lists the report's diagnoses, one a line.
func textDiagnoses(buf *bytes.Buffer, r *review.Report, p palette) {
	if len(r.Diagnoses) == 0 {
		return
	}
	buf.WriteString("\n" + p.paint(sgrBoldYel, "Diagnosis") + "\n")
	for _, d := range r.Diagnoses {
		buf.WriteString("  " + dash(OneLine(d.Message)) + "\n")
	}
}

func textUsage(buf *bytes.Buffer, r *review.Report) {
	u := r.Usage
	if u == (review.Usage{}) {
		return
	}
	cached := ""
	if u.CachedTokens > 0 {
		cached = fmt.Sprintf(" (%s cached)", review.Count(u.CachedTokens))
	}
	cost := usageCost(r, cell)
	if strings.HasPrefix(cost, unknownCost) {
		cost = "cost " + cost
	}
	fmt.Fprintf(buf, "\nUsage: %s prompt tokens%s, %s completion tokens, %s\n",
		review.Count(u.PromptTokens), cached, review.Count(u.CompletionTokens), cost)
}

func textPlan(buf *bytes.Buffer, r *review.Report, p palette) {
	if len(r.Items) == 0 {
		buf.WriteString("\nNothing to review.\n")
		return
	}
	buf.WriteString("\n" + p.paint(sgrBold, "Plan (priority order)") + "\n")
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	instr, instrHead := hasInstructions(r), ""
	if instr {
		instrHead = "\tINSTR" // the numbers of the repository instructions it carries (textInstructions)
	}
	fmt.Fprintln(tw, "  PRIORITY\tSKILL\tLOCATION\tTIMEOUT"+instrHead+"\tWHY")
	for _, it := range r.Items {
		refs := ""
		if instr {
			refs = "\t" + instrRefs(r, it)
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s%s\t%s\n", it.Priority, cell(it.Skill),
			cell(textLoc(it.Path, it.StartLine, it.EndLine)), fmtTimeout(cmp.Or(it.DeadlineMS, it.TimeoutEffectiveMS)), refs, cell(it.Why))
	}
	tw.Flush()
	textContext(buf, r)
}
