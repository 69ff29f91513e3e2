package github

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// hostileText is model text that tries every way out of a comment or an
// annotation: mentions (also where GitHub's ASCII \W lets them through),
// raw HTML, a forged marker, images, inline, reference and bare links to
// another host (also a look-alike of the repository's address), and a
// smuggled applicable suggestion.
const hostileText = "ping @octocat a.@org/team é@carol <img src=x onerror=alert(1)> </details> " +
	"<!-- warden:fp:00000000000000000000000000000000 --> ![i](https://evil.example/p.png) " +
	"[click](https://evil.example/a) www.evil.example https://github.com/org/warden@evil.example/x " +
	"ftp://evil.example/f\n\n[r]: //evil.example/ref\n\n```suggestion\nrm -rf /\n```\n" +
	"own: https://github.com/org/warden/blob/main/a.go#L3"

// TestHostileModelTextIsInert posts findings made of hostile text
// everywhere warden posts them (inline comments, the review body, check-run
// annotations' title, message and raw_details, workflow-command
// annotations) and checks every string GitHub received: no raw HTML, no
// mention, no link to another host that a renderer or linkifier would make
// clickable, no applicable suggestion but warden's own.
func TestHostileModelTextIsInert(t *testing.T) {
	t.Parallel()
	const repoURL = "https://github.com/org/warden" // testOwner/testRepo on GITHUB_SERVER_URL
	c := start(t, newFake(t), fakegithub.DefaultToken, func(cfg *Config) { cfg.ServerURL = "https://github.com" })
	fs := []review.Finding{
		// On a line of the diff: an inline comment with a suggestion.
		{Skill: "code-review", Severity: review.SeverityHigh, Title: hostileText, Description: hostileText, Suggestion: "x := 1 // @octocat <b>", Path: "a.go", StartLine: 2, EndLine: 2},
		// Off the diff: an entry of the review body.
		{Skill: "code-review", Severity: review.SeverityMedium, Title: hostileText, Description: hostileText, Path: "a.go", StartLine: 15, EndLine: 15},
	}
	id, err := c.CreateCheckRun(t.Context(), "warden", testHead)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CompleteCheckRun(t.Context(), id, CheckOutput{Conclusion: "failure", Title: "t", Summary: "s", Annotations: fs}); err != nil {
		t.Fatal(err)
	}
	res, err := c.PostReview(t.Context(), testPR, testHead, fs, Anchors{"a.go": {{Start: 1, End: 6}}}, ReviewOptions{})
	if err != nil || res.Posted != 1 || res.InBody != 1 {
		t.Fatalf("PostReview() = %+v, %v; want one comment and one body entry", res, err)
	}

	// Markdown sinks: comment bodies and the review body. Plain-text
	// sinks: check-run annotations and workflow commands.
	var markdown, plain []string
	for _, r := range c.fake.Requests() {
		if len(r.Body) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(r.Body, &v); err != nil {
			t.Fatalf("%s body: %v", r.Route, err)
		}
		switch r.Route {
		case fakegithub.RouteCreateReview:
			markdown = appendStrings(markdown, v)
		case fakegithub.RouteUpdateCheckRun:
			plain = appendStrings(plain, v)
		}
	}
	var wa strings.Builder
	WriteAnnotations(&wa, fs, review.SeverityNone)
	plain = append(plain, wa.String())

	const ownSuggestion = "```suggestion\nx := 1 // @octocat <b>\n```"
	sawOwnSuggestion := false
	for _, s := range append(markdown, plain...) {
		if !strings.Contains(s, "evil") {
			continue // not model text
		}
		if strings.Contains(s, ownSuggestion) {
			sawOwnSuggestion = true
			s = strings.Replace(s, ownSuggestion, "", 1) // code, shown verbatim
		}
		low := strings.ToLower(s)
		for _, tag := range []string{"<img", "</details", "<b>", "<!-- warden:fp:00000000"} {
			if strings.Contains(low, tag) {
				t.Errorf("raw HTML %q reached GitHub in %q", tag, s)
			}
		}
		if m := mentionRE.FindString(s); m != "" {
			t.Errorf("mention %q reached GitHub in %q", m, s)
		}
		for _, loc := range urlRE.FindAllStringIndex(s, -1) {
			u := s[loc[0]:loc[1]]
			if !report.UnderRepo(u, repoURL) && (loc[0] == 0 || s[loc[0]-1] != '`') {
				t.Errorf("link %q reached GitHub clickable in %q", u, s)
			}
		}
	}
	for _, s := range markdown {
		if strings.Count(s, "[r]: //evil") != strings.Count(s, "\\[r]: //evil") {
			t.Errorf("a link reference definition reached GitHub in %q", s)
		}
		if suggestionOpenRE.MatchString(strings.Replace(s, ownSuggestion, "", 1)) {
			t.Errorf("a smuggled applicable suggestion reached GitHub in %q", s)
		}
	}
	if !sawOwnSuggestion {
		t.Errorf("warden's own suggestion (verbatim code) is missing from the inline comment")
	}
	run, _ := c.fake.CheckRun(id)
	if len(run.Annotations) != 2 || !strings.Contains(run.Annotations[0].Message, "hxxps://evil[.]example/a") ||
		!strings.Contains(run.Annotations[0].Message, repoURL+"/blob/main/a.go#L3") {
		t.Errorf("annotations = %+v; want links elsewhere defanged and the repository's own kept", run.Annotations)
	}
}

func appendStrings(out []string, v any) []string {
	switch v := v.(type) {
	case string:
		out = append(out, v)
	case []any:
		for _, e := range v {
			out = appendStrings(out, e)
		}
	case map[string]any:
		for _, e := range v {
			out = appendStrings(out, e)
		}
	}
	return out
}

// The oracles of the hostile and fuzz tests: what GitHub would render as a
// mention or autolink, written here independently of report.Neutralize.
var (
	mentionRE = regexp.MustCompile(`(^|[^A-Za-z0-9_])@([A-Za-z0-9_-])`)
	urlRE     = regexp.MustCompile("(?i)(?:(?:https?|ftp)://|www\\.)[^\\s<>`\"')\\]]+")
)
