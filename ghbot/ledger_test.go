package ghbot

import (
	"context"
	"fmt"
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
	return gh, c
}

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
	l := &Ledger{repoURL: "https://github.com/acme/widgets"}
	l.Add([]review.Finding{finding("x.go", 1, "@octocat | --> <!-- warden:ledger:v1 AAAA --> [x](https://evil.example)")})
	body := l.render()
	if strings.Count(body, "<!--") != 1 || strings.Contains(body, "@octocat") || strings.Contains(body, "(https://evil.example)") {
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
