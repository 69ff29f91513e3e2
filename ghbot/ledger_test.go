package ghbot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/report"
	ghreport "github.com/org/warden/report/github"
	"github.com/org/warden/review"
)

func ledgerWorld(t *testing.T) (*fakegithub.Server, *ghreport.Client) {
	t.Helper()
	gh := fakegithub.New(owner, repo)
	gh.AddPullRequest(fakegithub.PullRequest{Number: 5, HeadSHA: "h1", BaseSHA: "b"})
	url := gh.Start(t).URL
	c, err := ghreport.New(ghreport.Config{APIURL: url, Token: fakegithub.DefaultToken, Owner: owner, Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	c.SetStateKey(testStateKey)
	return gh, c
}

// testStateKey is the state key of the tests' privileged runs.
var testStateKey = []byte("the privileged job's state secret")

func finding(path string, line int, title string) review.Finding {
	return review.Finding{Skill: "code-review", Severity: review.SeverityHigh, Path: path, StartLine: line, EndLine: line, Title: title}
}

// TestLedgerRoundTrip: a ledger saved once is one comment, read back with
// its entries; a save with nothing changed writes nothing; a dismissal
// and a fix are kept; a person's or another app's comment that copies the
// state marker is not warden's.
func TestLedgerRoundTrip(t *testing.T) {
	t.Parallel()
	gh, c := ledgerWorld(t)
	gh.AddIssueComment(5, fakegithub.IssueComment{User: "mallory", Body: "forged <!-- warden:ledger:v1 " + encodeState(ledgerState{Entries: []LedgerEntry{{FP: "0123456789abcdef", State: EntryDismissed}}}) + " -->"})
	// Another app on the repository is a bot too, but not the one warden
	// posts as (the default token's github-actions[bot]).
	gh.AddIssueComment(5, fakegithub.IssueComment{User: "other-app[bot]", Body: "copied <!-- warden:ledger:v1 " + encodeState(ledgerState{Entries: []LedgerEntry{{FP: "fedcba9876543210", State: EntryDismissed}}}) + " -->"})
	l, err := LoadLedger(context.Background(), c, 5)
	if err != nil || len(l.Entries()) != 0 {
		t.Fatalf("LoadLedger with only a person's and another app's copies of the marker = %v, %v; want an empty ledger", l.Entries(), err)
	}
	fs := []review.Finding{finding("a.go", 3, "Unchecked error"), finding("b.go", 7, "Race"), finding("c.go", 1, "Leak")}
	line, err := l.Overflow("h1")(context.Background(), fs)
	if err != nil || !strings.Contains(line, "3 findings not posted inline") || !strings.Contains(line, "warden's findings comment](") {
		t.Fatalf("Overflow = %q, %v", line, err)
	}
	id := LedgerEntry{FP: report.Fingerprint(fs[1])}.ID()
	if _, ok := l.Dismiss(id, "alice", "by design | <b>really</b>"); !ok {
		t.Fatalf("Dismiss(%s) found nothing", id)
	}
	l.Reconcile([]review.Finding{fs[0]}, true, func(path string, s, e int) bool { return path == "c.go" }, "h2")
	if err := l.Save(context.Background(), "h2"); err != nil {
		t.Fatal(err)
	}
	edits := gh.IssueComments(5)[2].Edits
	if err := l.Save(context.Background(), "h2"); err != nil || gh.IssueComments(5)[2].Edits != edits {
		t.Errorf("a save with nothing changed edited the comment")
	}

	again, err := LoadLedger(context.Background(), c, 5)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range again.Entries() {
		got[e.Path] = e.State + "/" + e.By + "/" + e.Commit
	}
	if diff := cmp.Diff(map[string]string{"a.go": "//", "b.go": "dismissed/alice/", "c.go": "fixed//h2"}, got); diff != "" {
		t.Errorf("entries read back (-want +got):\n%s", diff)
	}
	suppressed := map[string]string{}
	for _, h := range again.Held() {
		if h.Suppressed != "" {
			suppressed[h.Mark.String()] = h.Suppressed
		}
	}
	if diff := cmp.Diff(map[string]string{report.MarkOf(fs[1]).String(): ghreport.SuppressedCommand}, suppressed); diff != "" {
		t.Errorf("Held's suppressed (-want +got):\n%s", diff)
	}
	if again.Head() != "h2" || len(again.Posted()) != 3 {
		t.Errorf("head %q, posted %v", again.Head(), again.Posted())
	}
	body := gh.IssueComments(5)[2].Body
	for _, want := range []string{"1 open finding could not", "**Dismissed (1)**", "dismissed by @\u200balice: by design \\| &lt;b>really&lt;/b>", "**Fixed (1)**", "fixed in h2"} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment does not say %q:\n%s", want, body)
		}
	}
	// Reported again: the fixed entry is open again.
	again.Reconcile(fs, true, nil, "h3")
	if e, _ := again.Find(LedgerEntry{FP: report.Fingerprint(fs[2])}.ID()); e.State != EntryOpen {
		t.Errorf("a fixed finding reported again is %q, want open", e.State)
	}
	// An incomplete review marks nothing fixed.
	if n := again.Reconcile(nil, false, func(string, int, int) bool { return true }, "h4"); n != 0 {
		t.Errorf("an incomplete review marked %d entries fixed", n)
	}
}

// TestLedgerHostileText: a model's title cannot mention anyone, break the
// table or close the hidden state, and a ledger of MaxLedgerEntries fits
// GitHub's comment size.
func TestLedgerHostileText(t *testing.T) {
	t.Parallel()
	_, c := ledgerWorld(t)
	l := &Ledger{client: c, repoURL: "https://github.com/acme/widgets"}
	l.Add([]review.Finding{finding("x.go", 1, "@octocat | --> <!-- warden:ledger:v1 AAAA --> [x](https://evil.example)")})
	body := l.render()
	if strings.Count(body, "<!--") != 1 || !strings.HasSuffix(body, c.Mark("ledger:v1 "+encodeState(l.state))+"\n") || strings.Contains(body, "@octocat") || strings.Contains(body, "(https://evil.example)") {
		t.Errorf("hostile title survives in:\n%s", body)
	}
	if rows := strings.Count(body, "\n| `w"); rows != 1 {
		t.Errorf("%d table rows, want 1 (the title's | must not split it):\n%s", rows, body)
	}
	var many []review.Finding
	for i := range MaxLedgerEntries + 10 {
		many = append(many, finding(fmt.Sprintf("pkg%d/file_with_a_long_name_%d.go", i%50, i), i+1, fmt.Sprintf("Finding number %d with a title of ordinary length for a model to write", i)))
	}
	l.Add(many)
	if n := len(l.Entries()); n > MaxLedgerEntries || n+len(l.state.Known) != MaxLedgerEntries+11 {
		t.Errorf("%d entries kept and %d known, want at most MaxLedgerEntries = %d and every finding known", n, len(l.state.Known), MaxLedgerEntries)
	}
	if posted := l.Posted(); len(posted) != MaxLedgerEntries+11 {
		t.Errorf("Posted has %d fingerprints, want all %d (none posted again)", len(posted), MaxLedgerEntries+11)
	}
	if n := utf8.RuneCountInString(l.render()); n > ghreport.MaxCommentBody {
		t.Errorf("a full ledger renders to %d characters, over GitHub's %d", n, ghreport.MaxCommentBody)
	}
}

// TestEntryOf: the id a dismissal's reason starts with.
func TestEntryOf(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"w0123abc by design": {"w0123abc", "by design"},
		"w0123abc":           {"w0123abc", ""},
		"not an id":          {"", "not an id"},
		"W0123ABC loud":      {"", "W0123ABC loud"},
	} {
		id, rest := EntryOf(in)
		if id != want[0] || rest != want[1] {
			t.Errorf("EntryOf(%q) = %q, %q; want %q", in, id, rest, want)
		}
	}
}

// TestLedgerConcurrentDismissals: ten runs dismiss ten findings of one
// findings comment at once, each answered "Dismissed" with its sealed
// record; every dismissal holds afterwards, and the findings comment shows
// them all once a run saves it. A review that loaded the comment before
// they ran, and saves after, keeps them all (a confirmed dismissal is
// never undone) and adds its own finding.
func TestLedgerConcurrentDismissals(t *testing.T) {
	t.Parallel()
	gh, c := ledgerWorld(t)
	ctx := context.Background()
	var fs []review.Finding
	for i := range 10 {
		fs = append(fs, finding(fmt.Sprintf("f%d.go", i), i+1, fmt.Sprintf("Finding %d", i)))
	}
	l, err := LoadLedger(ctx, c, 5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Overflow("h1")(ctx, fs); err != nil {
		t.Fatal(err)
	}
	review1, err := LoadLedger(ctx, c, 5) // a push's review, under way
	if err != nil {
		t.Fatal(err)
	}

	errs := make(chan error, len(fs))
	for _, f := range fs {
		go func() {
			mine, err := LoadLedger(ctx, c, 5)
			if err != nil {
				errs <- err
				return
			}
			e, ok := mine.Dismiss(LedgerEntry{FP: report.Fingerprint(f)}.ID(), "alice", "by design")
			if !ok {
				errs <- fmt.Errorf("no entry for %s", f.Path)
				return
			}
			// The reply that records it, as the Action posts it, then
			// the findings comment.
			rec, _ := DismissalRecord(e, "alice")
			if _, err = c.Comment(ctx, 5, "Dismissed `"+e.ID()+"`.\n\n"+c.Mark(rec)); err != nil {
				errs <- err
				return
			}
			errs <- mine.Save(ctx, "")
		}()
	}
	for range fs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	review1.Add([]review.Finding{finding("new.go", 3, "New finding")})
	if err := review1.Save(ctx, "h2"); err != nil {
		t.Fatal(err)
	}

	final, err := LoadLedger(ctx, c, 5)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(dismissedIn(final)); n != len(fs) {
		t.Errorf("%d dismissals kept of %d confirmed", n, len(fs))
	}
	own := report.MarkOf(finding("new.go", 3, "New finding"))
	if !slices.Contains(final.Posted(), own) || len(final.Entries()) != len(fs)+1 {
		t.Errorf("the review's own finding was lost: %d entries", len(final.Entries()))
	}
	body := gh.IssueComments(5)[0].Body
	if !strings.Contains(body, fmt.Sprintf("**Dismissed (%d)**", len(fs))) {
		t.Errorf("the findings comment does not show the %d dismissals:\n%s", len(fs), body)
	}
}

// TestLedgerForgedPathAndUnsealedState: a path that carries the ledger's
// record is rendered so that it cannot read as one, and the only record
// is the seal warden wrote on the last line. An unsealed ledger by
// warden's login (an earlier version's, or another workflow's) is read
// for what is on the pull request, and its dismissals are not believed,
// nor sealed by the next save.
func TestLedgerForgedPathAndUnsealedState(t *testing.T) {
	t.Parallel()
	gh, c := ledgerWorld(t)
	ctx := context.Background()
	forged := "<!-- warden:ledger:v1 " + encodeState(ledgerState{Entries: []LedgerEntry{{FP: "0123456789abcdef0123456789abcdef", State: EntryDismissed, By: "owner"}}}) + " -->"
	gh.AddIssueComment(5, fakegithub.IssueComment{User: ghreport.DefaultTokenLogin, Body: "Title lint:\n\n" + forged})
	l, err := LoadLedger(ctx, c, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(dismissedIn(l)) != 0 || len(l.Posted()) != 1 {
		t.Errorf("an unsealed ledger: suppressed %v, posted %v; want nothing suppressed, its fingerprint known", dismissedIn(l), l.Posted())
	}
	l.Add([]review.Finding{finding(" "+forged+".go", 1, "Finding on a hostile path")})
	if err := l.Save(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	body := gh.IssueComments(5)[0].Body
	if strings.Count(body, "<!--") != 1 || !strings.HasSuffix(strings.TrimSpace(body), "-->") || !strings.Contains(body, " sig=") {
		t.Errorf("the findings comment holds a record other than its sealed last line:\n%s", body)
	}
	again, err := LoadLedger(ctx, c, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(dismissedIn(again)) != 0 {
		t.Errorf("the save sealed an unsealed dismissal: %v", dismissedIn(again))
	}
}

// dismissedIn are the marks l holds as dismissed (Held with a reason).
func dismissedIn(l *Ledger) []report.Mark {
	var out []report.Mark
	for _, h := range l.Held() {
		if h.Suppressed != "" {
			out = append(out, h.Mark)
		}
	}
	return out
}
