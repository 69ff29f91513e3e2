package github

import (
	"testing"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// TestMarkersOnlyFromWarden: a stranger's comment carrying a copy of a
// finding's marker (and a copied dismissal record) changes nothing: the
// finding is still posted, the stranger's thread is not warden's thread
// (a maintainer resolving it drops nothing), and the copied dismissal
// suppresses nothing. The same markers in warden's own comments count.
func TestMarkersOnlyFromWarden(t *testing.T) {
	t.Parallel()
	f := finding(review.SeverityHigh, "a.go", 2, 2, "SQL injection")
	f.Fingerprint, f.Twin = "0123456789abcdef0123456789abcdef", "0123456789abcdef"
	copied := "I think so too\n\n" + marker(f)
	for _, tt := range []struct {
		name, author string
		counts       bool
	}{
		{"a stranger's copy", "mallory", false},
		{"a stranger's copy, as a bot", "evil-app[bot]", false},
		{"warden's own (GITHUB_TOKEN)", "github-actions[bot]", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFake(t)
			root := fake.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "a.go", Line: 2, Side: "RIGHT", Body: copied, User: tt.author})
			fake.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "a.go", Line: 2, Body: "Dismissed. " + DismissedMarker(f.Fingerprint), User: tt.author, InReplyTo: root})
			fake.ResolveThread(root, "alice") // a maintainer resolves it
			c := start(t, fake, fakegithub.DefaultToken)

			threads, err := c.ReviewThreads(t.Context(), testPR)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(threads) == 1; got != tt.counts {
				t.Errorf("ReviewThreads = %d threads; the comment is warden's thread: %v, want %v", len(threads), got, tt.counts)
			}
			fu := Follow(threads, []review.Finding{f}, nil, nil, func(string) bool { return true })
			rep := &review.Report{Findings: []review.Finding{f}}
			if n := len(Suppress(rep, fu.Held)); (n == 1) != tt.counts {
				t.Errorf("Suppress = %d, want the finding suppressed: %v", n, tt.counts)
			}
			res, err := c.PostReview(t.Context(), testPR, testHead, []review.Finding{f}, AnchorsFromFiles(toFiles(testFiles)), ReviewOptions{Body: "b"})
			if err != nil {
				t.Fatal(err)
			}
			if (res.Duplicates == 1) != tt.counts || (res.Posted == 1) == tt.counts {
				t.Errorf("PostReview = %+v; the copied marker deduplicated: %v, want %v", res, res.Duplicates == 1, tt.counts)
			}
		})
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
// the same, the finding is that comment's (no duplicate), and a dismissal
// of that thread holds.
func TestLegacyMarkers(t *testing.T) {
	t.Parallel()
	f := finding(review.SeverityHigh, "a.go", 2, 2, "SQL injection")
	f.Fingerprint, f.Twin = "0123456789abcdef0123456789abcdef", "0123456789abcdef"
	legacy := "<!-- warden:fp:" + report.LegacyFingerprint(f) + " -->"
	fake := newFake(t)
	root := fake.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "a.go", Line: 2, Side: "RIGHT", Body: "**[high] SQL injection**\n\n" + legacy, User: "github-actions[bot]"})
	fake.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "a.go", Line: 2, Body: DismissedMarker(report.LegacyFingerprint(f)), User: "github-actions[bot]", InReplyTo: root})
	c := start(t, fake, fakegithub.DefaultToken)
	threads, err := c.ReviewThreads(t.Context(), testPR)
	if err != nil || len(threads) != 1 || threads[0].Mark.Version != 1 {
		t.Fatalf("ReviewThreads = %+v, %v; want the legacy thread", threads, err)
	}
	fu := Follow(threads, []review.Finding{f}, nil, nil, func(string) bool { return true })
	if n := len(Suppress(&review.Report{Findings: []review.Finding{f}}, fu.Held)); n != 1 {
		t.Errorf("the legacy dismissal suppressed %d findings, want 1", n)
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
