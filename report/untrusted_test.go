package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/org/warden/review"
)

func TestDefang(t *testing.T) {
	t.Parallel()
	const repo = "https://github.com/acme/widgets"
	tests := []struct{ name, in, want string }{
		{"plain", "a < b && c > d", "a < b && c > d"},
		{"mentions", "@octocat a.@org/team é@carol mail a@example.com", "@\u200boctocat a.@\u200borg/team é@\u200bcarol mail a@example.com"},
		{"markup", "<img src=x> </details> <!-- c --> <?php", "<\u200bimg src=x> <\u200b/details> <\u200b!-- c --> <\u200b?php"},
		{"links elsewhere", "see https://evil.example/a?b=c and www.evil.example and FTP://f.example/x",
			"see hxxps://evil[.]example/a?b=c and www[.]evil[.]example and FXP://f[.]example/x"},
		{"look-alike host", "https://github.com.evil.example/acme/widgets", "hxxps://github[.]com[.]evil[.]example/acme/widgets"},
		{"repository's own", repo + "/blob/main/a.go#L3 " + repo + "?x", repo + "/blob/main/a.go#L3 " + repo + "?x"},
		{"controls", "a\x1b[2Jb\u202ec\r\nd", "a[2Jbc\nd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Defang(tt.in, repo); got != tt.want {
				t.Errorf("Defang(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if got := Defang(repo+"/x", ""); got != "hxxps://github[.]com/acme/widgets/x" {
		t.Errorf("Defang(own link, no repository) = %q, want it defanged", got)
	}
}

func TestUnderRepo(t *testing.T) {
	t.Parallel()
	const repo = "https://github.com/acme/widgets"
	tests := []struct {
		u    string
		want bool
	}{
		{repo, true},
		{repo + "/", true},
		{"HTTPS://GITHUB.COM/acme/widgets/pull/1", true},
		{repo + "#readme", true},
		{repo + "x", false},
		{repo + "@evil.example", false},
		{"https://github.com/acme", false},
		{"https://evil.example/" + repo, false},
	}
	for _, tt := range tests {
		if got := UnderRepo(tt.u, repo); got != tt.want {
			t.Errorf("UnderRepo(%q) = %v, want %v", tt.u, got, tt.want)
		}
	}
	if UnderRepo(repo, "") {
		t.Errorf("UnderRepo(_, \"\") = true, want false: no repository, nothing trusted")
	}
}

// hostileReport has one finding made of hostile model text.
func hostileReport() *review.Report {
	const text = "ping @octocat <img src=x> ![i](https://evil.example/p.png) [l](https://evil.example/a) " +
		"https://evil.example/bare www.evil.example\n[r]: //evil.example/ref"
	return &review.Report{
		Schema: review.Schema, Outcome: review.OutcomeComplete,
		Summary:  review.Summary{Planned: 1, Reviewed: 1, Findings: 1},
		Findings: []review.Finding{{Skill: "code-review", Severity: review.SeverityHigh, Title: text, Description: text, Path: "a.go", StartLine: 1, EndLine: 1}},
		Items:    []review.Item{{Skill: "code-review", Path: "a.go", StartLine: 1, EndLine: 1, Status: review.StatusReviewed}},
	}
}

// The job summary and check-run summary (Markdown) and SARIF show model
// text, but no link in it is clickable, no mention notifies, no HTML
// renders.
func TestHostileTextInMarkdownAndSARIF(t *testing.T) {
	t.Parallel()
	var md, sarif bytes.Buffer
	if err := Write(&md, hostileReport(), FormatMarkdown, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&sarif, hostileReport(), FormatSARIF, Options{}); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, loc := range linkRE.FindAllStringIndex(out, -1) {
		if u := out[loc[0]:loc[1]]; strings.Contains(u, "evil") && (loc[0] == 0 || out[loc[0]-1] != '`') {
			t.Errorf("markdown: link %q is not in a code span:\n%s", u, out)
		}
	}
	for _, bad := range []string{"<img", "@octocat", "](", "![", "\n[r]:"} {
		if strings.Contains(strings.ReplaceAll(out, `\](`, ""), bad) {
			t.Errorf("markdown holds %q:\n%s", bad, out)
		}
	}

	var log struct {
		Runs []struct {
			Results []struct {
				Message struct{ Text string } `json:"message"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(sarif.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	msg := log.Runs[0].Results[0].Message.Text
	for _, bad := range []string{"<img", "@octocat", "https://", "www.evil", "evil.example/a", "[l]", "](", "\n[r]:"} {
		if strings.Contains(strings.ReplaceAll(msg, `\](`, ""), bad) {
			t.Errorf("SARIF message holds %q: %q", bad, msg)
		}
	}
	if !strings.Contains(msg, `hxxps://evil\[.\]example/a`) {
		t.Errorf("SARIF message = %q, want the link defanged and its brackets escaped", msg)
	}
}

// Findings a bound left out are counted in the JSON report and said, with
// the bound, in text and Markdown.
func TestFindingsDroppedAreReported(t *testing.T) {
	t.Parallel()
	r := hostileReport()
	r.Findings[0].Title, r.Findings[0].Description = "t", "d"
	r.Policy.MaxFindings, r.Policy.ReportOn = 1, "medium"
	r.Summary.FindingsDropped = review.FindingsDropped{AnswerCap: 7, MaxFindings: 3, BelowReportOn: 2, NoText: 1, UnknownSkill: 4}
	want := []string{
		"3 more findings not shown (max_findings 1)",
		"2 findings below medium not shown (report_on medium)",
		"7 findings not shown: one answer may hold at most 50 findings (answer cap)",
		"1 finding without a title or description dropped",
		"4 findings naming no skill of their batch dropped",
	}
	for _, f := range []Format{FormatText, FormatMarkdown} {
		var b bytes.Buffer
		if err := Write(&b, r, f, Options{}); err != nil {
			t.Fatal(err)
		}
		out := strings.ReplaceAll(b.String(), `\_`, "_")
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%v report does not say %q:\n%s", f, w, out)
			}
		}
	}
	var b bytes.Buffer
	if err := Write(&b, r, FormatJSON, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"findings_dropped": {`) || !strings.Contains(b.String(), `"answer_cap": 7`) {
		t.Errorf("JSON report lacks summary.findings_dropped:\n%s", b.String())
	}
	r.Summary.FindingsDropped = review.FindingsDropped{}
	b.Reset()
	if err := Write(&b, r, FormatJSON, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "findings_dropped") {
		t.Errorf("JSON report has findings_dropped when nothing was dropped")
	}
}
