package github

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	gh "github.com/google/go-github/v62/github"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

func finding(sev review.Severity, path string, start, end int, title string) review.Finding {
	return review.Finding{Skill: "bugs", Severity: sev, Title: title, Description: "Because " + title + ".", Path: path, StartLine: start, EndLine: end}
}

// posted returns every body the fake holds for the pull request: review
// bodies and comment bodies.
func posted(fake *fakegithub.Server) string {
	var b strings.Builder
	for _, r := range fake.Reviews(testPR) {
		b.WriteString(r.Body + "\n")
	}
	for _, c := range fake.ReviewComments(testPR) {
		b.WriteString(c.Body + "\n")
	}
	return b.String()
}

// checkNoneLost fails unless every finding's marker is on the pull request.
func checkNoneLost(t *testing.T, fake *fakegithub.Server, fs []review.Finding) {
	t.Helper()
	all := posted(fake)
	for _, f := range fs {
		if !strings.Contains(all, marker(f)) {
			t.Errorf("finding %q (%s:%d) is nowhere on the pull request", f.Title, f.Path, f.StartLine)
		}
	}
}

type placed struct {
	Path            string
	StartLine, Line int
	Side            string
	Suggestion      bool
	Title           string
}

func placements(fake *fakegithub.Server) []placed {
	var out []placed
	for _, c := range fake.ReviewComments(testPR) {
		title, _, _ := strings.Cut(c.Body, "\n")
		out = append(out, placed{c.Path, c.StartLine, c.Line, c.Side, strings.Contains(c.Body, "suggestion\n"), title})
	}
	return out
}

func TestPostReviewPlacesFindings(t *testing.T) {
	t.Parallel()
	c := start(t, newFake(t), fakegithub.DefaultToken)
	withSuggestion := finding(review.SeverityHigh, "a.go", 2, 4, "exact range")
	withSuggestion.Suggestion = "b2\nc2\nd2\n"
	partly := finding(review.SeverityHigh, "./a.go", 5, 8, "partly in the diff")
	partly.Suggestion = "never applied"
	fs := []review.Finding{
		withSuggestion,
		finding(review.SeverityMedium, "a.go", 24, 0, "one line"),
		finding(review.SeverityLow, "a.go", 10, 12, "between hunks"),
		partly,
		finding(review.SeverityInfo, "a.go", 1, 1, "below report-on"),
		finding(review.SeverityMedium, "big.bin", 1, 1, "no patch"),
		finding(review.SeverityMedium, "c.go", 1, 1, "not in the pull request"),
		finding(review.SeverityCritical, "b.go", 0, 0, "no line"),
	}
	res, err := c.PostReview(t.Context(), testPR, testHead, fs, AnchorsFromFiles(toFiles(testFiles)),
		ReviewOptions{ReportOn: review.SeverityLow, FailOn: review.SeverityHigh, Body: "**warden**: Complete: 8 findings"})
	if err != nil {
		t.Fatalf("PostReview() = %v", err)
	}
	if diff := cmp.Diff(ReviewResult{Posted: 3, InBody: 4, Below: 1, ReviewID: res.ReviewID}, res); diff != "" || res.ReviewID == 0 {
		t.Errorf("PostReview() result (-want +got):\n%s", diff)
	}
	want := []placed{
		{"a.go", 2, 4, "RIGHT", true, "**[high] exact range** · `bugs`"},
		{"a.go", 5, 6, "RIGHT", false, "**[high] partly in the diff** · `bugs`"},
		{"a.go", 0, 24, "RIGHT", false, "**[medium] one line** · `bugs`"},
	}
	if diff := cmp.Diff(want, placements(c.fake)); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}
	reviews := c.fake.Reviews(testPR)
	if len(reviews) != 1 || reviews[0].Event != "COMMENT" || reviews[0].CommitID != testHead {
		t.Fatalf("reviews = %+v, want one COMMENT on the head", reviews)
	}
	body := reviews[0].Body
	if !strings.HasPrefix(body, "**warden**: Complete: 8 findings\n\n**Findings not posted as inline comments (4)**") {
		t.Errorf("review body = %q, want the header then the findings not commented", body)
	}
	// Most severe first in the body too.
	if i, j := strings.Index(body, "no line"), strings.Index(body, "between hunks"); i < 0 || j < 0 || i > j {
		t.Errorf("review body = %q, want the critical finding before the low one", body)
	}
	checkNoneLost(t, c.fake, append(fs[:4:4], fs[5:]...))
	if strings.Contains(posted(c.fake), report.Fingerprint(fs[4])) {
		t.Errorf("the finding below report-on was posted")
	}
}

func TestPostReviewMaxComments(t *testing.T) {
	t.Parallel()
	c := start(t, newFake(t), fakegithub.DefaultToken)
	fs := []review.Finding{
		finding(review.SeverityLow, "a.go", 1, 1, "low"),
		finding(review.SeverityHigh, "a.go", 2, 2, "high"),
		finding(review.SeverityMedium, "a.go", 3, 3, "medium"),
	}
	res, err := c.PostReview(t.Context(), testPR, testHead, fs, AnchorsFromFiles(toFiles(testFiles)), ReviewOptions{MaxComments: 2, Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Posted != 2 || res.InBody != 1 {
		t.Errorf("PostReview(3 findings, MaxComments 2) = %+v, want 2 posted, 1 in the body", res)
	}
	if body := c.fake.Reviews(testPR)[0].Body; !strings.Contains(body, "[low] low") || !strings.Contains(body, "more than 2 inline comments") {
		t.Errorf("review body = %q, want the least severe finding with the reason", body)
	}
}

func TestPostReviewDeduplicates(t *testing.T) {
	t.Parallel()
	fake := newFake(t)
	c := start(t, fake, fakegithub.DefaultToken)
	anchors := AnchorsFromFiles(toFiles(testFiles))
	fs := []review.Finding{
		finding(review.SeverityHigh, "a.go", 2, 2, "twice"),
		finding(review.SeverityHigh, "a.go", 3, 3, "twice"), // same fingerprint: two markers needed
		finding(review.SeverityMedium, "a.go", 10, 10, "in the body"),
	}
	opts := ReviewOptions{Body: "run"}
	first, err := c.PostReview(t.Context(), testPR, testHead, fs, anchors, opts)
	if err != nil || first.Posted != 2 || first.InBody != 1 {
		t.Fatalf("first PostReview() = %+v, %v, want 2 posted, 1 in the body", first, err)
	}

	// The same head again: nothing new, no review.
	again, err := c.PostReview(t.Context(), testPR, testHead, fs, anchors, opts)
	if diff := cmp.Diff(ReviewResult{Duplicates: 3}, again); diff != "" || err != nil {
		t.Errorf("re-run PostReview() = %v (-want +got):\n%s", err, diff)
	}

	// A later head where the lines moved and one finding is new.
	const head2 = "2222222222222222222222222222222222222222"
	fake.AddPullRequest(fakegithub.PullRequest{Number: testPR, HeadSHA: head2, OtherSHAs: []string{testHead}, Files: testFiles})
	moved := []review.Finding{
		finding(review.SeverityHigh, "a.go", 4, 4, "twice"),
		finding(review.SeverityHigh, "a.go", 5, 5, "twice"),
		finding(review.SeverityMedium, "a.go", 12, 12, "in the body"),
		finding(review.SeverityLow, "a.go", 24, 24, "new"),
		finding(review.SeverityHigh, "a.go", 6, 6, "twice"), // a third occurrence is new
	}
	later, err := c.PostReview(t.Context(), testPR, head2, moved, anchors, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ReviewResult{Posted: 2, Duplicates: 3, ReviewID: later.ReviewID}, later); diff != "" {
		t.Errorf("later-head PostReview() (-want +got):\n%s", diff)
	}
	if n := len(fake.Reviews(testPR)); n != 2 {
		t.Errorf("reviews = %d, want 2 (none for the unchanged re-run)", n)
	}
	if n := len(fake.ReviewComments(testPR)); n != 4 {
		t.Errorf("review comments = %d, want 4", n)
	}
}

func TestPostReviewSeesOlderCommentsAndPaginates(t *testing.T) {
	t.Parallel()
	fake := newFake(t)
	f := finding(review.SeverityHigh, "a.go", 2, 2, "old")
	for i := range 130 { // two pages of 100
		fake.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "a.go", Line: 2, Side: "RIGHT", Body: fmt.Sprint("human ", i)})
	}
	fake.AddReviewComment(testPR, fakegithub.ReviewComment{Path: "a.go", Line: 2, Side: "RIGHT", Body: "x\n" + marker(f), User: "github-actions[bot]"})
	c := start(t, fake, fakegithub.DefaultToken)
	res, err := c.PostReview(t.Context(), testPR, testHead, []review.Finding{f}, AnchorsFromFiles(toFiles(testFiles)), ReviewOptions{Body: "b"})
	if err != nil || res.Duplicates != 1 || res.Posted != 0 {
		t.Errorf("PostReview(already commented on page 2) = %+v, %v, want 1 duplicate", res, err)
	}
	if n := len(fake.RequestsTo(fakegithub.RouteListReviewComments)); n != 2 {
		t.Errorf("listed review comments in %d requests, want 2 pages", n)
	}
}

func TestPostReviewEvent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		event     string
		sev       review.Severity
		wantEvent string
		wantErr   bool
	}{
		{"default", "", review.SeverityCritical, "COMMENT", false},
		{"request changes, blocking", "REQUEST_CHANGES", review.SeverityHigh, "REQUEST_CHANGES", false},
		{"request changes, lower case", "request_changes", review.SeverityCritical, "REQUEST_CHANGES", false},
		{"request changes, nothing blocking", "REQUEST_CHANGES", review.SeverityMedium, "COMMENT", false},
		{"approve is refused", "APPROVE", review.SeverityLow, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := start(t, newFake(t), fakegithub.DefaultToken)
			_, err := c.PostReview(t.Context(), testPR, testHead, []review.Finding{finding(tt.sev, "a.go", 2, 2, "x")},
				AnchorsFromFiles(toFiles(testFiles)), ReviewOptions{Event: tt.event, FailOn: review.SeverityHigh, Body: "b"})
			if (err != nil) != tt.wantErr {
				t.Fatalf("PostReview(event %q) = %v, want error %v", tt.event, err, tt.wantErr)
			}
			if tt.wantErr {
				if n := len(c.fake.Requests()); n != 0 {
					t.Errorf("PostReview(event %q) sent %d requests, want 0", tt.event, n)
				}
				return
			}
			if got := c.fake.Reviews(testPR)[0].Event; got != tt.wantEvent {
				t.Errorf("PostReview(event %q) posted %q, want %q", tt.event, got, tt.wantEvent)
			}
		})
	}
}

func TestPostReview422KeepsEveryFinding(t *testing.T) {
	t.Parallel()
	fs := []review.Finding{
		finding(review.SeverityHigh, "a.go", 2, 3, "fits"),
		finding(review.SeverityHigh, "a.go", 12, 12, "our diff says yes, GitHub's says no"),
		finding(review.SeverityMedium, "a.go", 40, 40, "outside both"),
	}
	// Anchors from a diff that disagrees with GitHub's (e.g. another
	// merge base): a.go 1-30 in one hunk.
	stale := Anchors{"a.go": {{Start: 1, End: 30}}}
	tests := []struct {
		name         string
		anchors      Anchors
		event        string
		faults       int // scripted 422s before the fake's own checks
		wantResult   ReviewResult
		wantPosts    int
		wantEvent    string
		wantComments int
		wantErr      bool
	}{
		{"re-validated against GitHub's diff", stale, "", 0,
			ReviewResult{Posted: 1, InBody: 2, Rejected: 1}, 2, "COMMENT", 1, false},
		{"GitHub rejects anyway: all in the body", AnchorsFromFiles(toFiles(testFiles)), "", 1,
			ReviewResult{InBody: 3, Rejected: 1}, 2, "COMMENT", 0, false},
		{"request changes rejected: comment instead", AnchorsFromFiles(toFiles(testFiles)), "REQUEST_CHANGES", 2,
			ReviewResult{InBody: 3, Rejected: 1}, 3, "COMMENT", 0, false},
		{"every attempt rejected", AnchorsFromFiles(toFiles(testFiles)), "", 5,
			ReviewResult{}, 2, "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFake(t)
			if tt.faults > 0 {
				fake.Fail(fakegithub.RouteCreateReview, fakegithub.Fault{Status: 422, Message: "Unprocessable Entity", Times: tt.faults})
			}
			c := start(t, fake, fakegithub.DefaultToken)
			res, err := c.PostReview(t.Context(), testPR, testHead, fs, tt.anchors,
				ReviewOptions{Event: tt.event, FailOn: review.SeverityHigh, Body: "header"})
			if (err != nil) != tt.wantErr {
				t.Fatalf("PostReview() = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				var er *gh.ErrorResponse
				if !errors.As(err, &er) || er.Response.StatusCode != 422 {
					t.Errorf("PostReview() = %v, want the 422 *gh.ErrorResponse", err)
				}
			}
			res.ReviewID = 0
			if diff := cmp.Diff(tt.wantResult, res); diff != "" {
				t.Errorf("PostReview() result (-want +got):\n%s", diff)
			}
			if n := len(fake.RequestsTo(fakegithub.RouteCreateReview)); n != tt.wantPosts {
				t.Errorf("review posts = %d, want %d", n, tt.wantPosts)
			}
			if n := len(fake.ReviewComments(testPR)); n != tt.wantComments {
				t.Errorf("comments = %d, want %d", n, tt.wantComments)
			}
			if tt.wantErr {
				return
			}
			if rs := fake.Reviews(testPR); len(rs) != 1 || rs[0].Event != tt.wantEvent {
				t.Errorf("reviews = %+v, want one %s", rs, tt.wantEvent)
			}
			checkNoneLost(t, fake, fs)
		})
	}
}

func TestPostReviewServerErrorChecksBeforeRetrying(t *testing.T) {
	t.Parallel()
	fake := newFake(t)
	fake.Fail(fakegithub.RouteCreateReview, fakegithub.Fault{Status: 502})
	c := start(t, fake, fakegithub.DefaultToken)
	fs := []review.Finding{finding(review.SeverityHigh, "a.go", 2, 2, "x")}
	res, err := c.PostReview(t.Context(), testPR, testHead, fs, AnchorsFromFiles(toFiles(testFiles)), ReviewOptions{Body: "b"})
	if err != nil || res.Posted != 1 {
		t.Fatalf("PostReview(after one 502) = %+v, %v, want 1 posted", res, err)
	}
	if n := len(fake.RequestsTo(fakegithub.RouteListReviewComments)); n != 2 {
		t.Errorf("listed comments %d times, want 2 (again after the 502)", n)
	}
	if n := len(fake.Reviews(testPR)); n != 1 {
		t.Errorf("reviews = %d, want 1", n)
	}
}

func TestPostReviewBodyIsCut(t *testing.T) {
	t.Parallel()
	c := start(t, newFake(t), fakegithub.DefaultToken)
	var fs []review.Finding
	for i := range 100 {
		f := finding(review.SeverityMedium, "big.bin", i+1, i+1, fmt.Sprint("finding ", i))
		f.Description = strings.Repeat("ü", 3000)
		fs = append(fs, f)
	}
	res, err := c.PostReview(t.Context(), testPR, testHead, fs, AnchorsFromFiles(toFiles(testFiles)), ReviewOptions{Body: "header"})
	if err != nil {
		t.Fatalf("PostReview(100 long body findings) = %v", err)
	}
	body := c.fake.Reviews(testPR)[0].Body
	if len(body) > MaxCommentBody || res.InBody != 100 || res.Omitted == 0 || res.Omitted >= 100 {
		t.Errorf("body %d bytes, result %+v; want at most %d bytes, 100 in the body, some omitted", len(body), res, MaxCommentBody)
	}
	if !strings.Contains(body, fmt.Sprintf("and %d more findings not shown here", res.Omitted)) {
		t.Errorf("review body does not say how many findings it left out")
	}
}

func TestPostReviewNeutralizesModelText(t *testing.T) {
	t.Parallel()
	c := start(t, newFake(t), fakegithub.DefaultToken)
	f := review.Finding{
		Skill: "s", Severity: review.SeverityHigh, Path: "a.go", StartLine: 2, EndLine: 2,
		Title:       "@admin <b>urgent</b>",
		Description: "![t](https://evil.example/p.png) <!-- warden:fp:00000000000000000000000000000000 --> cc @org/security",
	}
	if _, err := c.PostReview(t.Context(), testPR, testHead, []review.Finding{f}, AnchorsFromFiles(toFiles(testFiles)), ReviewOptions{Body: "b"}); err != nil {
		t.Fatal(err)
	}
	body := c.fake.ReviewComments(testPR)[0].Body
	for _, bad := range []string{"@admin", "@org/security", "<b>", "![", "](https://evil", "<!-- warden:fp:0000"} {
		if strings.Contains(body, bad) {
			t.Errorf("comment body %q contains %q", body, bad)
		}
	}
	if got := markerRE.FindAllString(body, -1); len(got) != 1 || got[0] != marker(f) {
		t.Errorf("markers in the comment = %q, want only %q", got, marker(f))
	}
}
