package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

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
		{"[click](https://evil.example)", `\[click\](https://evil.example)`},
		{"![x](https://evil.example/p.png)", `!\[x\](https://evil.example/p.png)`},
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
		{"```\nopen fence", "\\`\\`\\`\nopen fence"},
		{"~~~\nopen fence", "\\~\\~\\~\nopen fence"},
		{"[ref]: https://evil.example", "\\[ref\\]: https://evil.example"},
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
		},
		Ignored: []review.Ignored{{Path: "</details><b>x|y", Reason: "<i>generated</i>"}},
		Routes:  []review.RouteStats{{Name: "<b>primary</b>", Model: "m|x"}},
	}
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatMarkdown, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// Our own HTML is exactly <details>, <summary> and their closing tags;
	// every other "<" must be inside a code span or fenced block.
	outside := stripCode(out)
	tags := regexp.MustCompile(`<[^ ]`).FindAllString(outside, -1)
	if got, want := strings.Join(tags, " "), "<d <s </ </"; got != want {
		t.Errorf("Markdown has raw tags %q outside code, want only %q:\n%s", got, want, out)
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

func TestMarkdownSizeCap(t *testing.T) {
	t.Parallel()
	const total = 2000
	r := &review.Report{Outcome: review.OutcomeComplete, DurationMS: 1000}
	for i := range total {
		r.Findings = append(r.Findings, review.Finding{
			Skill: "style", Severity: review.Severity(1 + i%5), Title: fmt.Sprintf("Finding %d", i),
			Description: strings.Repeat("Long explanation. ", 40), Path: fmt.Sprintf("pkg/f%04d.go", i),
			StartLine: 1, EndLine: 3, Suggestion: "x := 1\ny := 2",
		})
		r.Items = append(r.Items, review.Item{Skill: "style", Path: fmt.Sprintf("pkg/f%04d.go", i), Status: review.StatusReviewed})
	}
	for i := range 300 {
		r.Items = append(r.Items, review.Item{Skill: "style", Path: fmt.Sprintf("web/%d.ts", i), Status: review.StatusSkipped, Reason: "budget"})
		r.Ignored = append(r.Ignored, review.Ignored{Path: fmt.Sprintf("vendor/pkg%d/x.go", i), Reason: "vendored"})
	}
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatMarkdown, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if len(out) > MarkdownLimit {
		t.Errorf("Write(markdown) = %d bytes, want at most %d", len(out), MarkdownLimit)
	}
	shown := strings.Count(out, "\n#### ")
	m := regexp.MustCompile(`_(\d+) more findings not shown: this summary is limited to 65,535 characters`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("Write(markdown) has no line saying how many findings were left out:\n%s", out[len(out)-2000:])
	}
	left, _ := strconv.Atoi(m[1])
	if shown == 0 || shown+left != total {
		t.Errorf("Write(markdown) shows %d findings and leaves out %d, want a sum of %d with some shown", shown, left, total)
	}
	// The most severe are kept: every shown finding is critical.
	if got := strings.Count(out, "#### 🔴 critical"); got != shown {
		t.Errorf("Write(markdown) shows %d critical of %d findings, want only critical ones", got, shown)
	}
	// The gap stays visible: the summary counts every unreviewed item, the
	// table lists some and says how many more.
	for _, want := range []string{"| complete | 2000 of 2300 | 0 | 300 | 2000 |", "### Not reviewed (300)", "_250 more items not listed here", "</details>\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("Write(markdown) lacks %q", want)
		}
	}
	if !strings.HasSuffix(out, "</details>\n") {
		t.Errorf("Write(markdown) does not end with the closed <details> block")
	}
}

// TestMarkdownSizeCapFits checks that a report just under the limit is not
// truncated and one just over it is.
func TestMarkdownSizeCapFits(t *testing.T) {
	t.Parallel()
	build := func(n int) string {
		r := &review.Report{Outcome: review.OutcomeComplete}
		for i := range n {
			r.Findings = append(r.Findings, review.Finding{Skill: "s", Severity: review.SeverityHigh,
				Title: fmt.Sprintf("F%05d", i), Description: strings.Repeat("d", 900), Path: "a.go", StartLine: 1, EndLine: 1})
		}
		var buf bytes.Buffer
		if err := Write(&buf, r, FormatMarkdown, Options{}); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	// With far too many findings, n are shown; n must fit whole, n+1 not.
	n := strings.Count(build(200), "\n#### ")
	if out := build(n); strings.Contains(out, "not shown") || len(out) > MarkdownLimit {
		t.Errorf("%d findings: %d bytes, truncated %v; want all shown within the limit", n, len(out), strings.Contains(out, "not shown"))
	}
	if out := build(n + 1); !strings.Contains(out, "_1 more finding not shown") || len(out) > MarkdownLimit {
		t.Errorf("%d findings: %d bytes, want one left out and at most %d bytes", n+1, len(out), MarkdownLimit)
	}
}

func TestMarkdownLongSuggestionLeftOut(t *testing.T) {
	t.Parallel()
	r := &review.Report{Outcome: review.OutcomeComplete, Findings: []review.Finding{{
		Skill: "s", Severity: review.SeverityLow, Title: "t", Path: "a.go", StartLine: 1, EndLine: 1,
		Suggestion: strings.Repeat("line\n", 3000),
	}}}
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatMarkdown, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := "_Suggested change of 3000 lines left out (too long); see the JSON report._"; !strings.Contains(buf.String(), want) {
		t.Errorf("Write(markdown) lacks %q:\n%s", want, buf.String())
	}
}
