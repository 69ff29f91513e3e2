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
// the comment itself, compressed in a hidden record on the comment's last
// line, sealed under the state key (ghreport.Client.Mark), and read only
// from a comment by warden's own login that ends with it.
//
// Saving merges: the comment is read again just before it is written and
// what another run saved meanwhile (an entry it added, a dismissal it
// confirmed) is kept; after writing, the comment is read once more, and a
// dismissal this run holds that another run's write took away is merged
// back (at most saveRounds times). A confirmed dismissal is never undone.

// ledgerRE reads the ledger's record text.
var ledgerRE = regexp.MustCompile(`^ledger:v1 ([A-Za-z0-9+/=]*)$`)

// dismissalRE reads DismissalRecord's text.
var dismissalRE = regexp.MustCompile(`^ledger-dismissed:v1 id=(w[0-9a-f]{7}) by=([A-Za-z0-9][A-Za-z0-9-]{0,38})$`)

// DismissalRecord is the text of the sealed record that ends warden's reply
// to a `/warden dismiss <id>` (a conversation comment, append-only): what
// makes the dismissal hold whatever happens to the findings comment, whose
// read-modify-write two runs may race. LoadLedger applies every such record
// it finds. ok is false for a login that cannot be recorded.
func DismissalRecord(e LedgerEntry, login string) (text string, ok bool) {
	text = "ledger-dismissed:v1 id=" + e.ID() + " by=" + login
	return text, dismissalRE.MatchString(text)
}

// saveRounds bounds Save's write-and-check rounds.
const saveRounds = 4

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
	// dismissals are the sealed dismissal records found in warden's
	// comments (DismissalRecord): entry id → who.
	dismissals map[string]string
	// sealed is set when the state was read from a sealed record: only
	// then do its dismissals count (Suppressed). An unsealed ledger (an
	// earlier version's, or one written without a state key) is read for
	// what is on the pull request only; its dismissals are not believed.
	sealed bool
}

// LoadLedger reads pull request pr's ledger: the first conversation comment
// by warden's own login (Client.Ours) that ends with the ledger's sealed
// record, else the first that ends with an unsealed one (its dismissals
// are not believed); the record anywhere else, or in anyone else's
// comment, a person's or another app's, is not warden's. None is an empty
// ledger.
func LoadLedger(ctx context.Context, c *ghreport.Client, pr int) (*Ledger, error) {
	l := &Ledger{client: c, pr: pr, repoURL: c.RepoURL()}
	found, err := l.find(ctx)
	if err != nil {
		return nil, err
	}
	if found != nil {
		l.adopt(found)
	}
	l.applyDismissals()
	return l, nil
}

// applyDismissals marks dismissed the entries whose dismissal records find
// read (DismissalRecord).
func (l *Ledger) applyDismissals() {
	for i := range l.state.Entries {
		e := &l.state.Entries[i]
		if by, ok := l.dismissals[e.ID()]; ok && e.State != EntryDismissed {
			e.State, e.By, e.Reason, e.Commit = EntryDismissed, by, "", ""
		}
	}
}

// stored is a ledger comment as GitHub has it.
type stored struct {
	id        int64
	url, body string
	state     ledgerState
	sealed    bool
}

// adopt makes s the ledger's comment and state. With a state key, an
// unsealed state's dismissals are reopened: nothing vouches for them, and
// saving them would seal them. (Without a key nothing is sealed and no
// dismissal counts: Suppressed.)
func (l *Ledger) adopt(s *stored) {
	l.id, l.url, l.body, l.state, l.sealed = s.id, s.url, s.body, s.state, s.sealed
	if !s.sealed && l.client.Sealing() {
		for i := range l.state.Entries {
			if e := &l.state.Entries[i]; e.State == EntryDismissed {
				e.State, e.By, e.Reason = EntryOpen, "", ""
			}
		}
	}
}

// parse reads a comment's ledger: its last line's record.
func (l *Ledger) parse(id int64, url, body string) (*stored, bool) {
	rec, ok := l.client.LastRecord(body)
	if !ok {
		return nil, false
	}
	m := ledgerRE.FindStringSubmatch(rec.Text)
	if m == nil {
		return nil, false
	}
	st, err := decodeState(m[1])
	if err != nil {
		return nil, false // not a state warden wrote
	}
	return &stored{id: id, url: url, body: body, state: st, sealed: rec.Sealed}, true
}

// find lists the pull request's comments for its ledger (LoadLedger's
// rule); nil for none.
func (l *Ledger) find(ctx context.Context) (*stored, error) {
	c, pr := l.client, l.pr
	var sealed, unsealed *stored
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
			if rec, ok := c.LastRecord(ic.GetBody()); ok && rec.Sealed {
				if m := dismissalRE.FindStringSubmatch(rec.Text); m != nil {
					if l.dismissals == nil {
						l.dismissals = map[string]string{}
					}
					l.dismissals[m[1]] = m[2]
				}
			}
			s, ok := l.parse(ic.GetID(), ic.GetHTMLURL(), ic.GetBody())
			switch {
			case !ok:
			case s.sealed && sealed == nil:
				sealed = s
			case unsealed == nil:
				unsealed = s
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if sealed != nil {
		return sealed, nil
	}
	return unsealed, nil
}

// reread reads the ledger's comment as GitHub has it now; nil when it is
// gone or no longer ends with a ledger.
func (l *Ledger) reread(ctx context.Context) (*stored, error) {
	client, owner, repo := l.client.REST()
	// GitHub API docs: https://docs.github.com/rest/issues/comments#get-an-issue-comment
	ic, _, err := client.Issues.GetComment(ctx, owner, repo, l.id)
	if err != nil {
		return nil, l.client.Fail(fmt.Sprintf("read warden's findings comment %d", l.id), false, err)
	}
	s, ok := l.parse(ic.GetID(), ic.GetHTMLURL(), ic.GetBody())
	if !ok {
		return nil, nil
	}
	return s, nil
}

// merge takes into the ledger what another run saved in s: the entries it
// added and the dismissals it confirmed (a dismissal is never undone);
// for an entry both hold, this run's state stands otherwise. With a state
// key only a sealed state is merged.
func (l *Ledger) merge(s *stored) {
	if !l.mergeable(s) {
		return
	}
	at := map[entryKey]int{}
	for i, e := range l.state.Entries {
		at[e.key()] = i
	}
	for _, e := range s.state.Entries {
		i, ok := at[e.key()]
		switch {
		case !ok:
			at[e.key()] = len(l.state.Entries)
			l.state.Entries = append(l.state.Entries, e)
		case e.State == EntryDismissed && l.state.Entries[i].State != EntryDismissed:
			l.state.Entries[i] = e
		}
	}
	known := map[string]bool{}
	for _, fp := range l.state.Known {
		known[fp] = true
	}
	for _, fp := range s.state.Known {
		if !known[fp] {
			known[fp] = true
			l.state.Known = append(l.state.Known, fp)
		}
	}
	if l.state.Head == "" {
		l.state.Head = s.state.Head
	}
	l.bound()
}

// entryKey tells entries apart: a fingerprint and its repeat number.
type entryKey struct {
	fp string
	n  int
}

func (e LedgerEntry) key() entryKey { return entryKey{e.FP, e.N} }

// mergeable reports whether s is a state merge may take from.
func (l *Ledger) mergeable(s *stored) bool {
	return s != nil && (s.sealed || !l.client.Sealing())
}

// missing reports whether s lacks one of the ledger's dismissals or
// entries: another run's write took it away.
func (l *Ledger) missing(s *stored) bool {
	if !l.mergeable(s) {
		return true
	}
	have := map[entryKey]string{}
	for _, e := range s.state.Entries {
		have[e.key()] = e.State
	}
	known := map[string]bool{}
	for _, fp := range s.state.Known {
		known[fp] = true
	}
	for _, e := range l.state.Entries {
		st, ok := have[e.key()]
		switch {
		case !ok && !known[e.FP]:
			return true
		case e.State == EntryDismissed && ok && st != EntryDismissed:
			return true
		}
	}
	return false
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
// (for ghreport.Suppress). A ledger without a state key dismisses nothing:
// its record is not sealed, and anyone posting as warden's login could
// have written it.
func (l *Ledger) Held() []ghreport.Held {
	out := make([]ghreport.Held, 0, len(l.state.Entries)+len(l.state.Known))
	for _, e := range l.state.Entries {
		h := ghreport.Held{Mark: e.Mark()}
		if e.State == EntryDismissed && l.client.Sealing() {
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
// does nothing otherwise. It merges what other runs saved meanwhile (the
// package comment): it reads the pull request's comments again before
// writing (the findings comment, one another run created, the dismissal
// records posted since), and after writing reads them again and merges and
// writes once more while one of this ledger's entries or dismissals is
// missing there.
func (l *Ledger) Save(ctx context.Context, head string) error {
	if len(l.state.Entries) == 0 && l.id == 0 {
		return nil
	}
	if head != "" {
		l.state.Head = head
	}
	for round := 0; ; round++ {
		now, err := l.find(ctx)
		if err != nil {
			return err
		}
		if now != nil && (l.id == 0 || now.id == l.id) {
			l.id, l.url = now.id, now.url
		} else if l.id != 0 {
			// Our comment no longer ends with a ledger warden sealed:
			// read it by id, as GitHub has it.
			if now, err = l.reread(ctx); err != nil {
				return err
			}
		}
		l.applyDismissals()
		if round > 0 && !l.missing(now) {
			return nil
		}
		if round == saveRounds {
			// Other runs kept writing it. What they hold is theirs to
			// write; a dismissal holds by its own record
			// (DismissalRecord), and the next save shows it.
			return nil
		}
		l.merge(now)
		if now != nil {
			l.body = now.body
		}
		if err := l.write(ctx); err != nil {
			return err
		}
	}
}

// write writes the ledger's comment once, when its text changed.
func (l *Ledger) write(ctx context.Context) error {
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
		row := fmt.Sprintf("| `%s` | %s | %s | %s |\n", e.ID(), e.Severity, strings.ReplaceAll(report.InlineCode(where(e)), "|", `\|`), cell(e.Title))
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
	b.WriteString("\n" + l.client.Mark("ledger:v1 "+state) + "\n")
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
