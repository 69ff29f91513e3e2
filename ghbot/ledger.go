package ghbot

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"github.com/org/warden/report"
	ghreport "github.com/org/warden/report/github"
	"github.com/org/warden/review"
)

// The findings ledger: warden's one comment in a pull request's
// conversation that holds the findings that could not be inline comments
// (GitHub takes DefaultMaxComments in one review, and only on lines of the
// diff). Every run edits the same comment: a finding in it is never posted
// again (its fingerprint counts as on the pull request), a person dismisses
// one with `/warden dismiss <id>` in the conversation, and a run that no
// longer finds one whose lines changed marks it fixed. Its state travels in
// the comment itself, compressed in a hidden marker that only warden's own
// comment (a bot's) is read for.

// ledgerRE finds the ledger's state marker.
var ledgerRE = regexp.MustCompile(`<!-- warden:ledger:v1 ([A-Za-z0-9+/=]*) -->`)

// EntryIDRE is a ledger entry's id as commands name it.
var EntryIDRE = regexp.MustCompile(`^w[0-9a-f]{7}$`)

// Ledger bounds. GitHub allows 65,536 characters in a comment; the hidden
// state takes what it needs (at most maxStateChars) and the visible list
// the rest. MaxLedgerEntries findings are kept with their details (the
// oldest fixed and dismissed ones give way first, then the oldest open
// ones); past them a finding keeps only its fingerprint (MaxKnown of
// them), which is enough never to post it again.
const (
	MaxLedgerEntries = 300
	MaxKnown         = 1000
	maxStateChars    = 40000
)

// Entry states.
const (
	EntryOpen      = ""
	EntryDismissed = "dismissed"
	EntryFixed     = "fixed"
)

// LedgerEntry is one finding in the ledger.
type LedgerEntry struct {
	// FP, Twin and V are the finding's mark (report.Mark): its
	// fingerprint, its twin and the rule's version, 0 for an entry an
	// earlier version wrote (FP is then version 2's, and there is no
	// twin).
	FP       string `json:"fp"`
	Twin     string `json:"tw,omitempty"`
	V        int    `json:"v,omitempty"`
	Severity string `json:"sev"`
	Skill    string `json:"skill,omitempty"`
	Path     string `json:"path"`
	Start    int    `json:"s,omitempty"`
	End      int    `json:"e,omitempty"`
	Title    string `json:"t"`
	State    string `json:"st,omitempty"`
	// N tells apart the ids of findings with the same fingerprint (the
	// same problem on identical code twice in a file): 0 for the first.
	N int `json:"n,omitempty"`
	// By and Reason: who dismissed it and why; Commit: where it was fixed.
	By     string `json:"by,omitempty"`
	Reason string `json:"why,omitempty"`
	Commit string `json:"at,omitempty"`
}

// ID is the entry's id: "w" and the first seven characters of its
// finding's fingerprint (of the fingerprint and N for a repeat).
func (e LedgerEntry) ID() string {
	fp := e.FP
	if e.N > 0 {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s:%d", e.FP, e.N)))
		fp = hex.EncodeToString(sum[:])
	}
	return "w" + fp[:min(7, len(fp))]
}

// Mark is the entry's finding's mark.
func (e LedgerEntry) Mark() report.Mark {
	if e.V == 0 {
		return report.Mark{Version: 2, Fingerprint: e.FP}
	}
	return report.Mark{Version: e.V, Fingerprint: e.FP, Twin: e.Twin}
}

type ledgerState struct {
	// Head is the pull request's head when the ledger was last written:
	// entries' lines are at it.
	Head    string        `json:"head"`
	Entries []LedgerEntry `json:"entries"`
	// Known are the marks of findings past MaxLedgerEntries, oldest
	// first: on the pull request, not listed. Each is a mark's String, or
	// a fingerprint alone an earlier version wrote (knownMark).
	Known []string `json:"known,omitempty"`
}

// Ledger is a pull request's findings comment, loaded, changed and saved.
// Not safe for concurrent use.
type Ledger struct {
	client  *ghreport.Client
	pr      int
	repoURL string
	id      int64
	url     string
	state   ledgerState
	body    string // as GitHub has it
}

// LoadLedger reads pull request pr's ledger: the first conversation comment
// by warden's own login (Client.Ours) that carries the ledger's state
// marker; the same marker in anyone else's comment, a person's or another
// app's, is not warden's. None is an empty ledger.
func LoadLedger(ctx context.Context, c *ghreport.Client, pr int) (*Ledger, error) {
	l := &Ledger{client: c, pr: pr, repoURL: c.RepoURL()}
	client, owner, repo := c.REST()
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for page := 0; page < 50; page++ {
		// GitHub API docs: https://docs.github.com/rest/issues/comments#list-issue-comments
		cs, resp, err := client.Issues.ListComments(ctx, owner, repo, pr, opts)
		if err != nil {
			return nil, c.Fail(fmt.Sprintf("list the comments of pull request #%d", pr), false, err)
		}
		for _, ic := range cs {
			ours, err := c.Ours(ctx, ic.GetUser().GetLogin())
			if err != nil {
				return nil, err
			}
			if !ours {
				continue
			}
			m := ledgerRE.FindStringSubmatch(ic.GetBody())
			if m == nil {
				continue
			}
			st, err := decodeState(m[1])
			if err != nil {
				continue // not a state warden wrote; a later one may be
			}
			l.id, l.url, l.state, l.body = ic.GetID(), ic.GetHTMLURL(), st, ic.GetBody()
			return l, nil
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return l, nil
}

func decodeState(s string) (ledgerState, error) {
	var st ledgerState
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return st, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return st, err
	}
	data, err := io.ReadAll(io.LimitReader(zr, 8<<20))
	if err != nil {
		return st, err
	}
	err = json.Unmarshal(data, &st)
	st.Entries = slices.DeleteFunc(st.Entries, func(e LedgerEntry) bool { return len(e.FP) < 7 })
	return st, err
}

func encodeState(st ledgerState) string {
	data, _ := json.Marshal(st)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// Entries returns the ledger's entries.
func (l *Ledger) Entries() []LedgerEntry { return slices.Clone(l.state.Entries) }

// knownMark reads an entry of Known: a mark's String, or a fingerprint
// alone, which an earlier version wrote (version 2's, as its entries'
// FP).
func knownMark(s string) report.Mark {
	if m, ok := report.ParseMark(s); ok && m.Version == 3 {
		return m
	}
	return report.Mark{Version: 2, Fingerprint: s}
}

// Posted are the marks of every finding the ledger holds, in any state,
// one each: none of them is posted inline again.
func (l *Ledger) Posted() []report.Mark {
	out := make([]report.Mark, 0, len(l.state.Entries)+len(l.state.Known))
	for _, e := range l.state.Entries {
		out = append(out, e.Mark())
	}
	for _, s := range l.state.Known {
		out = append(out, knownMark(s))
	}
	return out
}

// Held are every finding the ledger holds, the dismissed ones with why
// (for ghreport.Suppress).
func (l *Ledger) Held() []ghreport.Held {
	out := make([]ghreport.Held, 0, len(l.state.Entries)+len(l.state.Known))
	for _, e := range l.state.Entries {
		h := ghreport.Held{Mark: e.Mark()}
		if e.State == EntryDismissed {
			h.Suppressed = ghreport.SuppressedCommand
		}
		out = append(out, h)
	}
	for _, s := range l.state.Known {
		out = append(out, ghreport.Held{Mark: knownMark(s)})
	}
	return out
}

// Add records findings as open entries: each that no finding the ledger
// holds is (report.Match, so a mark held n times stands for n findings,
// as review comments' markers do).
func (l *Ledger) Add(fs []review.Finding) {
	held := l.Posted()
	taken := make([]bool, len(fs))
	for _, i := range report.Match(held, fs) {
		if i >= 0 {
			taken[i] = true
		}
	}
	same := map[string]int{} // entries by fingerprint, for N
	for _, m := range held {
		same[m.Fingerprint]++
	}
	for i, f := range fs {
		if taken[i] {
			continue
		}
		m := report.MarkOf(f)
		start, end := f.StartLine, max(f.StartLine, f.EndLine)
		l.state.Entries = append(l.state.Entries, LedgerEntry{
			FP: m.Fingerprint, Twin: m.Twin, V: m.Version, N: same[m.Fingerprint],
			Severity: f.Severity.String(), Skill: f.Skill, Path: f.Path, Start: start, End: end,
			Title: clip(report.OneLine(f.Title), 200),
		})
		same[m.Fingerprint]++
	}
	l.bound()
}

// bound keeps the state within MaxLedgerEntries, MaxKnown and
// maxStateChars.
func (l *Ledger) bound() {
	if n := len(l.state.Entries) - MaxLedgerEntries; n > 0 {
		l.trim(n)
	}
	for len(encodeState(l.state)) > maxStateChars && len(l.state.Entries) > 0 {
		l.trim(max(1, len(l.state.Entries)/10))
	}
	if n := len(l.state.Known) - MaxKnown; n > 0 {
		l.state.Known = l.state.Known[n:]
	}
}

// trim moves n entries to Known: closed ones (fixed, then dismissed)
// oldest first, then the newest open ones (the least severe of a batch:
// the list keeps the most severe). A dismissed finding moved to Known is
// no longer suppressed by its dismissal (a rare loss past
// MaxLedgerEntries).
func (l *Ledger) trim(n int) {
	for _, state := range []string{EntryFixed, EntryDismissed} {
		l.state.Entries = slices.DeleteFunc(l.state.Entries, func(e LedgerEntry) bool {
			if n > 0 && e.State == state {
				n--
				l.state.Known = append(l.state.Known, e.known())
				return true
			}
			return false
		})
	}
	for i := len(l.state.Entries) - 1; i >= 0 && n > 0; i-- {
		if e := l.state.Entries[i]; e.State == EntryOpen {
			l.state.Known = append(l.state.Known, e.known())
			l.state.Entries = slices.Delete(l.state.Entries, i, i+1)
			n--
		}
	}
}

// known is the entry as Known keeps it (knownMark reads it back).
func (e LedgerEntry) known() string {
	if e.V == 0 {
		return e.FP
	}
	return e.Mark().String()
}

// Find returns the entry whose id is id.
func (l *Ledger) Find(id string) (LedgerEntry, bool) {
	i := slices.IndexFunc(l.state.Entries, func(e LedgerEntry) bool { return e.ID() == id })
	if i < 0 {
		return LedgerEntry{}, false
	}
	return l.state.Entries[i], true
}

// Dismiss marks the entry id dismissed by login, with reason.
func (l *Ledger) Dismiss(id, login, reason string) (LedgerEntry, bool) {
	i := slices.IndexFunc(l.state.Entries, func(e LedgerEntry) bool { return e.ID() == id })
	if i < 0 {
		return LedgerEntry{}, false
	}
	e := &l.state.Entries[i]
	e.State, e.By, e.Reason, e.Commit = EntryDismissed, login, clip(reason, 200), ""
	return *e, true
}

// Reconcile follows up the ledger after a review of head: an open entry
// the review no longer reports, whose lines changed since the ledger's
// head (changed, given the entry's path and lines at it), is fixed at
// head, but only when the review was complete (an unfinished one proves
// nothing fixed); a fixed entry the review reports again is open again.
// An entry's finding is the one of current its mark is (report.Match over
// the open and fixed entries: current holds no dismissed finding, which
// ghreport.Suppress left out). It returns how many it marked fixed.
func (l *Ledger) Reconcile(current []review.Finding, complete bool, changed func(path string, start, end int) bool, head string) int {
	var marks []report.Mark
	var which []int // entry of each mark
	for i, e := range l.state.Entries {
		if e.State != EntryDismissed {
			marks, which = append(marks, e.Mark()), append(which, i)
		}
	}
	now := make([]bool, len(l.state.Entries))
	for k, j := range report.Match(marks, current) {
		now[which[k]] = j >= 0
	}
	fixed := 0
	for i := range l.state.Entries {
		e := &l.state.Entries[i]
		switch {
		case e.State == EntryFixed && now[i]:
			e.State, e.Commit = EntryOpen, ""
		case e.State == EntryOpen && complete && !now[i] && changed != nil && changed(e.Path, e.Start, e.End):
			e.State, e.Commit = EntryFixed, head
			fixed++
		}
	}
	return fixed
}

// Overflow is report/github's ReviewOptions.Overflow: it adds fs to the
// ledger, saves it, and returns the review body's line pointing to it.
func (l *Ledger) Overflow(head string) func(ctx context.Context, fs []review.Finding) (string, error) {
	return func(ctx context.Context, fs []review.Finding) (string, error) {
		l.Add(fs)
		if err := l.Save(ctx, head); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s not posted inline (GitHub takes %d inline comments in one review, on lines of the diff only) %s in [warden's findings comment](%s), which later runs update.",
			review.Counted(len(fs), "finding", "findings"), ghreport.DefaultMaxComments, review.Plural(len(fs), "is", "are"), l.url), nil
	}
}

// Save writes the ledger at head: it creates the comment when there is
// none and the ledger has entries, edits it when its text changed, and
// does nothing otherwise.
func (l *Ledger) Save(ctx context.Context, head string) error {
	if len(l.state.Entries) == 0 && l.id == 0 {
		return nil
	}
	if head != "" {
		l.state.Head = head
	}
	body := l.render()
	if body == l.body {
		return nil
	}
	client, owner, repo := l.client.REST()
	ic := &gh.IssueComment{Body: gh.String(body)}
	if l.id == 0 {
		// GitHub API docs: https://docs.github.com/rest/issues/comments#create-an-issue-comment
		c, _, err := client.Issues.CreateComment(ctx, owner, repo, l.pr, ic)
		if err != nil {
			return l.client.Fail(fmt.Sprintf("create warden's findings comment on pull request #%d", l.pr), true, err)
		}
		l.id, l.url = c.GetID(), c.GetHTMLURL()
	} else {
		// GitHub API docs: https://docs.github.com/rest/issues/comments#update-an-issue-comment
		if _, _, err := client.Issues.EditComment(ctx, owner, repo, l.id, ic); err != nil {
			return l.client.Fail(fmt.Sprintf("edit warden's findings comment %d", l.id), true, err)
		}
	}
	l.body = body
	return nil
}

// Head is the head the ledger's lines are at ("" for a new ledger).
func (l *Ledger) Head() string { return l.state.Head }

// render is the comment's Markdown: the open findings as a table, the
// dismissed and fixed ones below, the state marker last, within GitHub's
// size. Model text is neutralized.
func (l *Ledger) render() string {
	state := encodeState(l.state)
	budget := ghreport.MaxCommentBody - len(state) - 600
	var open, closed []LedgerEntry
	for _, e := range l.state.Entries {
		if e.State == EntryOpen {
			open = append(open, e)
		} else {
			closed = append(closed, e)
		}
	}
	var b strings.Builder
	b.WriteString("## warden: findings not posted inline\n\n")
	fmt.Fprintf(&b, "%s could not be inline review comments (GitHub takes %d in one review, and only on lines of the diff). warden keeps them here, in this one comment, which every run updates: none is posted again. To dismiss one, comment `/warden dismiss <id> [reason]` on this pull request.\n\n",
		review.Counted(len(open), "open finding", "open findings"), ghreport.DefaultMaxComments)
	if len(open) > 0 {
		b.WriteString("| id | severity | where | finding |\n| --- | --- | --- | --- |\n")
	}
	cell := func(s string) string { return strings.ReplaceAll(report.Neutralize(s, l.repoURL), "|", `\|`) }
	for i, e := range open {
		row := fmt.Sprintf("| `%s` | %s | %s | %s |\n", e.ID(), e.Severity, report.InlineCode(where(e)), cell(e.Title))
		if b.Len()+len(row) > budget {
			fmt.Fprintf(&b, "\n…and %s more, all in the check run's annotations and the report.\n", review.Counted(len(open)-i, "finding", "findings"))
			break
		}
		b.WriteString(row)
	}
	for _, group := range []struct{ state, title string }{{EntryDismissed, "Dismissed"}, {EntryFixed, "Fixed"}} {
		var es []LedgerEntry
		for _, e := range closed {
			if e.State == group.state {
				es = append(es, e)
			}
		}
		if len(es) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n**%s (%d)**\n\n", group.title, len(es))
		for i, e := range es {
			line := fmt.Sprintf("- `%s` %s — %s\n", e.ID(), cell(e.Title), closedWhy(e, l.repoURL))
			if b.Len()+len(line) > budget {
				fmt.Fprintf(&b, "- …and %d more\n", len(es)-i)
				break
			}
			b.WriteString(line)
		}
	}
	if n := len(l.state.Known); n > 0 {
		fmt.Fprintf(&b, "\n%s more %s not listed here (this comment lists at most %d); %s in the check run's annotations and the report, and not posted again.\n",
			review.Count(n), review.Plural(n, "finding is", "findings are"), MaxLedgerEntries, review.Plural(n, "it is", "they are"))
	}
	fmt.Fprintf(&b, "\n<!-- warden:ledger:v1 %s -->\n", state)
	return b.String()
}

func where(e LedgerEntry) string {
	if e.Start <= 0 {
		return e.Path
	}
	if e.End > e.Start {
		return fmt.Sprintf("%s:%d-%d", e.Path, e.Start, e.End)
	}
	return fmt.Sprintf("%s:%d", e.Path, e.Start)
}

func closedWhy(e LedgerEntry, repoURL string) string {
	if e.State == EntryFixed {
		return "fixed in " + e.Commit[:min(7, len(e.Commit))]
	}
	s := "dismissed by @\u200b" + e.By
	if e.Reason != "" {
		s += ": " + strings.ReplaceAll(report.Neutralize(e.Reason, repoURL), "|", `\|`)
	}
	return s
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// EntryOf is the ledger entry id a dismissal names, when it names one: the
// first word of a `/warden dismiss` reason that looks like an id.
func EntryOf(reason string) (id, rest string) {
	first, rest, _ := strings.Cut(strings.TrimSpace(reason), " ")
	if EntryIDRE.MatchString(first) {
		return first, strings.TrimSpace(rest)
	}
	return "", reason
}
