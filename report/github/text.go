package github

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/org/warden/report"
)

// stripControls drops C0/C1 control characters (newlines and tabs are kept),
// bidi overrides and isolates, and replaces invalid UTF-8.
func stripControls(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for i, w := 0, 0; i < len(s); i += w {
		r, size := utf8.DecodeRuneInString(s[i:])
		w = size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case unicode.IsControl(r), report.IsBidiControl(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	// A mention as GitHub finds one: @ not preceded by an ASCII word
	// character (so e-mail addresses stay; GitHub's \W is ASCII, so "é@x"
	// and "a.@x" do mention), followed by what a user or team name starts
	// with.
	mentionRE = regexp.MustCompile(`(^|[^A-Za-z0-9_])@([A-Za-z0-9_-])`)
	// What GitHub autolinks: an http(s) or ftp URL, or a host starting
	// with "www.".
	urlRE = regexp.MustCompile("(?i)(?:(?:https?|ftp)://|www\\.)[^\\s<>`\"')\\]]+")
	// A link reference definition's label, "[label]:", which would turn a
	// destination such as //evil.example into a link.
	refDefRE = regexp.MustCompile(`\[([^\]\n]*)\]:`)
	// A fence opening with the info string "suggestion", which GitHub
	// renders as an applicable change.
	suggestionFenceRE = regexp.MustCompile("(?im)^([ \t>]*(?:`{3,}|~{3,})[ \t]*)suggestion")
)

// neutralize makes model text safe to render in a GitHub comment:
//   - @-mentions are broken with a zero-width space (@\u200bname), so the
//     model cannot notify people or teams;
//   - "<" becomes "&lt;", so no raw HTML (tags, <details>, <img>, HTML
//     comments that could forge a fingerprint marker) reaches the renderer;
//   - "![" becomes "!\[", "](" becomes "]\(" and "[label]:" becomes
//     "\[label]:", so no image, inline link or link reference definition
//     (whose destination could be //evil.example) is rendered;
//   - a URL GitHub would autolink (http://, https://, ftp://, www.) that is
//     not under repoURL (the repository on GITHUB_SERVER_URL) becomes inline
//     code, so it is shown but not linked;
//   - a fence whose info string is "suggestion" gets "text" instead, so a
//     description cannot smuggle in an applicable change: the only
//     suggestion block in a comment is warden's own, on exactly the
//     finding's lines.
//
// Control characters and bidi overrides are dropped.
func neutralize(s, repoURL string) string {
	s = stripControls(s)
	s = strings.ReplaceAll(s, "<", "&lt;")
	s = strings.ReplaceAll(s, "![", `!\[`)
	s = strings.ReplaceAll(s, "](", `]\(`)
	s = refDefRE.ReplaceAllString(s, `\[$1]:`)
	s = suggestionFenceRE.ReplaceAllString(s, "${1}text")
	s = mentionRE.ReplaceAllString(s, "$1@\u200b$2")
	s = urlRE.ReplaceAllStringFunc(s, func(u string) string {
		if report.UnderRepo(u, repoURL) {
			return u
		}
		return inlineCode(u)
	})
	return s
}

// inlineCode wraps s in a code span whose backtick run is longer than any
// inside it.
func inlineCode(s string) string {
	n := longestRun(s, '`') + 1
	ticks := strings.Repeat("`", n)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return ticks + " " + s + " " + ticks
	}
	return ticks + s + ticks
}

// fenceLength is the number of backticks a code fence around s needs: at
// least three, and more than the longest backtick run in s (reviewdog's
// GetCodeFenceLength), so that s cannot close the fence.
func fenceLength(s string) int {
	return max(3, longestRun(s, '`')+1)
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// closeFences appends a closing fence when model text leaves a fenced code
// block open, so that what follows it (a suggestion, the fingerprint
// marker) is not swallowed.
func closeFences(s string) string {
	var open string // the opening fence, "" when none is open
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 {
			continue
		}
		for _, c := range []byte{'`', '~'} {
			n := 0
			for n < len(t) && t[n] == c {
				n++
			}
			if n < 3 {
				continue
			}
			switch {
			case open == "":
				open = t[:n]
			case open[0] == c && n >= len(open) && strings.TrimSpace(t[n:]) == "":
				open = ""
			}
		}
	}
	if open != "" {
		return s + "\n" + open
	}
	return s
}
