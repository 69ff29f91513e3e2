package secrets

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// HeldRule is the rule of a Match on the value of a key or token warden
// itself holds (a Value).
const HeldRule = "warden-held-value"

// MinHeldLen is the shortest held value that is matched: a shorter one
// (a local model's placeholder key such as "ollama") would match ordinary
// words, and is no secret to speak of.
const MinHeldLen = 8

// Value is a key or token warden holds: Name says where it came from (an
// environment variable, an input), never the value. Its String and
// GoString print the name only.
type Value struct {
	Name  string
	value string
}

// Held returns the Value named name.
func Held(name, value string) Value { return Value{Name: name, value: strings.TrimSpace(value)} }

// Reveal returns the value, for the few places that must hand it on as it
// is: masking it in the runner's log, deriving a key from it.
func (v Value) Reveal() string { return v.value }

// String implements fmt.Stringer without the value.
func (v Value) String() string { return v.Name + "=REDACTED" }

// GoString implements fmt.GoStringer without the value.
func (v Value) GoString() string { return "secrets.Value{" + v.Name + "}" }

// Match is a secret found in a text: the rule that found it and where it
// is, in bytes and in 0-based lines of the text. It never holds the value.
type Match struct {
	// Rule is the gitleaks rule (aws-access-token, private-key, ...), or
	// HeldRule for a value warden holds.
	Rule string
	// Description says what the rule finds; for HeldRule it names the
	// value's source ("the value of OPENROUTER_API_KEY").
	Description string
	// Start and End are the secret's byte offsets in the text: [Start, End).
	Start, End int
	// Line and EndLine are the 0-based lines of Start and of End-1.
	Line, EndLine int
}

// Label is the rule, or for a held value whose value it is: what a
// placeholder and a report say.
func (m Match) Label() string {
	if m.Rule == HeldRule {
		return m.Description
	}
	return m.Rule
}

// Placeholder is what replaces the secret in a prompt.
func (m Match) Placeholder() string { return "[secret withheld: " + m.Label() + "]" }

// Scanner finds secrets in text. It is safe for concurrent use. The zero
// value is not usable: use NewScanner.
type Scanner struct {
	held []Value
}

// NewScanner returns a scanner of the rule set and of the held values
// (those shorter than MinHeldLen, and repeats, are left out).
func NewScanner(held ...Value) *Scanner {
	s := &Scanner{}
	for _, v := range held {
		if len(v.value) >= MinHeldLen && !slices.ContainsFunc(s.held, func(h Value) bool { return h.value == v.value }) {
			s.held = append(s.held, v)
		}
	}
	// Longest first: a value that contains another is matched whole.
	slices.SortStableFunc(s.held, func(a, b Value) int { return cmp.Compare(len(b.value), len(a.value)) })
	return s
}

// Values returns the held values' own texts, for masking them in a log
// (the runner's ::add-mask::). The caller must not print them.
func (s *Scanner) Values() []string {
	out := make([]string, len(s.held))
	for i, v := range s.held {
		out[i] = v.value
	}
	return out
}

// detector is gitleaks' detector with its default (maintained) rule set,
// loaded once: loading goes through viper's global instance, which is not
// safe for concurrent use. Its global path allowlists are dropped (the
// change's author names the files) and inline gitleaks:allow comments are
// ignored (the author writes those too). gitleaks logs through a global
// zerolog logger on standard error, at debug level with the secret it
// found: it is silenced, so that it never writes to warden's output.
var detector = sync.OnceValue(func() *detect.Detector {
	logging.Logger = zerolog.Nop()
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		// The rule set is compiled into the binary: this is a build defect.
		panic(fmt.Sprintf("secrets: gitleaks' default rule set does not load: %v", err))
	}
	for _, a := range d.Config.Allowlists {
		a.Paths = nil
	}
	d.IgnoreGitleaksAllow = true
	return d
})

// Rules is the number of rules in the rule set, for the documentation and
// its test.
func Rules() int { return len(detector().Config.Rules) }

// Scan returns the secrets in text, sorted by position, overlapping ones
// merged: the held values' (matched exactly) and the rule set's. A rule
// that matched text it then decoded, or a secret the rule set reports
// without its exact text, covers its whole lines.
func (s *Scanner) Scan(text string) []Match {
	if text == "" {
		return nil
	}
	lines := newLineStarts(text)
	var ms []Match
	for _, v := range s.held {
		for i := 0; ; {
			j := strings.Index(text[i:], v.value)
			if j < 0 {
				break
			}
			start := i + j
			ms = append(ms, lines.match(HeldRule, "the value of "+v.Name, start, start+len(v.value)))
			i = start + len(v.value)
		}
	}
	for _, f := range detector().DetectString(text) {
		ms = append(ms, lines.found(text, f.RuleID, f.Description, f.Secret, f.StartLine, f.EndLine)...)
	}
	ms = append(ms, keyBlocks(text, lines, ms)...)
	return merge(ms)
}

// lineStarts are the byte offsets at which a text's lines start.
type lineStarts []int

func newLineStarts(text string) lineStarts {
	ls := lineStarts{0}
	for i := range len(text) {
		if text[i] == '\n' {
			ls = append(ls, i+1)
		}
	}
	return ls
}

// line is the 0-based line of byte offset i.
func (ls lineStarts) line(i int) int {
	n, found := slices.BinarySearch(ls, i)
	if found {
		return n
	}
	return n - 1
}

// end is the offset of the end of line n (its "\n", or the text's end).
func (ls lineStarts) end(n int, text string) int {
	if n+1 < len(ls) {
		return ls[n+1] - 1
	}
	return len(text)
}

func (ls lineStarts) match(rule, desc string, start, end int) Match {
	return Match{Rule: rule, Description: desc, Start: start, End: end, Line: ls.line(start), EndLine: ls.line(max(start, end-1))}
}

// found places a gitleaks finding: every occurrence of its secret within
// the lines it names, or those whole lines when the secret's text is not
// there (a decoded value).
func (ls lineStarts) found(text, rule, desc, secret string, first, last int) []Match {
	first, last = max(0, min(first, len(ls)-1)), max(0, min(last, len(ls)-1))
	from, to := ls[first], ls.end(last, text)
	var ms []Match
	if secret != "" {
		for i := from; i < to; {
			j := strings.Index(text[i:to], secret)
			if j < 0 {
				break
			}
			ms = append(ms, ls.match(rule, desc, i+j, i+j+len(secret)))
			i += j + len(secret)
		}
	}
	if len(ms) == 0 {
		ms = append(ms, ls.match(rule, desc, from, to))
	}
	return ms
}

// keyBegin, keyEnd and keyBody find the parts of a PEM private key block:
// its armour lines and the base64 lines between them (bare, or quoted in a
// string literal).
var (
	keyBegin = regexp.MustCompile(`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
	keyEnd   = regexp.MustCompile(`-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
	keyBody  = regexp.MustCompile(`^[\s"'+|]*[A-Za-z0-9+/=]{16,}(?:\\n)?["',;+]*\s*$`)
)

// keyBlocks covers what the rule set's private-key rule cannot see whole:
// a block that the text cuts (a chunk's context window ends inside it),
// from an armour line not already covered through the base64 lines next to
// it, towards the other armour line or the text's edge.
func keyBlocks(text string, ls lineStarts, found []Match) []Match {
	covered := func(i int) bool {
		return slices.ContainsFunc(found, func(m Match) bool { return m.Start <= i && i < m.End })
	}
	var ms []Match
	for _, loc := range keyBegin.FindAllStringIndex(text, -1) {
		if covered(loc[0]) {
			continue
		}
		last := ls.line(loc[0])
		for last+1 < len(ls) && keyBody.MatchString(text[ls[last+1]:ls.end(last+1, text)]) {
			last++
		}
		if last+1 < len(ls) && keyEnd.MatchString(text[ls[last+1]:ls.end(last+1, text)]) {
			last++
		}
		ms = append(ms, ls.match("private-key", "a private key block (cut by the text's edge)", loc[0], ls.end(last, text)))
	}
	for _, loc := range keyEnd.FindAllStringIndex(text, -1) {
		if covered(loc[0]) || slices.ContainsFunc(ms, func(m Match) bool { return m.Start <= loc[0] && loc[0] < m.End }) {
			continue
		}
		first := ls.line(loc[0])
		for first > 0 && keyBody.MatchString(text[ls[first-1]:ls.end(first-1, text)]) {
			first--
		}
		ms = append(ms, ls.match("private-key", "a private key block (cut by the text's edge)", ls[first], loc[1]))
	}
	return ms
}

// merge sorts matches by position and merges those that overlap, keeping
// the first one's rule (the held value's, when one is).
func merge(ms []Match) []Match {
	slices.SortStableFunc(ms, func(a, b Match) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(b.End, a.End), boolOrder(a.Rule == HeldRule, b.Rule == HeldRule))
	})
	out := ms[:0]
	for _, m := range ms {
		if n := len(out); n > 0 && m.Start < out[n-1].End {
			if m.End > out[n-1].End {
				out[n-1].End, out[n-1].EndLine = m.End, m.EndLine
			}
			continue
		}
		out = append(out, m)
	}
	return slices.Clip(out)
}

// boolOrder puts true first.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}
