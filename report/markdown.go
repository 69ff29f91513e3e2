package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/org/warden/review"
)

// MarkdownLimit is the most bytes the Markdown report may take. GitHub
// rejects a check run's output.summary or output.text "over 65535
// characters" with a 422 ("Only 65535 characters are allowed; 250684 were
// supplied", reviewdog check.go) and caps job summaries and comment bodies
// at about the same size. Counting bytes is safe whichever way GitHub counts
// characters (code points or UTF-16 units): neither is ever more than the
// UTF-8 byte count.
const MarkdownLimit = 65535

// Per-part caps, so that one huge finding or a long list of ignored paths
// cannot crowd out everything else.
const (
	mdMaxDescription = 4000 // bytes of a finding's description
	mdMaxSuggestion  = 8000 // bytes of a suggestion; longer ones are left out
	mdMaxCell        = 200  // bytes of a table cell's text
)

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

func outcomeMark(o review.Outcome) string {
	switch o {
	case review.OutcomeComplete:
		return "✅"
	case review.OutcomeProviderUnavailable:
		return "❌"
	case review.OutcomeDryRun:
		return "📝"
	}
	return "⚠️"
}

// writeMarkdown renders the job summary / PR comment and keeps it within
// MarkdownLimit.
func writeMarkdown(buf *bytes.Buffer, r *review.Report, opts Options) error {
	buf.WriteString(markdownDoc(r, opts).fit(MarkdownLimit))
	return nil
}

func markdownDoc(r *review.Report, opts Options) *mdDoc {
	c := countItems(r)
	d := &mdDoc{}
	var head strings.Builder
	fmt.Fprintf(&head, "## %s warden: %s\n\n", outcomeMark(r.Outcome), mdEscape(headline(r)))

	if r.Outcome == review.OutcomeDryRun {
		head.WriteString("| Outcome | Work items planned | Paths ignored |\n| --- | ---: | ---: |\n")
		fmt.Fprintf(&head, "| dry run (no model call made) | %d | %d |\n\n", c.planned, len(r.Ignored))
		d.fixed(head.String())
		d.plan = mdPlan(r)
		d.add(d.plan)
		d.ignored, d.routes = mdDetails(r, d)
		d.shrink = []mdShrink{{d.ignored, 20}, {d.plan, 0}, {d.ignored, 0}}
		return d
	}

	head.WriteString("| Outcome | Reviewed | Failed | Skipped | Findings | Duration | Cost |\n")
	head.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	fmt.Fprintf(&head, "| %s | %d of %d | %d | %d | %d | %s | %s |\n", mdCell(string(r.Outcome)),
		c.reviewed, c.planned, c.failed, c.skipped, len(r.Findings), fmtElapsed(r.DurationMS), fmtCost(r.Usage.CostUSD))
	head.WriteString("\n")
	d.fixed(head.String())

	d.findings = mdFindings(r, c, opts)
	d.add(d.findings)
	d.notReviewed = mdNotReviewed(r, c)
	d.add(d.notReviewed)
	d.ignored, d.routes = mdDetails(r, d)
	// Least valuable first: the long tail of ignored paths, then unreviewed
	// rows beyond the first fifty (the summary table still counts them), then
	// findings (most severe are kept), then everything optional.
	d.shrink = []mdShrink{
		{d.ignored, 20}, {d.notReviewed, 50}, {d.findings, 0},
		{d.ignored, 0}, {d.routes, 0}, {d.notReviewed, 0},
	}
	return d
}

func mdFindings(r *review.Report, c counts, opts Options) *mdSection {
	shown, hidden := listed(r.Findings, opts.ReportOn)
	s := &mdSection{more: func(n int) string {
		return fmt.Sprintf("_%s not shown: this summary is limited to %s characters. The JSON and SARIF reports have every finding._\n\n",
			plural(n, "more finding", "more findings"), "65,535")
	}}
	if len(shown) == 0 && len(hidden) == 0 {
		if c.reviewed > 0 {
			s.head = "### Findings\n\nNo findings in the reviewed items.\n\n"
			s.always = true
		}
		return s
	}
	s.head = "### Findings\n\n"
	// Most severe first, so that truncation drops the least severe.
	for _, f := range sorted(shown, bySeverity) {
		s.rows = append(s.rows, mdFinding(f))
	}
	if len(hidden) > 0 {
		s.tail = "_" + mdEscape(hiddenLine(hidden, opts.ReportOn)) + "._\n\n"
	}
	s.always = true
	return s
}

func mdFinding(f review.Finding) string {
	var b strings.Builder
	title := oneLine(f.Title)
	if title == "" {
		title = "(untitled)"
	}
	fmt.Fprintf(&b, "#### %s %s: %s\n\n", severityMark(f.Severity), mdEscape(f.Severity.String()), mdInline(clip(title, 300)))
	fmt.Fprintf(&b, "%s · %s\n\n", mdCode(mdLoc(f.Path, f.StartLine, f.EndLine), false), mdEscape(dash(oneLine(f.Skill))))
	if desc := mdBlock(clip(strings.TrimSpace(sanitize(f.Description, true)), mdMaxDescription)); desc != "" {
		b.WriteString(desc + "\n\n")
	}
	sug := strings.Trim(sanitize(f.Suggestion, true), "\n")
	switch {
	case strings.TrimSpace(sug) == "":
	case len(sug) > mdMaxSuggestion:
		fmt.Fprintf(&b, "_Suggested change of %s left out (too long); see the JSON report._\n\n",
			plural(strings.Count(sug, "\n")+1, "line", "lines"))
	default:
		b.WriteString("Suggested change:\n\n" + mdFence(sug) + "\n")
	}
	return b.String()
}

// mdLoc is "path#L12-L18".
func mdLoc(path string, start, end int) string {
	p := oneLine(path)
	if start <= 0 {
		return p
	}
	if end <= start {
		return p + "#L" + strconv.Itoa(start)
	}
	return p + "#L" + strconv.Itoa(start) + "-L" + strconv.Itoa(end)
}

func mdNotReviewed(r *review.Report, c counts) *mdSection {
	nr := notReviewed(r)
	s := &mdSection{more: func(n int) string {
		return fmt.Sprintf("\n_%s not listed here; the JSON report lists every item._\n\n", plural(n, "more item", "more items"))
	}}
	if len(nr) == 0 {
		if c.notReviewed > 0 {
			s.head = fmt.Sprintf("### Not reviewed (%d)\n\n%s were not reviewed; the report does not list them.\n\n",
				c.notReviewed, plural(c.notReviewed, "item", "items"))
			s.always = true
		}
		return s
	}
	s.head = fmt.Sprintf("### Not reviewed (%d)\n\nThese items were not reviewed: no findings here does not mean no problems.\n\n", len(nr)) +
		"| Status | Reason | Route | Skill | Location |\n| --- | --- | --- | --- | --- |\n"
	for _, it := range nr {
		s.rows = append(s.rows, fmt.Sprintf("| %s | %s | %s | %s | %s |\n", mdCell(string(it.Status)), mdCell(reasonOf(it)),
			mdCell(it.Route), mdCell(it.Skill), mdCode(clip(mdLoc(it.Path, it.StartLine, it.EndLine), mdMaxCell), true)))
	}
	s.tail = "\n"
	s.always = true
	return s
}

func mdPlan(r *review.Report) *mdSection {
	s := &mdSection{more: func(n int) string {
		return fmt.Sprintf("\n_%s not listed here; `--format json` lists every item._\n\n", plural(n, "more work item", "more work items"))
	}}
	if len(r.Items) == 0 {
		s.head = "Nothing to review.\n\n"
		s.always = true
		return s
	}
	s.head = "### Plan (priority order)\n\n| Priority | Skill | Location | Timeout |\n| ---: | --- | --- | ---: |\n"
	for _, it := range r.Items {
		s.rows = append(s.rows, fmt.Sprintf("| %d | %s | %s | %s |\n", it.Priority, mdCell(it.Skill),
			mdCode(clip(mdLoc(it.Path, it.StartLine, it.EndLine), mdMaxCell), true), fmtTimeout(it.TimeoutEffectiveMS)))
	}
	s.tail = "\n"
	s.always = true
	return s
}

// mdDetails adds the collapsed block with the ignored paths and the routes.
func mdDetails(r *review.Report, d *mdDoc) (ignored, routes *mdSection) {
	ignored = &mdSection{more: func(n int) string {
		return fmt.Sprintf("\n_%s not listed here._\n", plural(n, "more path", "more paths"))
	}}
	routes = &mdSection{more: func(n int) string {
		return fmt.Sprintf("\n_%s not listed here._\n", plural(n, "more route", "more routes"))
	}}
	if len(r.Ignored) == 0 && len(r.Routes) == 0 {
		return ignored, routes
	}
	var parts []string
	if len(r.Ignored) > 0 {
		parts = append(parts, fmt.Sprintf("ignored paths (%d)", len(r.Ignored)))
	}
	if len(r.Routes) > 0 {
		parts = append(parts, fmt.Sprintf("routes (%d)", len(r.Routes)))
	}
	summary := strings.Join(parts, " and ")
	summary = strings.ToUpper(summary[:1]) + summary[1:]
	d.fixed("<details>\n<summary>" + summary + "</summary>\n\n")

	if len(r.Ignored) > 0 {
		ignored.head = "**Ignored paths**\n\n| Path | Reason |\n| --- | --- |\n"
		for _, x := range r.Ignored {
			ignored.rows = append(ignored.rows, fmt.Sprintf("| %s | %s |\n", mdCode(clip(oneLine(x.Path), mdMaxCell), true), mdCell(x.Reason)))
		}
		ignored.tail = "\n"
	}
	d.add(ignored)
	if len(r.Routes) > 0 {
		routes.head = "**Routes**\n\n| Route | Model | Calls | OK | Failed | Timeouts | p50 | p95 | Circuit opens | Cost |\n" +
			"| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
		for _, rt := range r.Routes {
			routes.rows = append(routes.rows, fmt.Sprintf("| %s | %s | %d | %d | %d | %d | %s | %s | %d | %s |\n",
				mdCell(rt.Name), mdCell(rt.Model), rt.Calls, rt.OK, rt.Failed, rt.Timeouts,
				fmtElapsed(rt.P50MS), fmtElapsed(rt.P95MS), rt.CircuitOpens, fmtCost(rt.CostUSD)))
		}
		routes.tail = "\n"
	}
	d.add(routes)
	d.fixed("</details>\n")
	return ignored, routes
}

// mdDoc is a Markdown document made of fixed text and sections whose rows
// can be left out to fit a size limit.
type mdDoc struct {
	parts                                        []mdPart
	findings, notReviewed, ignored, routes, plan *mdSection
	shrink                                       []mdShrink
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
	out := b.String()
	if len(out) > limit { // only with absurd fixed text; never cut mid-rune
		out = clip(out, limit)
	}
	return out
}

// mdSection is a heading, rows and a tail; when rows are left out, more(n)
// says how many.
type mdSection struct {
	head   string
	rows   []string
	tail   string
	more   func(omitted int) string
	keep   int  // rows kept
	always bool // render the head even when no row is kept
	sums   []int
}

func (s *mdSection) size(keep int) int {
	if s.sums == nil {
		s.sums = make([]int, len(s.rows)+1)
		for i, r := range s.rows {
			s.sums[i+1] = s.sums[i] + len(r)
		}
	}
	if !s.always && len(s.rows) == 0 {
		return 0
	}
	n := len(s.head) + s.sums[keep] + len(s.tail)
	if keep < len(s.rows) {
		n += len(s.more(len(s.rows) - keep))
	}
	return n
}

func (s *mdSection) render(b *strings.Builder) {
	if !s.always && len(s.rows) == 0 {
		return
	}
	if s.keep == 0 && len(s.rows) > 0 {
		// No row fits: keep the heading line only, and say so.
		b.WriteString(firstBlock(s.head))
		b.WriteString(strings.TrimLeft(s.more(len(s.rows)), "\n"))
		if strings.TrimSpace(s.tail) != "" {
			b.WriteString(s.tail)
		}
		return
	}
	b.WriteString(s.head)
	for _, r := range s.rows[:s.keep] {
		b.WriteString(r)
	}
	if s.keep < len(s.rows) {
		b.WriteString(s.more(len(s.rows) - s.keep))
	}
	b.WriteString(s.tail)
}

// firstBlock is the first paragraph of a section head (its heading), without
// a table header that would have no rows.
func firstBlock(head string) string {
	if i := strings.Index(head, "\n\n"); i >= 0 {
		return head[:i+2]
	}
	return head
}

// mdEscape makes one line of untrusted text inert in Markdown: it cannot
// open HTML (tags, comments, </details>), links, images, code spans or
// fences, emphasis, table cells or headings, and it cannot mention anyone.
// Input should be a single line (see oneLine); mdBlock handles paragraphs.
func mdEscape(s string) string {
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
// become one.
func mdBlock(s string) string {
	var out []string
	blank := true
	for line := range strings.SplitSeq(sanitize(s, true), "\n") {
		line = strings.TrimSpace(line)
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
	return mdEscape(clip(dash(oneLine(s)), mdMaxCell))
}

// mdCode is s as a code span whose backtick fence is longer than any run of
// backticks inside it. In a table, pipes are escaped as GFM requires even
// inside code spans.
func mdCode(s string, inTable bool) string {
	s = oneLine(s)
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
	fence := strings.Repeat("`", max(3, longestRun(content, '`')+1))
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
