package github

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// threadFiles is a pull request whose a.go shows new lines 1-12.
func threadFiles(patch string) []fakegithub.File {
	return []fakegithub.File{{Filename: "a.go", Status: "modified", Additions: 12, Patch: patch}}
}

const (
	patchV1 = "@@ -1,1 +1,12 @@\n x\n+l2\n+l3\n+l4\n+l5\n+l6\n+l7\n+l8\n+l9\n+l10\n+l11\n+l12"
	// patchV2: lines 1-5 left the diff (reverted), 6-12 stay.
	patchV2 = "@@ -5,1 +5,8 @@\n x\n+l6\n+l7\n+l8\n+l9\n+l10\n+l11\n+l12"
)

// TestFollowUp: after a push, the thread of a fixed finding is resolved
// with a reply naming the commit; findings dismissed by a command record,
// a trusted thumbs-down or a trusted person resolving the thread are
// suppressed, and stay suppressed after two more pushes; an untrusted
// thumbs-down silences nothing.
func TestFollowUp(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(testOwner, testRepo)
	fake.AddPullRequest(fakegithub.PullRequest{Number: testPR, HeadSHA: testHead, BaseSHA: "base", Files: threadFiles(patchV1),
		OtherSHAs: []string{"2222222222222222222222222222222222222222", "3333333333333333333333333333333333333333"}})
	c := start(t, fake, fakegithub.DefaultToken)
	c.SetStateKey(testStateKey)
	fixed := finding(review.SeverityHigh, "a.go", 2, 2, "fixed later")
	down := finding(review.SeverityHigh, "a.go", 6, 6, "thumbed down")
	resolvedByHand := finding(review.SeverityHigh, "a.go", 7, 7, "resolved by hand")
	dismissed := finding(review.SeverityHigh, "a.go", 8, 8, "dismissed by command")
	kept := finding(review.SeverityHigh, "a.go", 9, 9, "still there")
	untrusted := finding(review.SeverityHigh, "a.go", 10, 10, "thumbed down by the author")
	all := []review.Finding{fixed, down, resolvedByHand, dismissed, kept, untrusted}
	if _, err := c.PostReview(t.Context(), testPR, testHead, all, AnchorsFromFiles(toFiles(threadFiles(patchV1))), ReviewOptions{}); err != nil {
		t.Fatal(err)
	}
	root := map[string]int64{}
	for _, cm := range fake.ReviewComments(testPR) {
		for _, f := range all {
			if strings.Contains(cm.Body, c.marker(f)) {
				root[f.Title] = cm.ID
			}
		}
	}
	fake.AddReaction(fakegithub.OnReviewComment, root[down.Title], fakegithub.Reaction{Content: "-1", User: "alice"})
	fake.AddReaction(fakegithub.OnReviewComment, root[untrusted.Title], fakegithub.Reaction{Content: "-1", User: "mallory"})
	fake.ResolveThread(root[resolvedByHand.Title], "bob")
	fake.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "a.go", Line: 8, Body: "/warden dismiss intended", User: "alice", InReplyTo: root[dismissed.Title]})
	fake.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "a.go", Line: 8, User: "github-actions[bot]", InReplyTo: root[dismissed.Title],
		Body: "Dismissed by @alice: intended. warden will not post it again on this pull request." + c.DismissedMarker(report.Fingerprint(dismissed))})
	trusted := func(login string) bool { return login != "mallory" }

	heads := []string{"2222222222222222222222222222222222222222", "3333333333333333333333333333333333333333", testHead}
	for push, head := range heads {
		// The push reverts lines 1-5: the fixed finding's line left the
		// diff; the model still finds the others.
		fake.AddPullRequest(fakegithub.PullRequest{Number: testPR, HeadSHA: head, BaseSHA: "base", Files: threadFiles(patchV2), OtherSHAs: heads})
		threads, err := c.ReviewThreads(t.Context(), testPR)
		if err != nil {
			t.Fatal(err)
		}
		// The thumbs-downs read with the threads are the REST listing's.
		thumbs := map[int64][]string{}
		for _, th := range threads {
			rest, err := c.ThumbsDown(t.Context(), th.RootID)
			if err != nil {
				t.Fatal(err)
			}
			if !th.ThumbsDownAll || !slices.Equal(th.ThumbsDown, rest) {
				t.Errorf("thread %d: thumbs-downs %q (all %v) with the threads, %q over REST", th.RootID, th.ThumbsDown, th.ThumbsDownAll, rest)
			}
			thumbs[th.RootID] = th.ThumbsDown
		}
		current := []review.Finding{down, resolvedByHand, dismissed, kept, untrusted}
		fu := Follow(threads, current, nil, thumbs, trusted)
		wantSuppressed := map[string]string{
			report.MarkOf(down).String():           SuppressedReaction,
			report.MarkOf(resolvedByHand).String(): SuppressedResolved,
			report.MarkOf(dismissed).String():      SuppressedCommand,
		}
		suppressed := map[string]string{}
		for _, h := range fu.Held {
			if h.Suppressed != "" {
				suppressed[h.Mark.String()] = h.Suppressed
			}
		}
		if diff := cmp.Diff(wantSuppressed, suppressed); diff != "" {
			t.Errorf("push %d: suppressed (-want +got):\n%s", push+1, diff)
		}
		var resolve []string
		for _, th := range fu.Resolve {
			resolve = append(resolve, th.Mark.Fingerprint)
		}
		var want []string
		if push == 0 {
			want = []string{report.Fingerprint(fixed)}
		}
		if !slices.Equal(want, resolve) {
			t.Errorf("push %d: resolve %v, want %v (once, on the first push)", push+1, resolve, want)
		}
		n, note, err := c.ResolveFixed(t.Context(), testPR, fu.Resolve, head)
		if err != nil || note != "" || n != len(want) {
			t.Fatalf("push %d: ResolveFixed = %d, %q, %v", push+1, n, note, err)
		}
		rep := &review.Report{Findings: slices.Clone(current), Summary: review.Summary{Findings: len(current)}}
		if got := len(Suppress(rep, fu.Held)); got != 3 || rep.Summary.Suppressed != 3 || rep.Summary.Findings != 2 {
			t.Errorf("push %d: Suppress = %d, summary %+v; want 3 suppressed, 2 findings", push+1, got, rep.Summary)
		}
	}
	if ok, by := fake.ThreadResolved(root[fixed.Title]); !ok || by != "github-actions[bot]" {
		t.Errorf("fixed finding's thread: resolved %v by %q", ok, by)
	}
	replies := 0
	for _, cm := range fake.ReviewComments(testPR) {
		if cm.InReplyTo == root[fixed.Title] {
			replies++
			if !strings.HasPrefix(cm.Body, "Fixed in 2222222:") {
				t.Errorf("reply %q, want it to name the commit", cm.Body)
			}
		}
	}
	if replies != 1 {
		t.Errorf("%d replies on the fixed thread, want 1", replies)
	}
	for _, f := range []review.Finding{kept, untrusted, down} {
		if ok, _ := fake.ThreadResolved(root[f.Title]); ok {
			t.Errorf("thread of %q was resolved", f.Title)
		}
	}
}

// fixedAfterPush is a fake GitHub whose pull request has one warden
// finding's thread on a.go line 2, posted with a write token, and then a
// push that takes the line out of the diff (patchV2): its thread is
// outdated and the finding fixed.
func fixedAfterPush(t *testing.T) *fakegithub.Server {
	t.Helper()
	fake := fakegithub.New(testOwner, testRepo)
	fake.AddPullRequest(fakegithub.PullRequest{Number: testPR, HeadSHA: testHead, BaseSHA: "base", Files: threadFiles(patchV1)})
	w := start(t, fake, fakegithub.DefaultToken)
	f := finding(review.SeverityHigh, "a.go", 2, 2, "fixed later")
	if _, err := w.PostReview(t.Context(), testPR, testHead, []review.Finding{f}, AnchorsFromFiles(toFiles(threadFiles(patchV1))), ReviewOptions{}); err != nil {
		t.Fatal(err)
	}
	fake.AddPullRequest(fakegithub.PullRequest{Number: testPR, HeadSHA: testHead, BaseSHA: "base", Files: threadFiles(patchV2)})
	return fake
}

// TestResolveFixedWithoutPermission: a read-only token resolves nothing and
// the summary says so; no error.
func TestResolveFixedWithoutPermission(t *testing.T) {
	t.Parallel()
	fake := fixedAfterPush(t)
	ro := start(t, fake, fakegithub.DefaultReadOnlyToken)
	threads, err := ro.ReviewThreads(t.Context(), testPR)
	if err != nil || len(threads) != 1 || !threads[0].Outdated || threads[0].CanResolve {
		t.Fatalf("ReviewThreads = %+v, %v; want one outdated thread the token cannot resolve", threads, err)
	}
	// Even a thread the answer says may be resolved is refused by GitHub.
	threads[0].CanResolve = true
	fu := Follow(threads, nil, nil, nil, func(string) bool { return true })
	n, note, err := ro.ResolveFixed(t.Context(), testPR, fu.Resolve, testHead)
	if err != nil || n != 0 || !strings.Contains(note, "1 fixed finding's thread was not resolved: the token may not resolve review threads") {
		t.Errorf("ResolveFixed = %d, %q, %v; want 0 and a note", n, note, err)
	}
	if err := ro.ResolveThread(t.Context(), threads[0].ID); err == nil || !strings.Contains(err.Error(), "FORBIDDEN") {
		t.Errorf("ResolveThread(read-only) = %v, want FORBIDDEN", err)
	}
	if ok, _ := fake.ThreadResolved(threads[0].RootID); ok {
		t.Errorf("a read-only token resolved the thread")
	}
}

func TestGraphQLURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://api.github.com/":           "https://api.github.com/graphql",
		"https://ghe.example.com/api/v3/":   "https://ghe.example.com/api/graphql",
		"http://127.0.0.1:4000/":            "http://127.0.0.1:4000/graphql",
		"http://127.0.0.1:4000/api/v3":      "http://127.0.0.1:4000/api/graphql",
		"https://proxy.example/github/api/": "https://proxy.example/github/api/graphql",
	} {
		c, err := New(Config{APIURL: in, Token: "t", Owner: "o", Repo: "r"})
		if err != nil {
			t.Fatal(err)
		}
		if got := graphqlURL(c.gh.BaseURL); got != want {
			t.Errorf("graphqlURL(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestHasRecordOnlyOwnSealed: a record counts only sealed, at the end of a
// comment by the login the token posts as; the same record copied by a
// person or by another app on the repository, written unsealed by warden's
// login (any workflow using GITHUB_TOKEN), or quoted inside the text does
// not.
func TestHasRecordOnlyOwnSealed(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(testOwner, testRepo)
	fake.AddPullRequest(fakegithub.PullRequest{Number: testPR, HeadSHA: testHead, BaseSHA: "base"})
	c := start(t, fake, fakegithub.DefaultToken)
	c.SetStateKey(testStateKey)
	const text = "some-record"
	m := c.Mark(text)
	fake.AddIssueComment(testPR, fakegithub.IssueComment{User: "mallory", Body: "copied\n" + m})
	fake.AddIssueComment(testPR, fakegithub.IssueComment{User: "other-app[bot]", Body: "copied\n" + m})
	fake.AddIssueComment(testPR, fakegithub.IssueComment{User: DefaultTokenLogin, Body: "a title-lint workflow\n<!-- warden:" + text + " -->"})
	fake.AddIssueComment(testPR, fakegithub.IssueComment{User: DefaultTokenLogin, Body: "quoted " + m + " in a title"})
	if found, err := c.HasRecord(t.Context(), testPR, text); err != nil || found {
		t.Fatalf("HasRecord with copies, an unsealed record and a quoted one = %v, %v; want false", found, err)
	}
	fake.AddIssueComment(testPR, fakegithub.IssueComment{User: DefaultTokenLogin, Body: "posted\n\n" + m})
	if found, err := c.HasRecord(t.Context(), testPR, text); err != nil || !found {
		t.Fatalf("HasRecord with warden's own sealed record = %v, %v; want true", found, err)
	}
}

// TestResolveFixedReadmePermissions: with the README's permissions
// (contents: read, pull-requests: write) GitHub does not let the token
// resolve a thread, so warden says in the thread, once, that the finding
// is fixed and asks a person to resolve it (a stranger's copy of that reply
// does not stop it); a later run does not say it again; a token with
// contents: write resolves it without another reply.
func TestResolveFixedReadmePermissions(t *testing.T) {
	t.Parallel()
	fake := fixedAfterPush(t)
	readme := start(t, fake, fake.GrantToken(fakegithub.Permissions{"contents": "read", "pull-requests": "write", "checks": "write"}, false))
	// A stranger's copy of warden's reply, marker and all, says nothing
	// for warden: it still replies.
	root := fake.ReviewComments(testPR)[0]
	fake.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "a.go", Line: 2, User: "mallory", InReplyTo: root.ID,
		Body: "Fixed in 0000000: warden no longer finds this on the changed lines.\n\n" + fixedMarker})
	replies := func() []string {
		var out []string
		for _, c := range fake.ReviewComments(testPR) {
			if c.InReplyTo != 0 && c.User == DefaultTokenLogin {
				out = append(out, c.Body)
			}
		}
		return out
	}
	for run := 1; run <= 2; run++ {
		threads, err := readme.ReviewThreads(t.Context(), testPR)
		if err != nil || len(threads) != 1 || threads[0].CanResolve {
			t.Fatalf("run %d: ReviewThreads = %+v, %v; want one thread the token cannot resolve", run, threads, err)
		}
		fu := Follow(threads, nil, nil, nil, func(string) bool { return true })
		n, note, err := readme.ResolveFixed(t.Context(), testPR, fu.Resolve, "abcdef0123456789")
		if err != nil || n != 0 || !strings.Contains(note, "1 fixed finding's thread was not resolved") || !strings.Contains(note, "warden said in that thread that the finding is fixed") {
			t.Errorf("run %d: ResolveFixed = %d, %q, %v", run, n, note, err)
		}
		if got := replies(); len(got) != 1 || !strings.HasPrefix(got[0], "Fixed in abcdef0: ") || !strings.Contains(got[0], "Resolve this thread if you agree") {
			t.Errorf("run %d: replies %q; want one Fixed reply asking a person to resolve", run, got)
		}
		if ok, _ := fake.ThreadResolved(threads[0].RootID); ok {
			t.Fatalf("run %d: a token without contents: write resolved the thread", run)
		}
	}
	full := start(t, fake, fake.GrantToken(fakegithub.Permissions{"contents": "write", "pull-requests": "write"}, false))
	threads, err := full.ReviewThreads(t.Context(), testPR)
	if err != nil || len(threads) != 1 || !threads[0].CanResolve {
		t.Fatalf("ReviewThreads with contents: write = %+v, %v", threads, err)
	}
	fu := Follow(threads, nil, nil, nil, func(string) bool { return true })
	if n, note, err := full.ResolveFixed(t.Context(), testPR, fu.Resolve, "abcdef0123456789"); err != nil || n != 1 || note != "" {
		t.Errorf("ResolveFixed with contents: write = %d, %q, %v; want 1 resolved", n, note, err)
	}
	if ok, _ := fake.ThreadResolved(threads[0].RootID); !ok || len(replies()) != 1 {
		t.Errorf("with contents: write: resolved %v, replies %q; want resolved and no second reply", ok, replies())
	}
}
