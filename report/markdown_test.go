package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/org/warden/review"
)

func TestMDEscape(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain words", "plain words"},
		{"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"</details>", "&lt;/details&gt;"},
		{"<!-- hide the rest", "&lt;!-- hide the rest"},
		{"a | b", `a \| b`},
		{"[click](https://evil.example)", "\\[click\\](`https://evil.example`)"},
		{"![x](https://evil.example/p.png)", "!\\[x\\](`https://evil.example/p.png`)"},
		// GitHub autolinks bare URLs: they become code, never clickable.
		{"see https://evil.example/a_b?c=d now", "see `https://evil.example/a_b?c=d` now"},
		{"visit www.evil.example today", "visit `www.evil.example` today"},
		{"FTP://files.example/x", "`FTP://files.example/x`"},
		{"**bold** _it_ ~~s~~", `\*\*bold\*\* \_it\_ \~\~s\~\~`},
		{"`code`", "\\`code\\`"},
		{"ping @octocat", "ping @&#8203;octocat"},
		{"AT&T &amp;", "AT&amp;T &amp;amp;"},
		{`back\slash`, `back\\slash`},
		{"# not a heading", `\# not a heading`},
		{"two\nlines", "two lines"},
	}
	for _, tt := range tests {
		if got := mdEscape(tt.in); got != tt.want {
			t.Errorf("mdEscape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMDInline(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"use `x := 1` here", "use `x := 1` here"},
		{"`<b>` stays code", "`<b>` stays code"},
		{"``a ` b`` ok", "``a ` b`` ok"},
		{"one ` unmatched", "one \\` unmatched"},
		{"```go fence", "\\`\\`\\`go fence"},
		{"`a` and <i>", "`a` and &lt;i&gt;"},
	}
	for _, tt := range tests {
		if got := mdInline(tt.in); got != tt.want {
			t.Errorf("mdInline(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMDBlock(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"first\n\n\n\nsecond", "first\n\nsecond"},
		{"- item\n+ item\n1. item\n2) item", "\\- item\n\\+ item\n1\\. item\n2\\) item"},
		{"title\n===", "title\n\\==="},
		{"title\n---", "title\n\\---"},
		{"    indented code", "indented code"},
		{"> quote", "&gt; quote"},
		// A fenced block stays code, under warden's own fence: an unclosed
		// one is closed; one whose content holds fences, a closing
		// </details> or a suggestion info string cannot break out.
		{"```\nopen fence", "```\nopen fence\n```"},
		{"~~~\nopen fence", "```\nopen fence\n```"},
		{"see:\n```go\nx := `a` + \"b\"\n```\nthen", "see:\n\n```go\nx := `a` + \"b\"\n```\n\nthen"},
		{"~~~\n```\n</details>\n<img src=x>\n```\n~~~\nafter", "````\n```\n</details>\n<img src=x>\n```\n````\n\nafter"},
		{"```suggestion\nrm -rf /\n```", "```\nrm -rf /\n```"},
		{"```js onload=x\ncode\n```", "```\ncode\n```"},
		{"[ref]: https://evil.example", "\\[ref\\]: `https://evil.example`"},
		{"esc\x1b[31mred\u202eevil", "esc\\[31mredevil"},
	}
	for _, tt := range tests {
		if got := mdBlock(tt.in); got != tt.want {
			t.Errorf("mdBlock(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMDCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		inTable bool
		want    string
	}{
		{"a.go#L1-L2", false, "`a.go#L1-L2`"},
		{"we`ird.go", false, "``we`ird.go``"},
		{"`x`", false, "`` `x` ``"},
		{"a|b.go", true, "`a\\|b.go`"},
		{"a|b.go", false, "`a|b.go`"},
		{"", true, "-"},
	}
	for _, tt := range tests {
		if got := mdCode(tt.in, tt.inTable); got != tt.want {
			t.Errorf("mdCode(%q, %v) = %q, want %q", tt.in, tt.inTable, got, tt.want)
		}
	}
}

func TestMDFence(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"x := 1", "```\nx := 1\n```\n"},
		{"a ``` b", "````\na ``` b\n````\n"},
		{"`````\nfive", "``````\n`````\nfive\n``````\n"},
	}
	for _, tt := range tests {
		if got := mdFence(tt.in); got != tt.want {
			t.Errorf("mdFence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestMarkdownHostile renders a report whose model- and diff-provided text
// tries to break out, and checks none of it reaches the output as markup.
func TestMarkdownHostile(t *testing.T) {
	t.Parallel()
	evil := "</details><script>x</script><!-- @octocat [a](http://e) | ```"
	r := &review.Report{
		Outcome: review.OutcomePartial,
		Findings: []review.Finding{{
			Skill: "sec", Severity: review.SeverityHigh, Title: evil, Description: evil + "\n</details>\n~~~",
			Path: "a</details>|b.go", StartLine: 1, EndLine: 2, Suggestion: "</details>\n````\n" + evil,
		}},
		Items: []review.Item{
			{Skill: "sec", Path: "a</details>|b.go", Status: review.StatusReviewed},
			{Skill: "sec", Path: "<img src=x>.go", Status: review.StatusFailed, Reason: "bad|response<b>", Route: "r</details>"},
			{Skill: "@octocat<b>", Path: "x`y.go", StartLine: 3, EndLine: 4, Status: review.StatusReviewed, Route: "<i>fb</i>",
				Attempts: []review.Attempt{{Route: "[p](http://e)", Class: "<!--"}, {Route: "<i>fb</i>", Class: "success"}}},
			{Skill: "**s**", Path: "</details>", StartLine: 1, Status: review.StatusSkipped, Reason: "@octocat</summary>"},
		},
		Ignored: []review.Ignored{{Path: "</details><b>x|y", Reason: "<i>generated</i>"}},
		Routes:  []review.RouteStats{{Name: "<b>primary</b>", Model: "m|x"}},
	}
	for range mdOpenFindings { // the later findings are folded: their summary line is HTML
		r.Findings = append(r.Findings, r.Findings[0])
	}
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatMarkdown, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "<summary>🟠 <b>high</b>: &lt;\u200b/details&gt;&lt;\u200bscript&gt;") {
		t.Errorf("the folded finding's summary is not defanged and escaped:\n%s", out)
	}
	// Our own HTML is only <details>, <summary>, <b> and <code> with their
	// closing tags, balanced (the suggestion's and the operators' folds,
	// the ignored paths); every other "<" must be inside a code span or
	// fenced block.
	outside := stripCode(out)
	for _, tag := range regexp.MustCompile(`<[^ ][^>]*>?`).FindAllString(outside, -1) {
		if !regexp.MustCompile(`^</?(details|summary|b|code)>$`).MatchString(tag) {
			t.Errorf("Markdown has a raw tag %q outside code:\n%s", tag, out)
		}
	}
	for _, tag := range []string{"details", "summary"} {
		if o, c := strings.Count(outside, "<"+tag+">"), strings.Count(outside, "</"+tag+">"); o != c || o == 0 {
			t.Errorf("Markdown opens <%s> %d times and closes it %d times outside code:\n%s", tag, o, c, out)
		}
	}
	if strings.Contains(outside, "@octocat") {
		t.Errorf("Markdown mentions @octocat outside code:\n%s", out)
	}
	if regexp.MustCompile(`[^\\]\]\(`).MatchString(outside) {
		t.Errorf("Markdown has a link outside code:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "| ---") {
			if got := countCells(line); got != countCells(tableHeaderFor(out, line)) {
				t.Errorf("table row %q has %d cells, want as many as its header", line, got)
			}
		}
	}
}

// stripCode removes fenced blocks and code spans (our own rendering rules:
// a fence line of 3+ backticks closes on the same fence; a span closes on a
// run of the same length).
func stripCode(s string) string {
	var b strings.Builder
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		if f := lines[i]; strings.HasPrefix(f, "```") && strings.Trim(f, "`") == "" {
			for i++; i < len(lines) && lines[i] != f; i++ {
			}
			continue
		}
		b.WriteString(stripSpans(lines[i]) + "\n")
	}
	return b.String()
}

func stripSpans(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] == '\\' && i+1 < len(line) {
			b.WriteString(line[i : i+2])
			i += 2
			continue
		}
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := runLen(line[i:], '`')
		j := closingRun(line[i+n:], n)
		if j < 0 {
			b.WriteString(line[i : i+n])
			i += n
			continue
		}
		b.WriteString("CODE")
		i += n + j + n
	}
	return b.String()
}

// countCells counts a GFM table row's cells: pipes not escaped.
func countCells(row string) int {
	n := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n - 1
}

// tableHeaderFor finds the header row of the table holding row.
func tableHeaderFor(doc, row string) string {
	lines := strings.Split(doc, "\n")
	header := ""
	for _, l := range lines {
		if !strings.HasPrefix(l, "|") {
			header = ""
			continue
		}
		if header == "" {
			header = l
		}
		if l == row {
			return header
		}
	}
	return ""
}

// bigReport has nFindings findings (severities cycling from critical to
// info, each about 1 KB), as many reviewed items, nFailed items that timed
// out in distinct files, and nIgnored ignored paths.
func bigReport(nFindings, nFailed, nIgnored int) *review.Report {
	r := &review.Report{Outcome: review.OutcomePartial, DurationMS: 900000, Policy: review.Policy{BudgetMS: 900000}}
	for i := range nFindings {
		r.Findings = append(r.Findings, review.Finding{
			Skill: "style", Severity: review.Severity(5 - i%5), Title: fmt.Sprintf("Finding %d", i),
			Description: strings.Repeat("Long explanation. ", 40), Path: fmt.Sprintf("pkg/f%04d.go", i),
			StartLine: 1, EndLine: 3, Suggestion: "x := 1\ny := 2",
		})
		r.Items = append(r.Items, review.Item{Skill: "style", Path: fmt.Sprintf("pkg/f%04d.go", i), StartLine: 1, EndLine: 40,
			Status: review.StatusReviewed, Route: "primary", Attempts: []review.Attempt{{Route: "primary", Class: "success"}}})
	}
	for i := range nFailed {
		r.Items = append(r.Items, review.Item{Skill: "security-review", Path: fmt.Sprintf("web/src/component%04d.ts", i),
			StartLine: 1, EndLine: 200, Status: review.StatusFailed, Reason: "timeout", Route: "primary",
			Attempts: []review.Attempt{{Route: "primary", Class: "timeout"}}})
	}
	for i := range nIgnored {
		r.Ignored = append(r.Ignored, review.Ignored{Path: fmt.Sprintf("vendor/pkg%d/x.go", i), Reason: "vendored"})
	}
	r.Routes = []review.RouteStats{{Name: "primary", Model: "m", Calls: nFindings + nFailed, OK: nFindings, Failed: nFailed, Timeouts: nFailed}}
	return r
}

func renderMarkdown(t *testing.T, r *review.Report, opts Options) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatMarkdown, opts); err != nil {
		t.Fatalf("Write(markdown) = %v, want nil", err)
	}
	return buf.String()
}

// checkFits checks the summary is valid UTF-8 within GitHub's limit with our
// margin, and that every <details> it opens is closed.
func checkFits(t *testing.T, out string) {
	t.Helper()
	if got, want := len(out), MarkdownLimit-markdownMargin; got > want {
		t.Errorf("Write(markdown) = %d bytes, want at most %d", got, want)
	}
	if !utf8.ValidString(out) {
		t.Errorf("Write(markdown) is not valid UTF-8")
	}
	if o, c := strings.Count(out, "<details>"), strings.Count(out, "</details>"); o != c {
		t.Errorf("Write(markdown) opens <details> %d times and closes it %d times", o, c)
	}
}

// TestMarkdownSizeCap renders 3,000 findings and 2,000 failed items: every
// optional list is cut, then the least severe findings, and each cut says so
// while the counts stay.
func TestMarkdownSizeCap(t *testing.T) {
	t.Parallel()
	const total = 3000
	out := renderMarkdown(t, bigReport(total, 2000, 300), Options{})
	checkFits(t, out)

	shown := shownFindings(out)
	m := regexp.MustCompile(`_… ([\d,]+) more findings not shown \(([^)]*)\): this summary is limited to 65,535 characters; see the report file`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("Write(markdown) has no line saying how many findings were cut:\n%s", out[len(out)-2000:])
	}
	left, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	if shown == 0 || shown+left != total {
		t.Errorf("Write(markdown) shows %d findings and cuts %d, want a sum of %d with some shown", shown, left, total)
	}
	// The most severe are kept: every shown finding is critical.
	if got := strings.Count(out, "#### 🔴 critical") + strings.Count(out, "<summary>🔴 <b>critical</b>"); got != shown {
		t.Errorf("Write(markdown) shows %d critical of %d findings, want only critical ones", got, shown)
	}
	for _, want := range []string{
		"## warden: Partial — 3,000 of 5,000 items reviewed; 2,000 not reviewed (timeout 2,000); 3,000 findings (600 critical,",
		"2,000 items were not reviewed (timeout 2,000): no findings there does not mean no problems.",
		"| security-review | 2,000 | 0 | 2,000 | 0 |",
		// The file list is cut, the count stays.
		"**timeout** — 2,000 items failed, in 2,000 files: the model did not answer within the deadline.\n\n" +
			"_The 2,000 files are not listed to fit GitHub's size limit; the JSON report file lists every item._\n",
		"| primary | m | 5,000 | 3,000 | 2,000 | 2,000 |",
		"**Fallbacks:** none;",
		"- **Time:** 15m0s of the 15m0s review budget (100%)",
		// The ignored list is cut, the count stays.
		"<summary>Paths not reviewed in full (300), with the reason</summary>\n\n" +
			"_The 300 paths are not listed to fit GitHub's size limit; the JSON report file lists them._\n\n</details>\n",
		"### Findings (3,000)\n\n#### 🔴 critical",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Write(markdown) lacks %q", want)
		}
	}
}

// TestMarkdownCutOrder checks that a summary a little too long loses the
// ignored paths first, then the file lists of unreviewed work, and keeps
// every finding while it can.
func TestMarkdownCutOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                                 string
		findings, failed, ignored            int
		wantIgnoredCut, wantFilesCut, wantFC bool // wantFC: findings cut
	}{
		{name: "fits", findings: 10, failed: 10, ignored: 10},
		{name: "ignored paths go first", findings: 50, failed: 20, ignored: 800, wantIgnoredCut: true},
		{name: "then the file lists", findings: 50, failed: 600, ignored: 800, wantIgnoredCut: true, wantFilesCut: true},
		{name: "findings last", findings: 200, failed: 600, ignored: 800, wantIgnoredCut: true, wantFilesCut: true, wantFC: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := renderMarkdown(t, bigReport(tt.findings, tt.failed, tt.ignored), Options{})
			checkFits(t, out)
			ignoredCut := strings.Contains(out, "paths are not listed") || strings.Contains(out, "more paths_ |")
			filesCut := strings.Contains(out, "files are not listed") || strings.Contains(out, "more files; the JSON report")
			findingsCut := strings.Contains(out, "more findings not shown") || strings.Contains(out, "findings not shown (")
			if ignoredCut != tt.wantIgnoredCut || filesCut != tt.wantFilesCut || findingsCut != tt.wantFC {
				t.Errorf("cut ignored, files, findings = %v, %v, %v; want %v, %v, %v",
					ignoredCut, filesCut, findingsCut, tt.wantIgnoredCut, tt.wantFilesCut, tt.wantFC)
			}
			if !findingsCut {
				if got := shownFindings(out); got != tt.findings {
					t.Errorf("Write(markdown) shows %d findings, want all %d", got, tt.findings)
				}
			}
		})
	}
}

// TestMarkdownSizeCapFits checks that a report just under the limit is not
// cut and one just over it is.
func TestMarkdownSizeCapFits(t *testing.T) {
	t.Parallel()
	build := func(n int) string {
		r := &review.Report{Outcome: review.OutcomeComplete}
		for i := range n {
			r.Findings = append(r.Findings, review.Finding{Skill: "s", Severity: review.SeverityHigh,
				Title: fmt.Sprintf("F%05d", i), Description: strings.Repeat("d", 900), Path: "a.go", StartLine: 1, EndLine: 1})
		}
		return renderMarkdown(t, r, Options{})
	}
	// With far too many findings, n are shown; n must fit whole, n+1 not.
	n := shownFindings(build(200))
	limit := MarkdownLimit - markdownMargin
	if out := build(n); strings.Contains(out, "not shown") || len(out) > limit {
		t.Errorf("%d findings: %d bytes, cut %v; want all shown within %d bytes", n, len(out), strings.Contains(out, "not shown"), limit)
	}
	if out := build(n + 1); !strings.Contains(out, "_… 1 more finding not shown (1 high)") || len(out) > limit {
		t.Errorf("%d findings: %d bytes, want one cut and at most %d bytes", n+1, len(out), limit)
	}
}

// TestMarkdownSizeCapMultibyte fills findings with four-byte characters:
// GitHub's validator counts bytes ("summary exceeds a maximum bytesize of
// 65535"), so a summary sized by characters would be rejected.
func TestMarkdownSizeCapMultibyte(t *testing.T) {
	t.Parallel()
	r := &review.Report{Outcome: review.OutcomeComplete}
	for i := range 500 {
		r.Findings = append(r.Findings, review.Finding{Skill: "s", Severity: review.SeverityLow,
			Title: fmt.Sprintf("🔥 %d", i), Description: strings.Repeat("😀漢", 300), Path: "a.go", StartLine: 1, EndLine: 1})
	}
	out := renderMarkdown(t, r, Options{})
	checkFits(t, out)
	if !strings.Contains(out, "more findings not shown") {
		t.Errorf("Write(markdown) of 500 large findings cut none")
	}
}

func TestMarkdownLongSuggestionLeftOut(t *testing.T) {
	t.Parallel()
	r := &review.Report{Outcome: review.OutcomeComplete, Findings: []review.Finding{{
		Skill: "s", Severity: review.SeverityLow, Title: "t", Path: "a.go", StartLine: 1, EndLine: 1,
		Suggestion: strings.Repeat("line\n", 3000),
	}}}
	out := renderMarkdown(t, r, Options{})
	if want := "_Suggested change of 3,000 lines left out (too long); see the report file._"; !strings.Contains(out, want) {
		t.Errorf("Write(markdown) lacks %q:\n%s", want, out)
	}
}

// shownFindings counts the findings a Markdown summary shows: the first in
// full under a heading, the later ones folded under a <summary>.
func shownFindings(out string) int {
	return len(regexp.MustCompile(`(?m)^(#### |<summary>(🔴|🟠|🟡|🔵|⚪) <b>)`).FindAllString(out, -1))
}
