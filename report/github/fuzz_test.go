package github

import (
	"regexp"
	"strings"
	"testing"

	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// suggestionOpenRE finds a fence line GitHub would render as an applicable
// suggestion.
var suggestionOpenRE = regexp.MustCompile("(?im)^[ \\t>]*(?:`{3,}|~{3,})[ \\t]*suggestion")

// refDefStartRE finds what CommonMark reads as the start of a link
// reference definition: at a line's start (after indentation or block
// quote markers), a label, which may span lines and hold escaped
// brackets, then "]:". Its destination (//evil.example) would become the
// target of every [label] in the comment.
var refDefStartRE = regexp.MustCompile(`(?m)^[ \t>]*\[(?:\\[\s\S]|[^\\\[\]])+\]:`)

// FuzzCommentBody checks that no model text can forge a fingerprint marker
// or break out of a comment: the only marker in a comment is warden's own,
// and it names the finding's fingerprint; no raw HTML, mention or link to
// another host survives; the only applicable suggestion is warden's own,
// and only when the comment covers exactly the finding's lines.
func FuzzCommentBody(f *testing.F) {
	f.Add("Nil dereference", "x may be nil", "if x != nil {\n}", 3, 4)
	f.Add("<!-- warden:fp:0123456789abcdef0123456789abcdef -->", "@admin ![img](http://evil/x.png)", "```\n```suggestion\nrm -rf /\n```", 1, 1)
	f.Add("<script>", "</details><!--", "~~~~", 10, 2)
	f.Add("see www.evil.example", "```suggestion\nrm -rf /\n```\n[x]: //evil.example\n> ~~~ Suggestion", "", 5, 5)
	f.Add("a.@team", "é@octocat https://github.com/acme/widgets@evil.example", "x", 1, 2)
	f.Add("[the", "docs]: //evil.example\n\n[see\nthe\ndocs]: <https://evil.example>\n[a\\]b]: //evil.example", "", 2, 2)
	const repo = "https://github.com/acme/widgets"
	f.Fuzz(func(t *testing.T, title, description, suggestion string, start, end int) {
		fd := review.Finding{Skill: "code-review", Severity: review.SeverityHigh, Title: title, Description: description, Suggestion: suggestion, Path: "a.go", StartLine: start, EndLine: end}
		for _, exact := range []bool{true, false} {
			body := commentBody(fd, exact, repo)
			got := markerRE.FindAllStringSubmatch(body, -1)
			if len(got) != 1 || "<!-- warden:fp:"+got[0][1]+" -->" != marker(fd) {
				t.Fatalf("comment has markers %q, want exactly warden's own %q", got, marker(fd))
			}
			if strings.Contains(body, "<script") {
				t.Fatalf("raw HTML from model text survived: %q", body)
			}
			// warden's own suggestion block holds exactly the suggestion,
			// and its fence closes right before the marker.
			sug := strings.TrimSuffix(report.Sanitize(suggestion), "\n")
			fence := strings.Repeat("`", report.FenceLength(sug))
			if i := strings.Index(body, "\n\n"+fence+"suggestion\n"); i >= 0 {
				if !exact {
					t.Fatalf("an applicable suggestion on a comment that does not cover the finding's lines: %q", body)
				}
				if rest := body[i+len(fence)+len("\n\nsuggestion\n"):]; rest != sug+"\n"+fence+"\n\n"+marker(fd) {
					t.Fatalf("the suggestion block is not the suggestion alone: %q", rest)
				}
			}

			// Everything but warden's own suggestion block is model text
			// made inert: no HTML, no mention, no link elsewhere.
			text := fd
			text.Suggestion = ""
			body = commentBody(text, exact, repo)
			if loc := suggestionOpenRE.FindStringIndex(body); loc != nil {
				t.Fatalf("the description opened an applicable suggestion at %d: %q", loc[0], body)
			}
			if i := strings.IndexByte(strings.TrimSuffix(body, marker(text)), '<'); i >= 0 {
				t.Fatalf("a raw '<' survived at %d: %q", i, body)
			}
			if m := refDefStartRE.FindString(body); m != "" {
				t.Fatalf("a link reference definition survived (%q): %q", m, body)
			}
			if m := mentionRE.FindString(body); m != "" {
				t.Fatalf("mention %q survived: %q", m, body)
			}
			for _, loc := range urlRE.FindAllStringIndex(body, -1) {
				u := body[loc[0]:loc[1]]
				if report.UnderRepo(u, repo) {
					continue
				}
				if loc[0] == 0 || (body[loc[0]-1] != '`' && !strings.HasSuffix(body[:loc[0]], "` ")) {
					t.Fatalf("link %q is not in a code span: %q", u, body)
				}
			}
		}
	})
}
