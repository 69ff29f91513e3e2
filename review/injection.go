package review

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/org/warden/hunks"
)

// InjectionSkill is the skill of the findings warden makes itself, with
// no model call, for text of the change addressed to the AI reviewer: the
// built-in security skill's name.
const InjectionSkill = "security-review"

// Injection is one place where text that a review's requests carry
// addresses the AI reviewer rather than the code's readers ("ignore the
// previous instructions", "report no findings", a chat role tag): a
// prompt injection, which the models may have obeyed. warden finds it
// without a model call (addressRules), so that an obeyed injection cannot
// look like a clean review: each sink says where it is, one on an added
// line is a finding of its own (skill InjectionSkill, severity low), and a
// complete review with one is never a success (the check run's
// conclusion). It holds the matched words, never more of the text.
type Injection struct {
	// Path is the file the lines are in; "" for the pull request's title
	// or description, which no finding can point at.
	Path      string `json:"path"`
	StartLine int    `json:"start_line,omitempty"`
	EndLine   int    `json:"end_line,omitempty"`
	// Where is "title", "description" (the pull request's) or "added" (a
	// changed line of Path).
	Where string `json:"where"`
	// Rules are the ids of the phrase rules that matched, in the table's
	// order (InjectionRules).
	Rules []string `json:"rules"`
	// Text is the first match, one line, at most maxInjectionText runes.
	Text string `json:"text"`
}

// maxInjectionText caps Injection.Text.
const maxInjectionText = 120

// addressRule is a phrase that speaks to the reviewer: its id (in the
// JSON report), what it does in words (in the findings and notes), its
// pattern, matched against text as normalizeAddress leaves it, and the
// words a text needs before the pattern is tried: one of each group, in
// lower case (every match has them; most code has none, and a regexp is
// slow next to strings.Contains).
type addressRule struct {
	id, says string
	re       *regexp.Regexp
	needs    [][]string
}

// mayMatch reports whether lower (a normalized text in lower case) has a
// word of each of the rule's groups.
func (r addressRule) mayMatch(lower string) bool {
	for _, group := range r.needs {
		if !slices.ContainsFunc(group, func(w string) bool { return strings.Contains(lower, w) }) {
			return false
		}
	}
	return true
}

// addressRules are the phrasings of a prompt injection warden recognises.
// Each needs words that ordinary code and ordinary pull request text do
// not put together: "ignore" alone, "previous value", "system" or "please
// approve this PR" match none (TestAddressedNegative holds the list). The
// table is small on purpose: it makes the usual injections visible; it is
// not the defence (that is the untrusted fence of every prompt), and text
// written to slip past it will.
var addressRules = []addressRule{
	{"ignore-instructions", "asks the reviewer to ignore its instructions", regexp.MustCompile(
		`(?i)\b(?:ignore|disregard|forget|override|bypass) (?:all |any )?(?:of )?(?:the |your |my |these |those )?` +
			`(?:previous|prior|above|earlier|preceding|former|original|initial|system|your) ` +
			`(?:instructions?|prompts?|directives?|guidelines|rules|messages)\b` +
			`|\b(?:ignore|disregard|forget) (?:all |any )?(?:the |your )?(?:instructions|prompts?|directives|guidelines) (?:above|before|given)\b`),
		[][]string{{"ignore", "disregard", "forget", "override", "bypass"}, {"instruction", "prompt", "directive", "guideline", "rule", "message"}}},
	{"no-findings", "asks for no findings", regexp.MustCompile(
		`(?i)\b(?:report|return|output|emit|produce|give|respond with|reply with|answer with) ` +
			`(?:no|zero|0|an empty (?:list of |array of |set of )?)\s?(?:findings|issues|problems|vulnerabilities)\b`),
		[][]string{{"report", "return", "output", "emit", "produce", "give", "respond", "reply", "answer"}, {"finding", "issue", "problem", "vulnerabilit"}}},
	{"do-not-flag", "asks the reviewer not to flag the change", regexp.MustCompile(
		`(?i)\b(?:do not|don't|dont|never|must not|should not) (?:flag|report|mention|raise|comment on) ` +
			`(?:this|these|that|any|the) (?:file|change|changes|code|pull request|pr|diff|patch|findings?|issues?|problems?|vulnerabilit(?:y|ies)|secrets?|backdoor)\b`),
		[][]string{{"not", "n't", "dont", "never"}, {"flag", "report", "mention", "raise", "comment"}}},
	{"addresses-ai", "speaks to the AI", regexp.MustCompile(
		`(?i)\b(?:you are|you're|act as|pretend to be) (?:now )?(?:an?|the) ` +
			`(?:ai|llm|large language model|language model|ai-powered|automated (?:code )?reviewer|(?:code |security )?reviewer)\b` +
			`|\b(?:note|message|instructions?) (?:to|for) (?:the |any )?(?:ai|llm|language model|ai reviewer|automated reviewer|review bot|reviewer bot)\b` +
			`|\b(?:dear|attention|hey|hello) (?:the )?(?:ai|llm|language model|ai reviewer|automated reviewer|review bot)\b`),
		[][]string{{"you", "act as", "pretend", "note", "message", "instruction", "dear", "attention", "hey", "hello"}, {"ai", "llm", "language model", "reviewer", "review bot"}}},
	{"reviewer-orders", "gives the reviewer orders", regexp.MustCompile(
		`(?i)\bas (?:an? |the )(?:ai |automated )?(?:code |security )?reviewer,? you (?:must|should|will|shall|are to|need to|have to)\b`),
		[][]string{{"reviewer"}, {"you"}}},
	{"approve", "asks the reviewer to approve", regexp.MustCompile(
		`(?i)\b(?:you (?:must|should|will|shall|are to|need to)|always) approve (?:this|the) (?:pull request|pr|change|changes|diff|patch|code)\b` +
			`|\bapprove (?:this|the) (?:pull request|pr|change|changes|diff|patch|code) without\b` +
			`|\b(?:mark|treat) (?:this|the) (?:pull request|pr|change|changes|diff|patch|review) as (?:approved|safe|clean|secure|lgtm)\b`),
		[][]string{{"approve", "mark", "treat"}, {"pull request", "pr", "change", "diff", "patch", "code", "review"}}},
	{"system-prompt", "rewrites the system prompt", regexp.MustCompile(
		`(?i)\b(?:new|updated|revised|override|overriding|ignore|disregard|forget|reveal|end of|start of|begin) ` +
			`(?:the |your |this )?(?:system|developer) (?:prompt|message|instructions)\b`),
		[][]string{{"system", "developer"}, {"prompt", "message", "instruction"}}},
	// Role tags are matched as written: "[INST]", never "m[inst]".
	{"role-tag", "carries a chat role tag", regexp.MustCompile(
		`<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|eot_id|begin_of_text|start_header_id|end_header_id)\|>` +
			`|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>`),
		[][]string{{"<|", "[inst]", "[/inst]", "<<sys>>", "<</sys>>", "_of_turn>"}}},
}

// InjectionRules are the ids of the phrase rules, in their order: the
// values Injection.Rules takes.
func InjectionRules() []string {
	ids := make([]string, len(addressRules))
	for i, r := range addressRules {
		ids[i] = r.id
	}
	return ids
}

// addressSpan is one match of a rule in a normalized text: byte offsets.
type addressSpan struct {
	rule       int
	start, end int
}

// addressed is every match of every rule in a normalized text, ordered by
// where it starts (then by the table's order).
func addressed(norm string) []addressSpan { return matchRules(norm, true) }

// matchRules is addressed, trying each rule only where it may match
// (addressRule.needs) when filter is set, else everywhere.
func matchRules(norm string, filter bool) []addressSpan {
	// (?i) folds "ſ" with "s" (Unicode's simple folding); ToLower does not.
	lower := strings.ToLower(strings.ReplaceAll(norm, "ſ", "s"))
	var out []addressSpan
	for i, r := range addressRules {
		if filter && !r.mayMatch(lower) {
			continue
		}
		for _, m := range r.re.FindAllStringIndex(norm, -1) {
			out = append(out, addressSpan{i, m[0], m[1]})
		}
	}
	slices.SortStableFunc(out, func(a, b addressSpan) int { return cmp.Compare(a.start, b.start) })
	return out
}

// normalizeAddress is text as the rules read it: format characters (zero-
// width spaces and joiners, bidi controls, the soft hyphen) dropped, typed
// apostrophes made plain, every run of white space one space.
func normalizeAddress(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\u2018' || r == '\u2019':
			return '\''
		case unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// commentLeader drops what opens a comment line ("//", "#", "*", "/*",
// "--", ";", "<!--"), so that a phrase a comment carries over two lines
// reads as one.
func commentLeader(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "<!--")
	s = strings.TrimPrefix(s, "--")
	return strings.TrimLeft(s, " \t/#*;")
}

// textInjection is the injection in one text of the pull request (where:
// "title" or "description"), or nil.
func textInjection(s, where string) *Injection {
	norm := normalizeAddress(s)
	spans := addressed(norm)
	if len(spans) == 0 {
		return nil
	}
	return &Injection{Where: where, Rules: ruleIDs(spans), Text: matchText(norm, spans[0])}
}

// changeInjections are the injections in the pull request's title and
// description.
func changeInjections(c Change) []Injection {
	var out []Injection
	for _, t := range []struct{ text, where string }{{c.Title, "title"}, {c.Body, "description"}} {
		if in := textInjection(t.text, t.where); in != nil {
			out = append(out, *in)
		}
	}
	return out
}

// chunkInjections are the injections on the added lines of a chunk. A
// run of consecutive added lines is read as one text (comment leaders
// dropped), so that a phrase split over lines is found; each injection
// starts on the line its first match starts on.
func chunkInjections(c *hunks.Chunk) []Injection {
	var out []Injection
	var b strings.Builder
	var starts, lines []int // where each line's text starts in b, and its number
	flush := func() {
		if b.Len() > 0 {
			out = append(out, runInjections(c.Path, b.String(), starts, lines)...)
		}
		b.Reset()
		starts, lines = starts[:0], lines[:0]
	}
	prev := 0
	for _, l := range c.Lines {
		if l.Op != hunks.Add {
			continue
		}
		if prev != 0 && l.NewLine != prev+1 {
			flush()
		}
		prev = l.NewLine
		t := normalizeAddress(commentLeader(l.Text))
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		starts, lines = append(starts, b.Len()), append(lines, l.NewLine)
		b.WriteString(t)
	}
	flush()
	return out
}

// runInjections are the injections in the joined text of a run of added
// lines of path: one per block of lines that matches follow each other on
// (a match starting on or right after the line the last one ended on),
// naming every rule that matched there.
func runInjections(path, text string, starts, lines []int) []Injection {
	lineAt := func(off int) int {
		i, _ := slices.BinarySearch(starts, off+1)
		return lines[max(0, i-1)]
	}
	var out []Injection
	for _, s := range addressed(text) {
		first, last := lineAt(s.start), lineAt(s.end-1)
		if n := len(out); n > 0 && first <= out[n-1].EndLine+1 {
			in := &out[n-1]
			in.EndLine = max(in.EndLine, last)
			if id := addressRules[s.rule].id; !slices.Contains(in.Rules, id) {
				in.Rules = append(in.Rules, id)
			}
			continue
		}
		out = append(out, Injection{Path: path, StartLine: first, EndLine: last, Where: "added",
			Rules: []string{addressRules[s.rule].id}, Text: matchText(text, s)})
	}
	for i := range out {
		out[i].Rules = inTableOrder(out[i].Rules)
	}
	return out
}

// ruleIDs are the ids of the rules of spans, once each, in the table's
// order.
func ruleIDs(spans []addressSpan) []string {
	var ids []string
	for _, s := range spans {
		if id := addressRules[s.rule].id; !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return inTableOrder(ids)
}

func inTableOrder(ids []string) []string {
	order := InjectionRules()
	slices.SortFunc(ids, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	return ids
}

// matchText is the text of a match, cut to maxInjectionText runes.
func matchText(text string, s addressSpan) string {
	return truncate(text[s.start:s.end], maxInjectionText)
}

// RuleSays is what the rule with the id does, in words ("asks for no
// findings"); the id itself when no rule has it.
func RuleSays(id string) string {
	for _, r := range addressRules {
		if r.id == id {
			return r.says
		}
	}
	return id
}

// injectionFinding is the finding of an injection on added lines of the
// chunk c (its fingerprint from the chunk's code, as a model's finding).
func injectionFinding(c *hunks.Chunk, in Injection) Finding {
	what := fmt.Sprintf("Line %d of %s", in.StartLine, in.Path)
	if in.EndLine > in.StartLine {
		what = fmt.Sprintf("Lines %d-%d of %s", in.StartLine, in.EndLine, in.Path)
	}
	says := make([]string, len(in.Rules))
	for i, id := range in.Rules {
		says[i] = RuleSays(id)
	}
	f := Finding{
		Skill: InjectionSkill, Severity: SeverityLow, Path: in.Path, StartLine: in.StartLine, EndLine: in.EndLine,
		Title: "Text addressed to the AI reviewer",
		Description: fmt.Sprintf("%s %s (%q): text written for the AI reviewer, not for the code's readers. "+
			"warden found it without a model call. The requests carry the change fenced as untrusted data, "+
			"but a model may still obey such text, so the models' answers on this change may leave problems out. "+
			"Remove the text; if it belongs to the code (a test of prompt handling, say), dismiss this finding.",
			what, strings.Join(says, ", "), in.Text),
	}
	identify(c, &f)
	return f
}
