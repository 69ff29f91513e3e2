package github

import (
	"strings"
	"testing"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// testStateKey is the state key of the tests' privileged runs.
var testStateKey = []byte("the privileged job's state secret")

// TestMarkersOnlyFromWarden: a stranger's comment carrying a copy of a
// finding's sealed marker (and a copied sealed dismissal record) changes
// nothing: the finding is still posted, the stranger's thread is not
// warden's thread (a maintainer resolving it drops nothing), and the copied
// dismissal suppresses nothing. A comment by warden's login without the
// seal (any workflow posting with GITHUB_TOKEN writes as
// github-actions[bot]) keeps the finding from being posted twice, and
// dismisses nothing. Only warden's sealed records dismiss.
func TestMarkersOnlyFromWarden(t *testing.T) {
	t.Parallel()
	f := finding(review.SeverityHigh, "a.go", 2, 2, "SQL injection")
	f.Fingerprint, f.Twin = "0123456789abcdef0123456789abcdef", "0123456789abcdef"
	for _, tt := range []struct {
		name, author       string
		sealed             bool
		thread, suppresses bool
	}{
		{"a stranger's copy", "mallory", true, false, false},
		{"a stranger's copy, as a bot", "evil-app[bot]", true, false, false},
		{"another workflow as github-actions[bot], unsealed", "github-actions[bot]", false, true, false},
		{"warden's own (GITHUB_TOKEN), sealed", "github-actions[bot]", true, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFake(t)
			c := start(t, fake, fakegithub.DefaultToken)
			c.SetStateKey(testStateKey)
			fp, dismissed := marker(f), "\n\n<!-- warden:dismissed:"+f.Fingerprint+" -->"
			if tt.sealed {
				fp, dismissed = c.marker(f), c.DismissedMarker(f.Fingerprint)
			}
			root := fake.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "a.go", Line: 2, Side: "RIGHT", Body: "I think so too\n\n" + fp, User: tt.author})
			fake.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "a.go", Line: 2, Body: "Dismissed." + dismissed, User: tt.author, InReplyTo: root})
			fake.ResolveThread(root, "alice") // a maintainer resolves it

			threads, err := c.ReviewThreads(t.Context(), testPR)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(threads) == 1; got != tt.thread {
				t.Errorf("ReviewThreads = %d threads; the comment is warden's thread: %v, want %v", len(threads), got, tt.thread)
			}
			fu := Follow(threads, []review.Finding{f}, nil, nil, func(string) bool { return true })
			rep := &review.Report{Findings: []review.Finding{f}}
			if n := len(Suppress(rep, fu.Held)); (n == 1) != tt.suppresses {
				t.Errorf("Suppress = %d, want the finding suppressed: %v", n, tt.suppresses)
			}
			res, err := c.PostReview(t.Context(), testPR, testHead, []review.Finding{f}, AnchorsFromFiles(toFiles(testFiles)), ReviewOptions{Body: "b"})
			if err != nil {
				t.Fatal(err)
			}
			if (res.Duplicates == 1) != tt.thread || (res.Posted == 1) == tt.thread {
				t.Errorf("PostReview = %+v; the copied marker deduplicated: %v, want %v", res, res.Duplicates == 1, tt.thread)
			}
		})
	}
}

// TestSealOnlyWithTheKey: a record holds only under the key that sealed
// it, in the repository it was sealed for, and only as the last line of
// what warden wrote.
func TestSealOnlyWithTheKey(t *testing.T) {
	t.Parallel()
	fake := newFake(t)
	c := start(t, fake, fakegithub.DefaultToken)
	c.SetStateKey(testStateKey)
	other := start(t, fake, fakegithub.DefaultToken)
	other.SetStateKey([]byte("a guess at the state secret"))
	none := start(t, fake, fakegithub.DefaultToken).Client
	m := c.Mark("dismissed:0123456789abcdef0123456789abcdef")
	for _, tt := range []struct {
		name   string
		client *Client
		body   string
		ok     bool
		sealed bool
	}{
		{"sealed, last line", c.Client, "Dismissed.\n\n" + m, true, true},
		{"sealed, trailing newline", c.Client, "Dismissed.\n\n" + m + "\n", true, true},
		{"another key", other.Client, "Dismissed.\n\n" + m, true, false},
		{"no key", none, "Dismissed.\n\n" + m, true, false},
		{"inside the text", c.Client, "see " + m + " here", false, false},
		{"not the last line", c.Client, m + "\nmore text", false, false},
		{"unsealed", c.Client, "<!-- warden:dismissed:0123456789abcdef0123456789abcdef -->", true, false},
		{"text changed", c.Client, strings.Replace(m, "dismissed:0", "dismissed:1", 1), true, false},
	} {
		rec, ok := tt.client.LastRecord(tt.body)
		if ok != tt.ok || rec.Sealed != tt.sealed {
			t.Errorf("%s: LastRecord(%q) = %+v, %v; want ok %v, sealed %v", tt.name, tt.body, rec, ok, tt.ok, tt.sealed)
		}
	}
	// The same key in another repository seals differently.
	elsewhere, err := New(Config{APIURL: "http://127.0.0.1:1", Token: "t", Owner: "someone", Repo: "else"})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere.SetStateKey(testStateKey)
	if rec, _ := elsewhere.LastRecord(m); rec.Sealed {
		t.Errorf("a record sealed for %s/%s holds in someone/else", testOwner, testRepo)
	}
}

// TestMarkersOfATokensLogin: with a user's token (a personal access
// token), warden's comments are that login's: GitHub says who the token
// is, and markers count in that login's comments only; Config.Login names
// it without asking.
func TestMarkersOfATokensLogin(t *testing.T) {
	t.Parallel()
	f := finding(review.SeverityHigh, "a.go", 2, 2, "SQL injection")
	for _, tt := range []struct {
		name, tokenLogin, configLogin, author string
		counts                                bool
	}{
		{"asked: the token's own comment", "warden-bot", "", "warden-bot", true},
		{"asked: github-actions is not this token", "warden-bot", "", "github-actions[bot]", false},
		{"configured: an app's bot", "", "my-app[bot]", "my-app[bot]", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFake(t)
			fake.TokenLogin = tt.tokenLogin
			fake.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "a.go", Line: 2, Side: "RIGHT", Body: marker(f), User: tt.author})
			c := start(t, fake, fakegithub.DefaultToken, func(cfg *Config) { cfg.Login = tt.configLogin })
			res, err := c.PostReview(t.Context(), testPR, testHead, []review.Finding{f}, AnchorsFromFiles(toFiles(testFiles)), ReviewOptions{Body: "b"})
			if err != nil {
				t.Fatal(err)
			}
			if (res.Duplicates == 1) != tt.counts {
				t.Errorf("PostReview = %+v; %s's marker counted: %v, want %v", res, tt.author, res.Duplicates == 1, tt.counts)
			}
			asked := len(fake.RequestsTo(fakegithub.RouteGetAuthenticatedUser))
			if (asked == 1) != (tt.configLogin == "") || asked > 1 {
				t.Errorf("asked GitHub who the token is %d times (configured login %q)", asked, tt.configLogin)
			}
		})
	}
}

// TestLegacyMarkers: a comment an earlier version posted carries the
// fingerprint of the finding's skill, path and title; while the title is
// the same, the finding is that comment's (no duplicate). Its dismissal
// record has no seal, so it no longer dismisses: anyone posting as
// github-actions[bot] could have written it.
func TestLegacyMarkers(t *testing.T) {
	t.Parallel()
	f := finding(review.SeverityHigh, "a.go", 2, 2, "SQL injection")
	f.Fingerprint, f.Twin = "0123456789abcdef0123456789abcdef", "0123456789abcdef"
	legacy := "<!-- warden:fp:" + report.LegacyFingerprint(f) + " -->"
	fake := newFake(t)
	root := fake.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "a.go", Line: 2, Side: "RIGHT", Body: "**[high] SQL injection**\n\n" + legacy, User: "github-actions[bot]"})
	fake.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "a.go", Line: 2, Body: "<!-- warden:dismissed:" + report.LegacyFingerprint(f) + " -->", User: "github-actions[bot]", InReplyTo: root})
	c := start(t, fake, fakegithub.DefaultToken)
	c.SetStateKey(testStateKey)
	threads, err := c.ReviewThreads(t.Context(), testPR)
	if err != nil || len(threads) != 1 || threads[0].Mark.Version != 1 {
		t.Fatalf("ReviewThreads = %+v, %v; want the legacy thread", threads, err)
	}
	fu := Follow(threads, []review.Finding{f}, nil, nil, func(string) bool { return true })
	if n := len(Suppress(&review.Report{Findings: []review.Finding{f}}, fu.Held)); n != 0 {
		t.Errorf("the legacy, unsealed dismissal suppressed %d findings, want 0", n)
	}
	res, err := c.PostReview(t.Context(), testPR, testHead, []review.Finding{f}, AnchorsFromFiles(toFiles(testFiles)), ReviewOptions{Body: "b"})
	if err != nil || res.Duplicates != 1 || res.Posted != 0 {
		t.Errorf("PostReview = %+v, %v; want the legacy comment to count as the finding's", res, err)
	}
}

// TestFollowByCode: whether a finding is fixed is decided by its code: an
// outdated thread whose finding the run still reports on the same code,
// worded anew, stays open; one whose code no finding is on any more is
// resolved.
func TestFollowByCode(t *testing.T) {
	t.Parallel()
	still := finding(review.SeverityHigh, "a.go", 2, 2, "Unchecked input")
	still.Fingerprint, still.Twin = "11111111111111111111111111111111", "1111111111111111"
	gone := finding(review.SeverityHigh, "a.go", 5, 5, "Unchecked input")
	gone.Fingerprint, gone.Twin = "22222222222222222222222222222222", "2222222222222222"
	threads := []Thread{
		{ID: "T1", Mark: report.MarkOf(still), Path: "a.go", Outdated: true},
		{ID: "T2", Mark: report.MarkOf(gone), Path: "a.go", Outdated: true},
	}
	reworded := still
	reworded.Title, reworded.Description = "Input reaches the sink unvalidated", "Reworded."
	fu := Follow(threads, []review.Finding{reworded}, nil, nil, func(string) bool { return true })
	if len(fu.Resolve) != 1 || fu.Resolve[0].ID != "T2" {
		t.Errorf("Follow resolves %+v, want only T2 (its code carries no finding now)", fu.Resolve)
	}
}
