package review

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/org/warden/hunks"
	"github.com/org/warden/related"
	"github.com/org/warden/secrets"
)

// SecretsSkill is the skill name of the findings warden makes itself, with
// no model call, for secrets in the change (Plan.Own).
const SecretsSkill = "secrets"

// Redaction is one place where a secret was replaced by a placeholder in
// what a review sends to models; it never holds the secret.
type Redaction struct {
	// Path is the file the lines are in; "" for the pull request's title
	// or description.
	Path      string `json:"path"`
	StartLine int    `json:"start_line,omitempty"`
	EndLine   int    `json:"end_line,omitempty"`
	// Rule is the rule that found it (secrets.Match.Label).
	Rule string `json:"rule"`
	// Where is what the lines were: "added" (the secret is also a
	// finding), "context", "removed", "related" (context beyond the hunk),
	// "pull request" or "instructions" (the repository's, Path naming
	// their source).
	Where string `json:"where"`
}

// guard keeps secrets out of a plan's requests: it replaces each one by a
// placeholder in the chunks, the context beyond them and the pull
// request's text, and makes a finding of each secret on an added line.
type guard struct {
	scanner  *secrets.Scanner
	findings []Finding
	redacted []Redaction
	seen     map[Finding]bool
	// names are the files of the change the plan withheld as secrets by
	// the name they had before the change renamed them, by their new
	// path (which says nothing by itself), with their kind.
	names map[string]string
}

func newGuard(s *secrets.Scanner) *guard {
	if s == nil {
		s = secrets.NewScanner()
	}
	return &guard{scanner: s, seen: map[Finding]bool{}, names: map[string]string{}}
}

// viewLine is one line of a chunk as its request shows it.
type viewLine struct {
	text *string // where the line's text is, to write the redacted text back
	op   hunks.Op
	line int // new-side line; old-side for a removed line
}

// chunk replaces, in c, every secret by its placeholder (with fresh line
// slices: the diff's own lines are not touched) and records what it did.
func (g *guard) chunk(c *hunks.Chunk) {
	c.Before, c.Lines, c.After = slices.Clone(c.Before), slices.Clone(c.Lines), slices.Clone(c.After)
	var view []viewLine
	for i := range c.Before {
		view = append(view, viewLine{&c.Before[i].Text, hunks.Context, c.Before[i].Line})
	}
	for i, l := range c.Lines {
		n := l.NewLine
		if l.Op == hunks.Delete {
			n = l.OldLine
		}
		view = append(view, viewLine{&c.Lines[i].Text, l.Op, n})
	}
	for i := range c.After {
		view = append(view, viewLine{&c.After[i].Text, hunks.Context, c.After[i].Line})
	}
	g.lines(c.Path, "", view, true)
}

// withheld makes the findings of a file that is a secret by its name (it
// is not sent anywhere, so nothing is redacted): kind is its
// secrets.Withheld kind.
func (g *guard) withheld(f *hunks.File, kind string) {
	var view []viewLine
	for _, fr := range f.Fragments {
		for i, l := range fr.Lines {
			if l.Op != hunks.Delete {
				view = append(view, viewLine{&fr.Lines[i].Text, l.Op, l.NewLine})
			}
		}
	}
	g.lines(f.Path(), kind, view, false)
}

// lines scans view, writes the redacted text back when redact is set,
// and makes a finding of each secret on an added line.
func (g *guard) lines(path, kind string, view []viewLine, redact bool) {
	texts := make([]string, len(view))
	for i, v := range view {
		texts[i] = *v.text
	}
	text := strings.Join(texts, "\n")
	ms := g.scanner.Scan(text)
	if len(ms) == 0 {
		return
	}
	if redact {
		for i, t := range strings.Split(secrets.Redact(text, ms), "\n") {
			*view[i].text = t
		}
	}
	for _, m := range ms {
		first, last, where := 0, 0, ""
		for _, v := range view[m.Line : m.EndLine+1] {
			switch {
			case v.op == hunks.Add:
				first, last, where = cmpMin(first, v.line), max(last, v.line), "added"
			case where == "" && v.op == hunks.Delete:
				where = "removed"
			case where == "" || where == "removed":
				where = "context"
			}
		}
		if redact {
			g.redacted = append(g.redacted, Redaction{Path: path, StartLine: view[m.Line].line, EndLine: view[m.EndLine].line, Rule: m.Label(), Where: where})
		}
		if where == "added" {
			g.find(path, kind, first, last, m)
		}
	}
}

// cmpMin is the smaller of a and b, where 0 means unset.
func cmpMin(a, b int) int {
	if a == 0 {
		return b
	}
	return min(a, b)
}

// find records the finding of a secret on the added lines first..last of
// path, once.
func (g *guard) find(path, kind string, first, last int, m secrets.Match) {
	what := fmt.Sprintf("Line %d of %s holds", first, path)
	if last > first {
		what = fmt.Sprintf("Lines %d-%d of %s hold", first, last, path)
	}
	source := fmt.Sprintf("gitleaks' rule %s: %s", m.Rule, strings.TrimSuffix(m.Description, "."))
	if m.Rule == secrets.HeldRule {
		source = m.Description + ", a key or token warden itself holds"
	}
	sent := "warden did not send it to any model: the request has a placeholder instead."
	if kind != "" {
		sent = fmt.Sprintf("The file is a secret by its name (%s), so warden withheld all of it from the models.", kind)
	}
	f := Finding{
		Skill: SecretsSkill, Severity: SeverityHigh, Path: path, StartLine: first, EndLine: last,
		Title: "Secret in the change: " + m.Label(),
		Description: fmt.Sprintf("%s a secret (%s). %s Remove it from the change and rotate it: once pushed, it stays in the branch's history. Load it from the environment or a secret store instead.",
			what, source, sent),
	}
	if !g.seen[f] {
		g.seen[f] = true
		g.findings = append(g.findings, f)
	}
}

// text returns s with its secrets replaced, recording where they were.
func (g *guard) text(s, path, where string, line int) string {
	ms := g.scanner.Scan(s)
	for _, m := range ms {
		r := Redaction{Path: path, Rule: m.Label(), Where: where}
		if line > 0 {
			r.StartLine, r.EndLine = line+m.Line, line+m.EndLine
		}
		g.redacted = append(g.redacted, r)
	}
	return secrets.Redact(s, ms)
}

// change returns the pull request's text with its secrets replaced.
func (g *guard) change(c Change) Change {
	return Change{Title: g.text(c.Title, "", "pull request", 0), Body: g.text(c.Body, "", "pull request", 0)}
}

// context replaces the secrets in the context beyond a chunk.
func (g *guard) context(cx *related.Context) {
	if cx == nil {
		return
	}
	for i := range cx.Parts {
		p := &cx.Parts[i]
		if kind := cmp.Or(secrets.Withheld(p.Path), g.names[p.Path]); kind != "" {
			p.Text = "[file withheld: a secret by its name (" + kind + ")]\n"
			continue
		}
		p.Text = g.text(p.Text, p.Path, "related", p.StartLine)
	}
}

// renamed records the files of withheld (the plan's, Plan.Withheld) that
// are secrets by the name they had before the change renamed or copied
// them (hunks.WithheldBy), whose new path says nothing: the context beyond
// a chunk withholds them too. It returns their old names by new path.
func (g *guard) renamed(withheld []*hunks.File) map[string]string {
	from := map[string]string{}
	for _, f := range withheld {
		if kind, name := hunks.WithheldBy(f); name != f.Path() {
			from[f.Path()], g.names[f.Path()] = name, kind
		}
	}
	return from
}

// withheldFindings are the findings of the files of the change that the
// plan withheld as secrets by their names (reason "secret:<kind>").
func withheldFindings(files []*hunks.File, ignored []hunks.Ignored, s *secrets.Scanner) []Finding {
	g := newGuard(s)
	byPath := map[string]*hunks.File{}
	for _, f := range files {
		byPath[f.Path()] = f
	}
	for _, ig := range ignored {
		if kind, ok := strings.CutPrefix(ig.Reason, "secret:"); ok && byPath[ig.Path] != nil {
			g.withheld(byPath[ig.Path], kind)
		}
	}
	return g.findings
}
