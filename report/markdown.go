package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"regexp"
	"strings"
	"time"

	"github.com/org/warden/review"
)

// MarkdownLimit is GitHub's limit on a check run's output.summary, which
// this Markdown is written for (the job summary mirrors it). The REST docs
// call it "Maximum length: 65535 characters", but the validator counts
// UTF-8 bytes: "summary exceeds a maximum bytesize of 65535" (422, reported
// in github/docs#35252 for a summary full of emoji whose character count was
// under the limit). So the size is counted in bytes, which also bounds
// characters (code points or UTF-16 units), and Write keeps FormatMarkdown
// output to at most MarkdownLimit-512 bytes, leaving a margin for a
// caller's footer.
const MarkdownLimit = 65535

// markdownMargin is left free under MarkdownLimit.
const markdownMargin = 512

// Per-part caps, so that one huge finding or one long path cannot crowd out
// everything else.
const (
	mdMaxDescription = 4000 // bytes of a finding's description
	mdMaxSuggestion  = 8000 // bytes of a suggestion; longer ones are left out
	mdMaxCell        = 200  // bytes of a table cell's text
	mdMaxFileLine    = 300  // bytes of a path with its line ranges
	mdMaxDiagnosis   = 600  // bytes of a diagnosis
)

// When the summary is too long, sections are cut in this order, each saying
// what it left out: the ignored paths (their count stays in the summary
// line), the file lists of the unreviewed work down to mdKeepFiles per
// reason and then entirely (the counts stay), the fallback list likewise,
// absurdly long coverage and route tables, then the findings (the most
// severe are kept), and only then the coverage and route tables.
const mdKeepFiles = 10

func severityMark(s review.Severity) string {
	switch s {
	case review.SeverityCritical:
		return "🔴"
	case review.SeverityHigh:
		return "🟠"
	case review.SeverityMedium:
		return "🟡"
	case review.SeverityLow:
		return "🔵"
	}
	return "⚪"
}

// writeMarkdown renders the check-run summary (also the job summary) and
// keeps it within MarkdownLimit-markdownMargin bytes.
func writeMarkdown(buf *bytes.Buffer, r *review.Report, opts Options) error {
	buf.WriteString(markdownDoc(r, opts).fit(MarkdownLimit - markdownMargin))
	return nil
}

// markdownDoc lays out the summary for the pull request's author first
// (issue 13): the verdict (the headline, what an incomplete outcome means,
// the diagnoses), then the findings, most severe first (the first
// mdOpenFindings in full, each later one folded to one line with its body
// in <details>), then the coverage (per skill, and the unreviewed work by
// reason), and at the end, folded, the operators' tables: routes and
// fallbacks, budget and tokens, and the ignored paths.
func markdownDoc(r *review.Report, opts Options) *mdDoc {
	c := countItems(r)
	d := &mdDoc{}
	d.fixed("## warden: " + mdEscape(Headline(r)) + "\n\n")

	d.fixed(mdWithheld(r))
	d.fixed(mdAddressed(r))
	if r.Outcome == review.OutcomeDryRun {
		d.fixed("No model was called. This is the plan a review would run, most important first, " +
			"with each item's effective timeout.\n\n")
		if len(r.Findings) > 0 {
			d.add(mdFindings(r, c, opts))
		}
		for _, l := range verificationLines(r) {
			d.fixed("_" + mdEscape(l) + "._\n\n")
		}
		plan := mdPlan(r)
		d.add(plan)
		d.fixed(mdInstructions(r) + mdSkillNotes(r))
		ignored := mdIgnored(r)
		d.add(ignored)
		d.shrink = []mdShrink{{ignored, 0}, {plan, 0}}
		return d
	}

	if m := mdMeaning(r, c); m != "" {
		d.fixed(m + "\n\n")
	}
	d.fixed(mdDiagnoses(r))
	d.fixed(mdBot(r))
	findings := mdFindings(r, c, opts)
	d.add(findings)

	d.fixed(mdScope(r))
	coverage := mdCoverage(r)
	d.add(coverage)
	var groups []*mdSection
	if c.notReviewed > 0 {
		d.fixed("### Not reviewed, by reason\n\n")
		if len(r.Items) == 0 {
			d.fixed(fmt.Sprintf("%s not reviewed; the report does not list them.\n\n", wereItems(c.notReviewed)))
		}
		for _, g := range groupByReason(r.Items) {
			s := mdReasonGroup(g)
			d.add(s)
			groups = append(groups, s)
		}
	}

	d.fixed(mdSkillNotes(r))
	d.fixed("<details>\n<summary>Routes, budget and tokens</summary>\n\n")
	routes, fb := mdRoutes(r)
	d.add(routes)
	d.add(fb)
	d.fixed(mdBudget(r))
	d.fixed(mdInstructionsLine(r))
	d.fixed("</details>\n\n")
	ignored := mdIgnored(r)
	d.add(ignored)

	d.shrink = append(d.shrink, mdShrink{ignored, 0})
	for _, g := range groups {
		d.shrink = append(d.shrink, mdShrink{g, mdKeepFiles})
	}
	for _, g := range groups {
		d.shrink = append(d.shrink, mdShrink{g, 0})
	}
	d.shrink = append(d.shrink,
		mdShrink{fb, mdKeepFiles}, mdShrink{fb, 0},
		mdShrink{coverage, 50}, mdShrink{routes, 50},
		mdShrink{findings, 0},
		mdShrink{coverage, 0}, mdShrink{routes, 0},
	)
	return d
}

// wereItems is "1 item was" or "3 items were".
func wereItems(n int) string { return review.Counted(n, "item", "items") + pick(n, " was", " were") }

// pick is one when n is 1, else many.
func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// mdMeaning is the paragraph that says what an incomplete outcome means for
// the reader, or "" when every planned item and every changed line in
// scope was reviewed.
func mdMeaning(r *review.Report, c counts) string {
	if lim := r.Coverage.LimitBreakdown(); lim != "" {
		s := fmt.Sprintf("Not reviewed: %s. No findings there does not mean no problems. "+
			"Raise the limits in warden.toml's `[filters]`, or set `limits_out_of_scope = true` there to leave such files out of scope on purpose.",
			mdEscape(lim))
		if c.notReviewed > 0 {
			s += " " + mdMeaningItems(r, c)
		}
		return s
	}
	if c.notReviewed == 0 {
		if c.planned == 0 && len(r.Findings) == 0 {
			return "No work item was planned, so no model was called: " + mdEscape(NothingReviewed(r)) + "."
		}
		return ""
	}
	return mdMeaningItems(r, c)
}

// mdMeaningItems says what the items that were not reviewed mean.
func mdMeaningItems(r *review.Report, c counts) string {
	why := ""
	if nr := notReviewed(r); len(nr) > 0 && c.reviewed == 0 {
		why = " (" + mdEscape(causeBreakdown(r, nr)) + ")"
	} else if len(nr) > 0 {
		why = " (" + mdEscape(reasonBreakdown(nr)) + ")"
	}
	if c.reviewed == 0 {
		what := fmt.Sprintf("None of the %s planned items was reviewed", review.Count(c.planned))
		if c.planned == 1 {
			what = "The only planned item was not reviewed"
		}
		return what + why + ". This is not a clean result: no findings does not mean no problems."
	}
	return fmt.Sprintf("%s not reviewed%s: no findings there does not mean no problems. "+
		"The findings below come only from the %s that %s reviewed.",
		wereItems(c.notReviewed), why, review.Counted(c.reviewed, "item", "items"), pick(c.reviewed, "was", "were"))
}

// mdScope is the coverage of the change in changed files and lines: in
// scope, reviewed, not reviewed by reason, excluded by kind, and the files
// reviewed although a convention would have excluded them; "" for a report
// without coverage.
func mdScope(r *review.Report) string {
	cov := &r.Coverage
	if !cov.Known() {
		return ""
	}
	var b strings.Builder
	b.WriteString("### Coverage of the change\n\n| | Files | Changed lines |\n| --- | ---: | ---: |\n")
	fmt.Fprintf(&b, "| In scope | %s | %s |\n", review.Count(cov.InScope.Files), review.Count(cov.InScope.Lines))
	reviewed := review.Count(cov.Reviewed.Files)
	if cov.PartlyReviewed > 0 {
		reviewed += fmt.Sprintf(" (and %s partly)", review.Count(cov.PartlyReviewed))
	}
	fmt.Fprintf(&b, "| **Reviewed** | **%s** | **%s** |\n", reviewed, review.Count(cov.Reviewed.Lines))
	for _, g := range cov.NotReviewed {
		fmt.Fprintf(&b, "| Not reviewed: %s | %s | %s |\n", mdCell(gapWords(g)), review.Count(g.Files), review.Count(g.Lines))
	}
	for _, g := range cov.Excluded {
		fmt.Fprintf(&b, "| Excluded: %s | %s | %s |\n", mdCell(exclusionWords(g)), review.Count(g.Files), review.Count(g.Lines))
	}
	b.WriteString("\n")
	if cov.LimitsLeftOut() {
		b.WriteString("_Files over the limits are out of scope (`limits_out_of_scope = true`): they were not reviewed, and the review does not count them._\n\n")
	}
	if len(cov.Conventions) > 0 {
		var parts []string
		for _, g := range cov.Conventions {
			parts = append(parts, g.KindPhrase())
		}
		fmt.Fprintf(&b, "_Reviewed although a convention would exclude them, because the pull request's author is not trusted: %s._\n\n",
			mdEscape(strings.Join(parts, ", ")))
	}
	return b.String()
}

// gapWords is a not-reviewed reason for the coverage table: "over
// max_files", "timed out", "failed (auth)".
func gapWords(g review.Gap) string {
	p := review.Gap{Reason: g.Reason, Files: 1}.Phrase()
	return strings.TrimPrefix(p, "1 file ")
}

// exclusionWords is an excluded kind for the coverage table.
func exclusionWords(g review.Gap) string {
	switch g.Reason {
	case "path_filter":
		return "path filter ([filters] ignore)"
	case "skill_filter":
		return "no selected skill takes the file"
	case "unchanged":
		return "unchanged since the last complete review"
	}
	if w := strings.TrimPrefix(review.Gap{Reason: g.Reason, Files: 1}.KindPhrase(), "1 "); w != g.Reason {
		return w // a limit out of scope: "over max_files"
	}
	return g.Reason
}

func mdCoverage(r *review.Report) *mdSection {
	s := &mdSection{}
	cov := coverageBySkill(r.Items)
	if len(cov) == 0 {
		return s
	}
	s.head = "### Coverage per skill\n\n"
	s.table = "| Skill | Planned | Reviewed | Failed | Skipped |\n| --- | ---: | ---: | ---: | ---: |\n"
	var total skillCoverage
	for _, sc := range cov {
		s.rows = append(s.rows, fmt.Sprintf("| %s | %s | %s | %s | %s |\n", mdCell(sc.skill),
			review.Count(sc.planned), review.Count(sc.reviewed), review.Count(sc.failed), review.Count(sc.skipped)))
		total.planned += sc.planned
		total.reviewed += sc.reviewed
		total.failed += sc.failed
		total.skipped += sc.skipped
	}
	s.more = func(n int) string {
		return fmt.Sprintf("| _… and %s_ | | | | |\n", review.Counted(n, "more skill", "more skills"))
	}
	s.none = func(n int) string {
		return fmt.Sprintf("_%s not listed to fit GitHub's size limit; the JSON report file has every item._\n",
			review.Counted(n, "skill", "skills"))
	}
	if len(cov) > 1 {
		s.last = fmt.Sprintf("| **All skills** | %s | %s | %s | %s |\n",
			review.Count(total.planned), review.Count(total.reviewed), review.Count(total.failed), review.Count(total.skipped))
	}
	s.tail = "\n"
	return s
}

// mdReasonGroup is one reason: its count and status, what it means, then the
// files with their line ranges, skills and routes.
func mdReasonGroup(g reasonGroup) *mdSection {
	status := ""
	switch {
	case g.failed == g.items:
		status = "failed"
	case g.skipped == g.items:
		status = "skipped"
	default:
		var parts []string
		if g.failed > 0 {
			parts = append(parts, review.Count(g.failed)+" failed")
		}
		if g.skipped > 0 {
			parts = append(parts, review.Count(g.skipped)+" skipped")
		}
		if other := g.items - g.failed - g.skipped; other > 0 {
			parts = append(parts, review.Count(other)+" with another status")
		}
		status = "(" + strings.Join(parts, ", ") + ")"
	}
	head := fmt.Sprintf("**%s** — %s %s, in %s", mdEscape(dash(g.reason)), review.Counted(g.items, "item", "items"),
		status, review.Counted(len(g.files), "file", "files"))
	if m := reasonMeaning(g.reason); m != "" {
		head += ": " + m
	}
	s := &mdSection{head: head + ".\n\n", tail: "\n"}
	for _, f := range g.files {
		loc := dash(f.path)
		if !f.whole && len(f.ranges) > 0 {
			loc += ":" + spansText(f.ranges)
		}
		row := "- " + mdCode(clip(loc, mdMaxFileLine), false)
		if len(f.skills) > 0 {
			row += " — " + mdEscape(clip(strings.Join(f.skills, ", "), mdMaxCell))
		}
		if len(f.routes) > 0 {
			word := "route "
			if len(f.routes) > 1 || strings.Contains(f.routes[0], "→") {
				word = "routes "
			}
			row += " · " + word + mdEscape(clip(strings.Join(f.routes, ", "), mdMaxCell))
		}
		s.rows = append(s.rows, row+"\n")
	}
	s.more = func(n int) string {
		return fmt.Sprintf("- _… and %s; the JSON report file lists every item._\n", review.Counted(n, "more file", "more files"))
	}
	s.none = func(n int) string {
		return fmt.Sprintf("_The %s not listed to fit GitHub's size limit; the JSON report file lists every item._\n",
			pick(n, "file is", review.Count(n)+" files are"))
	}
	return s
}

// mdRoutes is the route table and the fallback list. A fallback is never
// silent: with model calls made, the list says "none" when there was none.
func mdRoutes(r *review.Report) (routes, fb *mdSection) {
	routes, fb = &mdSection{}, &mdSection{}
	if !modelCalled(r) {
		return routes, fb
	}
	routes.head = "### Routes\n\n"
	if len(r.Routes) == 0 {
		routes.head += "The report has no route statistics.\n\n"
	}
	routes.table = "| Route | Model | Calls | OK | Timeouts | Failed | p50 / p95 | TTFT p50 / p95 | Failovers in / out | Circuit opens | Tokens in / out | Cost |\n" +
		"| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
	for _, rt := range r.Routes {
		routes.rows = append(routes.rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s |\n",
			mdCell(rt.Name), mdCell(rt.Model), review.Count(rt.Calls), review.Count(rt.OK), review.Count(rt.Timeouts), review.Count(rt.Failed),
			strings.ReplaceAll(pair(rt.P50MS, rt.P95MS), "/", " / "), strings.ReplaceAll(pair(rt.TTFTP50MS, rt.TTFTP95MS), "/", " / "),
			review.Count(rt.FailoversIn), review.Count(rt.FailoversOut), review.Count(rt.CircuitOpens),
			strings.ReplaceAll(tokensPair(rt), "/", " / "), routeCost(rt)))
	}
	routes.more = func(n int) string {
		return fmt.Sprintf("| _… and %s_ | | | | | | | | | | | |\n", review.Counted(n, "more route", "more routes"))
	}
	routes.none = func(n int) string {
		return fmt.Sprintf("_%s not listed to fit GitHub's size limit; the JSON report file has them._\n",
			review.Counted(n, "route", "routes"))
	}
	if len(routes.rows) > 0 {
		routes.tail = "\n" // ends the table
	}

	fbs := fallbacks(r.Items)
	switch {
	case len(fbs) > 0:
	case countItems(r).reviewed == 0:
		fb.head = "**Fallbacks:** none; no item was reviewed.\n\n"
		return routes, fb
	case countItems(r).reviewed == r.Summary.Cached:
		return routes, fb // no reviewed item called a model
	default:
		fb.head = "**Fallbacks:** " + mdEscape(fallbackNone(r)) + "\n\n"
		return routes, fb
	}
	fb.head = "**Fallbacks:** " + mdEscape(fallbackSummary(fbs)) + ":\n\n"
	for _, f := range fbs {
		it := f.item
		fb.rows = append(fb.rows, fmt.Sprintf("- %s (%s): %s\n",
			mdCode(clip(textLoc(dash(it.Path), it.StartLine, it.EndLine), mdMaxFileLine), false),
			mdEscape(clip(dash(OneLine(it.Skill)), mdMaxCell)), mdEscape(clip(f.path, mdMaxCell))))
	}
	fb.more = func(n int) string {
		return fmt.Sprintf("- _… and %s; the JSON report file has every attempt._\n", review.Counted(n, "more item", "more items"))
	}
	fb.none = func(int) string {
		return "_The items are not listed to fit GitHub's size limit; the JSON report file has every attempt._\n"
	}
	fb.tail = "\n"
	return routes, fb
}

// mdDiagnoses is the report's diagnoses as a list, or "".
func mdDiagnoses(r *review.Report) string {
	if len(r.Diagnoses) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("### Diagnosis\n\n")
	for _, d := range r.Diagnoses {
		b.WriteString("- " + mdEscape(clip(dash(OneLine(d.Message)), mdMaxDiagnosis)) + "\n")
	}
	b.WriteString("\n")
	return b.String()
}

// mdBudget is the time used against the review budget, and the tokens.
func mdBudget(r *review.Report) string {
	var b strings.Builder
	b.WriteString("### Budget and tokens\n\n")
	used := fmtUsed(r.DurationMS)
	if bud := r.Policy.BudgetMS; bud > 0 {
		fmt.Fprintf(&b, "- **Time:** %s of the %s review budget (%d%%)\n", used, fmtTimeout(bud), (r.DurationMS*100+bud/2)/bud)
	} else {
		fmt.Fprintf(&b, "- **Time:** %s (the report states no review budget)\n", used)
	}
	u := r.Usage
	fmt.Fprintf(&b, "- **Tokens:** %s prompt, %s completion, %s cached\n",
		review.Count(u.PromptTokens), review.Count(u.CompletionTokens), review.Count(u.CachedTokens))
	fmt.Fprintf(&b, "- **Cost:** %s\n\n", usageCost(r, mdCell))
	return b.String()
}

// fmtUsed is a duration for the budget line: whole seconds from a minute
// on ("4m12s"), else as fmtElapsed.
func fmtUsed(ms int64) string {
	if ms < 60000 {
		return fmtElapsed(ms)
	}
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}

// mdWithheld says what the review kept from the models (withheldLines), as
// a short list under the headline.
func mdWithheld(r *review.Report) string {
	lines := withheldLines(r)
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("**Withheld from the models (secrets):**\n\n")
	for _, l := range lines {
		b.WriteString("- " + mdEscape(l) + "\n")
	}
	return b.String() + "\n"
}

// mdAddressed says where the change's text addresses the AI reviewer
// (addressedLines), as a short list under the headline: the places, then
// what they mean.
func mdAddressed(r *review.Report) string {
	lines := addressedLines(r)
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("**Addressed to the AI reviewer (possible prompt injection):**\n\n")
	for _, l := range lines[:len(lines)-1] {
		b.WriteString("- " + mdEscape(l) + "\n")
	}
	return b.String() + "\n" + mdEscape(lines[len(lines)-1]) + "\n\n"
}

// mdIgnored is the collapsed list of paths the filters dropped.
func mdIgnored(r *review.Report) *mdSection {
	s := &mdSection{}
	if len(r.Ignored) == 0 {
		return s
	}
	s.head = fmt.Sprintf("<details>\n<summary>Paths not reviewed in full (%s), with the reason</summary>\n\n",
		review.Count(len(r.Ignored)))
	s.table = "| Path | Reason |\n| --- | --- |\n"
	for _, x := range r.Ignored {
		s.rows = append(s.rows, fmt.Sprintf("| %s | %s |\n", mdCode(clip(OneLine(x.Path), mdMaxCell), true), mdCell(ignoredWords(x))))
	}
	s.more = func(n int) string {
		return fmt.Sprintf("| _… and %s_ | |\n", review.Counted(n, "more path", "more paths"))
	}
	s.none = func(n int) string {
		return fmt.Sprintf("_The %s not listed to fit GitHub's size limit; the JSON report file lists them._\n",
			pick(n, "path is", review.Count(n)+" paths are"))
	}
	s.tail = "\n</details>\n\n"
	return s
}

func mdFindings(r *review.Report, c counts, opts Options) *mdSection {
	shown, hidden := listed(r.Findings, opts.ReportOn)
	s := &mdSection{}
	var dropped string
	for _, l := range droppedLines(r) {
		dropped += "_" + mdEscape(l) + "._\n\n"
	}
	if len(shown) == 0 && len(hidden) == 0 {
		none := "No findings in" // the items reviewed had none
		if dropped != "" {
			none = "No findings shown from" // they had some, all left out below
		}
		switch {
		case c.planned == 0:
		case c.reviewed == 0:
			s.head = "### Findings\n\nNone, because no item was reviewed.\n\n"
		case c.notReviewed > 0:
			s.head = fmt.Sprintf("### Findings\n\n%s the %s that %s reviewed; the %s not reviewed may still have problems.\n\n", none,
				review.Counted(c.reviewed, "item", "items"), pick(c.reviewed, "was", "were"),
				review.Counted(c.notReviewed, "item", "items"))
		case r.Coverage.Limited():
			s.head = fmt.Sprintf("### Findings\n\n%s the %s reviewed; the files the limits left out were not reviewed and may still have problems.\n\n",
				none, review.Counted(c.reviewed, "item", "items"))
		default:
			s.head = fmt.Sprintf("### Findings\n\n%s the %s reviewed.\n\n", none, review.Counted(c.reviewed, "item", "items"))
		}
		s.head += dropped
		return s
	}
	s.head = fmt.Sprintf("### Findings (%s)\n\n", review.Count(len(r.Findings)))
	if d := r.Summary.FindingsDropped; d.MaxFindings+d.BelowReportOn+d.AnswerCap > 0 {
		s.head = fmt.Sprintf("### Findings (%s shown of %s found)\n\n", review.Count(len(r.Findings)),
			review.Count(len(r.Findings)+d.MaxFindings+d.BelowReportOn+d.AnswerCap))
	}
	// Most severe first, so that a cut drops the least severe.
	ordered := sorted(shown, bySeverity)
	for i, f := range ordered {
		if i < mdOpenFindings {
			s.rows = append(s.rows, mdFinding(f))
		} else {
			s.rows = append(s.rows, mdFoldedFinding(f))
		}
	}
	s.more = func(n int) string {
		return fmt.Sprintf("_… %s not shown (%s): this summary is limited to 65,535 characters; see the report file, which has every finding._\n\n",
			review.Counted(n, "more finding", "more findings"), severityBreakdown(ordered[len(ordered)-n:]))
	}
	s.none = func(n int) string {
		return fmt.Sprintf("_%s not shown (%s): this summary is limited to 65,535 characters; see the report file, which has every finding._\n\n",
			review.Counted(n, "finding", "findings"), severityBreakdown(ordered))
	}
	if len(hidden) > 0 {
		s.tail = "_" + mdEscape(hiddenLine(hidden, opts.ReportOn)) + "._\n\n"
	}
	s.tail += dropped
	return s
}

// mdOpenFindings is how many findings the summary shows in full; each
// later one is folded to one line (severity, title, location) with its body
// in <details>, so that the verdict and the first findings fit the first
// screen.
const mdOpenFindings = 3

// mdFinding is a finding in full: a heading with its severity and title,
// its location (marked when approximate) and skill, the description, and
// the suggestion folded.
func mdFinding(f review.Finding) string {
	var b strings.Builder
	title := OneLine(f.Title)
	if title == "" {
		title = "(untitled)"
	}
	fmt.Fprintf(&b, "#### %s %s: %s\n\n", severityMark(f.Severity), mdEscape(f.Severity.String()), mdInline(clip(title, 300)))
	b.WriteString(mdFindingBody(f))
	return b.String()
}

// mdFoldedFinding is a finding folded to one line, its body in <details>.
// The summary line is HTML (GitHub renders no Markdown there): the title
// is defanged and HTML-escaped.
func mdFoldedFinding(f review.Finding) string {
	title := OneLine(f.Title)
	if title == "" {
		title = "(untitled)"
	}
	loc := clip(findingLoc(f), mdMaxFileLine)
	return fmt.Sprintf("<details>\n<summary>%s <b>%s</b>: %s — <code>%s</code></summary>\n\n%s</details>\n\n",
		severityMark(f.Severity), html.EscapeString(f.Severity.String()), htmlText(clip(title, 300)), htmlText(loc), mdFindingBody(f))
}

// htmlText makes one line of untrusted text inert inside HTML: defanged
// (no mention, no link, no markup), escaped, and with its brackets as
// character references, so that no renderer could read a link in it.
func htmlText(s string) string {
	return strings.NewReplacer("[", "&#91;", "]", "&#93;").Replace(html.EscapeString(Defang(OneLine(s), "")))
}

// mdFindingBody is a finding's location and skill, description and folded
// suggestion.
func mdFindingBody(f review.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s · %s\n\n", mdCode(clip(findingLoc(f), mdMaxFileLine), false), mdEscape(dash(OneLine(f.Skill))))
	if desc := mdBlock(clip(strings.TrimSpace(sanitize(f.Description, true)), mdMaxDescription)); desc != "" {
		b.WriteString(desc + "\n\n")
	}
	sug := strings.Trim(sanitize(f.Suggestion, true), "\n")
	switch {
	case strings.TrimSpace(sug) == "":
	case len(sug) > mdMaxSuggestion:
		fmt.Fprintf(&b, "_Suggested change of %s left out (too long); see the report file._\n\n",
			review.Counted(strings.Count(sug, "\n")+1, "line", "lines"))
	default:
		b.WriteString("<details>\n<summary>Suggested change</summary>\n\n" + mdFence(sug) + "\n</details>\n\n")
	}
	return b.String()
}

func mdPlan(r *review.Report) *mdSection {
	s := &mdSection{}
	if len(r.Items) == 0 {
		s.head = "### Plan\n\nNothing to review.\n\n"
		return s
	}
	s.head = "### Plan (priority order)\n\n"
	s.table = "| Priority | Skill | Location | Timeout | Why |\n| ---: | --- | --- | ---: | --- |\n"
	instr, extra := hasInstructions(r), "" // a column of the repository instructions each item carries (mdInstructions)
	if instr {
		s.table = "| Priority | Skill | Location | Timeout | Instr. | Why |\n| ---: | --- | --- | ---: | --- | --- |\n"
		extra = " |"
	}
	for _, it := range r.Items {
		refs := ""
		if instr {
			refs = " " + mdCell(instrRefs(r, it)) + " |"
		}
		s.rows = append(s.rows, fmt.Sprintf("| %d | %s | %s | %s |%s %s |\n", it.Priority, mdCell(it.Skill),
			mdCode(clip(textLoc(dash(it.Path), it.StartLine, it.EndLine), mdMaxCell), true), fmtTimeout(cmp.Or(it.DeadlineMS, it.TimeoutEffectiveMS)), refs, mdCell(dash(it.Why))))
	}
	s.more = func(n int) string {
		return fmt.Sprintf("| | _… and %s; `--format json` lists every item_ | | | |%s\n", review.Counted(n, "more work item", "more work items"), extra)
	}
	s.none = func(n int) string {
		return fmt.Sprintf("_The %s not listed to fit the size limit; `--format json` lists every item._\n",
			pick(n, "work item is", review.Count(n)+" work items are"))
	}
	s.tail = "\n"
	return s
}

// mdDoc is a Markdown document made of fixed text and sections whose rows
// can be left out to fit a size limit.
type mdDoc struct {
	parts  []mdPart
	shrink []mdShrink
}

type mdPart struct {
	text string
	sec  *mdSection
}

// mdShrink says: cut sec down to no fewer than floor rows.
type mdShrink struct {
	sec   *mdSection
	floor int
}

func (d *mdDoc) fixed(s string)   { d.parts = append(d.parts, mdPart{text: s}) }
func (d *mdDoc) add(s *mdSection) { s.keep = len(s.rows); d.parts = append(d.parts, mdPart{sec: s}) }
func (d *mdDoc) size() (n int) {
	for _, p := range d.parts {
		if p.sec != nil {
			n += p.sec.size(p.sec.keep)
		} else {
			n += len(p.text)
		}
	}
	return n
}

// fit renders the document within limit bytes, leaving out rows in the
// order of d.shrink; each section says how many of its rows it left out.
func (d *mdDoc) fit(limit int) string {
	for _, s := range d.shrink {
		over := d.size() - limit
		if over <= 0 {
			break
		}
		if s.floor >= s.sec.keep {
			continue
		}
		base := s.sec.size(s.sec.keep)
		k := s.sec.keep
		for k > s.floor && s.sec.size(k) > base-over {
			k--
		}
		s.sec.keep = k
	}
	var b strings.Builder
	for _, p := range d.parts {
		if p.sec != nil {
			p.sec.render(&b)
		} else {
			b.WriteString(p.text)
		}
	}
	out := strings.TrimRight(b.String(), "\n") + "\n"
	if len(out) > limit { // only with absurd fixed text; never cut mid-rune
		const note = "\n\n_… the rest of this summary was cut to fit GitHub's size limit; see the report file._\n"
		out = clip(out, limit-len(note)) + note
	}
	return out
}

// mdSection is a head, an optional table header, rows, and a tail. When
// some rows are left out, more(n) follows the kept rows; when all are, none(n)
// replaces the table header and the rows. last is a final row after the
// kept rows (a table's total). An empty section renders nothing.
type mdSection struct {
	head, table, last, tail string
	rows                    []string
	more, none              func(omitted int) string
	keep                    int // rows kept
	sums                    []int
}

func (s *mdSection) size(keep int) int {
	if s.sums == nil {
		s.sums = make([]int, len(s.rows)+1)
		for i, r := range s.rows {
			s.sums[i+1] = s.sums[i] + len(r)
		}
	}
	if s.head == "" && len(s.rows) == 0 {
		return 0
	}
	n := len(s.head) + len(s.tail)
	switch {
	case len(s.rows) == 0:
	case keep == 0:
		n += len(s.none(len(s.rows)))
	default:
		n += len(s.table) + s.sums[keep] + len(s.last)
		if keep < len(s.rows) {
			n += len(s.more(len(s.rows) - keep))
		}
	}
	return n
}

func (s *mdSection) render(b *strings.Builder) {
	if s.head == "" && len(s.rows) == 0 {
		return
	}
	b.WriteString(s.head)
	switch {
	case len(s.rows) == 0:
	case s.keep == 0:
		b.WriteString(s.none(len(s.rows)))
	default:
		b.WriteString(s.table)
		for _, r := range s.rows[:s.keep] {
			b.WriteString(r)
		}
		if s.keep < len(s.rows) {
			b.WriteString(s.more(len(s.rows) - s.keep))
		}
		b.WriteString(s.last)
	}
	b.WriteString(s.tail)
}

// mdEscape makes one line of untrusted text inert in Markdown: it cannot
// open HTML (tags, comments, </details>), links, images, code spans or
// fences, emphasis, table cells or headings, and it cannot mention anyone.
// A URL GitHub would autolink (http://, https://, ftp://, www.) becomes a
// code span, so it is shown but never clickable: the report does not know
// the repository's address, so no link is trusted.
// Input should be a single line (see oneLine); mdBlock handles paragraphs.
func mdEscape(s string) string {
	var b strings.Builder
	for {
		loc := linkRE.FindStringIndex(s)
		if loc == nil {
			b.WriteString(mdEscapeText(s))
			return b.String()
		}
		b.WriteString(mdEscapeText(s[:loc[0]]))
		b.WriteString(mdCode(s[loc[0]:loc[1]], false))
		s = s[loc[1]:]
	}
}

// mdEscapeText is mdEscape without the treatment of URLs.
func mdEscapeText(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\\', '`', '*', '_', '[', ']', '|', '~', '#':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '@':
			// A zero-width space after @ stops GitHub's @mention (as
			// Dependabot does in release notes).
			b.WriteString("@&#8203;")
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdBlock escapes multi-line untrusted text as paragraphs: each line as by
// mdInline, with leading white space dropped (no indented code blocks) and
// line-leading list, heading and setext markers escaped. Runs of blank lines
// become one. A fenced code block in it (``` or ~~~) stays a code block:
// its lines as written, under a fence of our own longer than any run of
// backticks inside, so that nothing in it can close it (mdCodeBlock).
func mdBlock(s string) string {
	var out []string
	blank := true
	lines := strings.Split(sanitize(s, true), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if fence, info := openingFence(line); fence != "" {
			var code []string
			for i++; i < len(lines) && !closesFence(lines[i], fence); i++ {
				code = append(code, strings.TrimRight(lines[i], " \t"))
			}
			if !blank {
				out = append(out, "")
			}
			out = append(out, strings.TrimSuffix(mdCodeBlock(strings.Join(code, "\n"), info), "\n"), "")
			blank = true
			continue
		}
		if line == "" {
			if !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		out = append(out, escapeLineStart(mdInline(line)))
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// openingFence is the fence a line opens (three or more backticks or
// tildes) and its info string when it is a plain language name, else "".
func openingFence(line string) (fence, info string) {
	for _, c := range "`~" {
		n := len(line) - len(strings.TrimLeft(line, string(c)))
		if n < 3 {
			continue
		}
		rest := strings.TrimSpace(line[n:])
		if c == '`' && strings.Contains(rest, "`") {
			return "", "" // an inline code span, not a fence
		}
		if fenceInfo.MatchString(rest) && !strings.EqualFold(rest, "suggestion") {
			info = rest
		}
		return line[:n], info
	}
	return "", ""
}

// fenceInfo is an info string kept on a code block: a language name.
var fenceInfo = regexp.MustCompile(`^[A-Za-z0-9_+#.-]{1,30}$`)

// closesFence reports whether line closes a block opened by fence: the
// same character, at least as many, nothing else.
func closesFence(line, fence string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= len(fence) && strings.Trim(t, fence[:1]) == ""
}

// mdCodeBlock is code as a fenced block under a backtick fence longer than
// any run of backticks in it (and at least three), with info as its
// language ("" for none). Nothing inside can close it or open HTML.
func mdCodeBlock(code, info string) string {
	fence := strings.Repeat("`", FenceLength(code))
	return fence + info + "\n" + code + "\n" + fence + "\n"
}

// mdInline is mdEscape, except that code spans (a run of backticks closed
// by a run of the same length on the same line) are kept as code spans: their
// content is literal to the renderer, so it needs no escaping and cannot
// open HTML. Unmatched backticks are escaped.
func mdInline(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			b.WriteString(mdEscape(s))
			return b.String()
		}
		b.WriteString(mdEscape(s[:i]))
		n := runLen(s[i:], '`')
		open, rest := s[i:i+n], s[i+n:]
		j := closingRun(rest, n)
		if j < 0 {
			b.WriteString(mdEscape(open))
			s = rest
			continue
		}
		b.WriteString(open + strings.ReplaceAll(rest[:j], "\n", " ") + open)
		s = rest[j+n:]
	}
}

// closingRun is the index in s of the first run of exactly n backticks, or
// -1.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := runLen(s[i:], '`')
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

func runLen(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// escapeLineStart escapes what would make an escaped line a list item, a
// thematic break or a setext underline: a leading "-", "+" or "=", or
// digits followed by "." or ")".
func escapeLineStart(line string) string {
	if line == "" {
		return line
	}
	switch line[0] {
	case '-', '+', '=':
		return `\` + line
	}
	i := 0
	for i < len(line) && i < 10 && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i > 0 && i < len(line) && (line[i] == '.' || line[i] == ')') {
		return line[:i] + `\` + line[i:]
	}
	return line
}

// mdCell is a table cell's text: one line, clipped and escaped.
func mdCell(s string) string {
	return mdEscape(clip(dash(OneLine(s)), mdMaxCell))
}

// mdCode is s as a code span whose backtick fence is longer than any run of
// backticks inside it. In a table, pipes are escaped as GFM requires even
// inside code spans.
func mdCode(s string, inTable bool) string {
	s = OneLine(s)
	if s == "" {
		return "-"
	}
	if inTable {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdFence is content as a fenced code block with no info string (so GitHub
// never treats it as an applicable ```suggestion), fenced by more backticks
// than the longest run inside, and at least three.
func mdFence(content string) string {
	fence := strings.Repeat("`", FenceLength(content))
	return fence + "\n" + content + "\n" + fence + "\n"
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// mdBot says what came from the results cache and what was suppressed, so
// that neither hides in the counts.
func mdBot(r *review.Report) string {
	var b strings.Builder
	if n := r.Summary.Cached; n > 0 {
		fmt.Fprintf(&b, "**%s from earlier runs:** of the %s reviewed items, %s answered by earlier runs (the results cache: paid for once, no model call; answered by %s), %s by the model in this run.\n\n",
			review.Count(n), review.Count(r.Summary.Reviewed), review.Plural(n, "one was", review.Count(n)+" were"), mdEscape(cacheWho(r)), review.Count(r.Summary.Reviewed-n))
	}
	if n := r.Summary.NotPosted; n > 0 {
		fmt.Fprintf(&b, "**Not posted: rate budget.** %s could not be posted on the pull request within GitHub's limits on content-creating requests (80 a minute, 500 an hour); %s in this check run's annotations and the report.\n\n",
			review.Counted(n, "finding", "findings"), review.Plural(n, "it is", "they are"))
	}
	if n := r.Summary.Suppressed; n > 0 {
		fmt.Fprintf(&b, "**Suppressed:** %s dismissed on the pull request, not shown again.\n\n", review.Counted(n, "finding", "findings"))
	}
	return b.String()
}
