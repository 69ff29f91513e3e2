package report

import (
	"regexp"
	"strings"
)

var (
	// A mention as GitHub finds one: @ not preceded by an ASCII word
	// character (so e-mail addresses stay), followed by what a user or
	// team name starts with.
	mentionRE = regexp.MustCompile(`(^|[^A-Za-z0-9_])@([A-Za-z0-9_-])`)
	// What GitHub's autolinker (and most linkifiers) turn into a link: an
	// http(s) or ftp URL, or a host starting with "www.".
	linkRE = regexp.MustCompile("(?i)(?:(?:https?|ftp)://|www\\.)[^\\s<>`\"'|\\[\\]()]+")
	// An HTML tag, comment or declaration opening.
	tagRE = regexp.MustCompile(`<([\p{L}/!?])`)
)

// Defang makes untrusted text (a model's title, description or suggestion)
// inert where it is shown as plain text that a renderer or linkifier may
// still act on: check-run and workflow-command annotations, SARIF messages.
//
//   - @-mentions get a zero-width space after the @ (@\u200bname), so they
//     notify no one;
//   - an HTML tag or comment opening gets a zero-width space after the "<",
//     so no markup is recognized ("a < b" is unchanged);
//   - a link that is not under repoURL (the repository's own web address,
//     e.g. https://github.com/acme/widgets; "" for none) is defanged the way
//     security tools quote URLs: hxxps://evil[.]example/x, so no linkifier
//     makes it clickable and a reader still sees where it pointed;
//   - control characters and bidi overrides are dropped (newlines kept).
func Defang(s, repoURL string) string {
	s = sanitize(s, true)
	s = mentionRE.ReplaceAllString(s, "$1@\u200b$2")
	s = tagRE.ReplaceAllString(s, "<\u200b$1")
	return linkRE.ReplaceAllStringFunc(s, func(u string) string {
		if UnderRepo(u, repoURL) {
			return u
		}
		return defangURL(u)
	})
}

// UnderRepo reports whether the URL u is repoURL or under it (compared
// without regard to case). An empty repoURL has nothing under it.
func UnderRepo(u, repoURL string) bool {
	repoURL = strings.TrimSuffix(repoURL, "/")
	if repoURL == "" || len(u) < len(repoURL) || !strings.EqualFold(u[:len(repoURL)], repoURL) {
		return false
	}
	rest := u[len(repoURL):]
	return rest == "" || strings.ContainsRune("/?#", rune(rest[0]))
}

// defangURL is u with its scheme's t's as x's and its host's dots as
// "[.]": hxxps://evil[.]example/path.
func defangURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		scheme, rest = "", u
	} else {
		scheme = strings.NewReplacer("t", "x", "T", "X").Replace(scheme) + "://"
	}
	host, path := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host, path = rest[:i], rest[i:]
	}
	return scheme + strings.ReplaceAll(host, ".", "[.]") + path
}

// The Markdown rules: what GitHub renders in a comment.
var (
	// What GitHub autolinks: an http(s) or ftp URL, or a host starting
	// with "www.".
	mdLinkRE = regexp.MustCompile("(?i)(?:(?:https?|ftp)://|www\\.)[^\\s<>`\"')\\]]+")
	// A link reference definition's label, "[label]:", which would turn a
	// destination such as //evil.example into a link. A label may span
	// lines ("[the\ndocs]:") and hold backslash-escaped brackets
	// ("[a\]b]:"): CommonMark ends it at the first unescaped "]".
	refDefRE = regexp.MustCompile(`\[((?:\\[\s\S]|[^\\\[\]])*)\]:`)
	// A fence opening with the info string "suggestion", which GitHub
	// renders as an applicable change.
	suggestionFenceRE = regexp.MustCompile("(?im)^([ \t>]*(?:`{3,}|~{3,})[ \t]*)suggestion")
)

// Neutralize makes model text safe to render in a GitHub comment:
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
func Neutralize(s, repoURL string) string {
	s = sanitize(s, true)
	s = strings.ReplaceAll(s, "<", "&lt;")
	s = strings.ReplaceAll(s, "![", `!\[`)
	s = strings.ReplaceAll(s, "](", `]\(`)
	s = refDefRE.ReplaceAllString(s, `\[$1]:`)
	s = suggestionFenceRE.ReplaceAllString(s, "${1}text")
	s = mentionRE.ReplaceAllString(s, "$1@\u200b$2")
	s = mdLinkRE.ReplaceAllStringFunc(s, func(u string) string {
		if UnderRepo(u, repoURL) {
			return u
		}
		return InlineCode(u)
	})
	return s
}

// InlineCode wraps s in a code span whose backtick run is longer than any
// inside it.
func InlineCode(s string) string {
	// An HTML comment's opening inside a code span is still in the text
	// GitHub stores: broken with a zero-width space, it can never read as
	// one of warden's hidden records (a file may be named "<!-- ... -->.go").
	s = strings.ReplaceAll(s, "<!--", "<\u200b!--")
	n := longestRun(s, '`') + 1
	ticks := strings.Repeat("`", n)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return ticks + " " + s + " " + ticks
	}
	return ticks + s + ticks
}

// FenceLength is the number of backticks a code fence around s needs: at
// least three, and more than the longest backtick run in s (reviewdog's
// GetCodeFenceLength), so that s cannot close the fence.
func FenceLength(s string) int {
	return max(3, longestRun(s, '`')+1)
}

// Sanitize drops control characters (newlines and tabs kept) and bidi
// overrides from untrusted text: the base of every rule here.
func Sanitize(s string) string { return sanitize(s, true) }
