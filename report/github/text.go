package github

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
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
		case unicode.IsControl(r), isBidiControl(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}

var (
	// A mention: @ not preceded by a word character (so e-mail addresses
	// stay), followed by what a user or team name starts with.
	mentionRE = regexp.MustCompile(`(^|[^\p{L}\p{N}_.+-])@([\p{L}\p{N}_-])`)
	urlRE     = regexp.MustCompile("(?i)https?://[^\\s<>`\"')\\]]+")
)

// neutralize makes model text safe to render in a GitHub comment:
//   - @-mentions are broken with a zero-width space (@\u200bname), so the
//     model cannot notify people or teams;
//   - "<" becomes "&lt;", so no raw HTML (tags, <details>, <img>, HTML
//     comments that could forge a fingerprint marker) reaches the renderer;
//   - "![" becomes "!\[" and "](" becomes "]\(", so no image or inline link
//     is rendered;
//   - an http(s) URL that is not under the repository on serverURL becomes
//     inline code, so it is shown but not linked.
//
// Control characters and bidi overrides are dropped.
func neutralize(s, repoURL string) string {
	s = stripControls(s)
	s = strings.ReplaceAll(s, "<", "&lt;")
	s = strings.ReplaceAll(s, "![", `!\[`)
	s = strings.ReplaceAll(s, "](", `]\(`)
	s = mentionRE.ReplaceAllString(s, "$1@\u200b$2")
	s = urlRE.ReplaceAllStringFunc(s, func(u string) string {
		if repoURL != "" && (strings.EqualFold(u, repoURL) || hasPrefixFold(u, repoURL+"/")) {
			return u
		}
		return inlineCode(u)
	})
	return s
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
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
