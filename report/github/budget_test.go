package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// maxInWindow is the most times in any window of length d.
func maxInWindow(ts []time.Time, d time.Duration) int {
	best := 0
	for i := range ts {
		n := 0
		for j := i; j < len(ts) && ts[j].Sub(ts[i]) < d; j++ {
			n++
		}
		best = max(best, n)
	}
	return best
}

// TestWriteBudgetPaces: 600 content-creating requests in a row go out at
// most 80 a minute; past the hour's 500 (less the reserve) the rest are
// refused at once with ErrWriteBudget, never sent, while essential ones
// still use the reserve.
func TestWriteBudgetPaces(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := NewWriteBudget()
		var sent []time.Time
		refused := 0
		for range 600 {
			err := b.Take(t.Context())
			switch {
			case err == nil:
				sent = append(sent, time.Now())
			case errors.Is(err, ErrWriteBudget):
				refused++
				var be *BudgetError
				if !errors.As(err, &be) || be.Window != "hour" || !strings.HasPrefix(err.Error(), "not posted: rate budget: 495 of 495 content-creating requests per hour used") {
					t.Fatalf("Take() = %v, want the hour's budget error", err)
				}
			default:
				t.Fatalf("Take() = %v", err)
			}
		}
		if len(sent) != ContentPerHour-DefaultReserve || refused != 600-len(sent) {
			t.Errorf("sent %d, refused %d; want %d sent and the rest refused", len(sent), refused, ContentPerHour-DefaultReserve)
		}
		if n := maxInWindow(sent, time.Minute); n > ContentPerMinute {
			t.Errorf("%d requests in one minute, want at most %d", n, ContentPerMinute)
		}
		if took := sent[len(sent)-1].Sub(sent[0]); took < 6*time.Minute || took > 7*time.Minute {
			t.Errorf("495 requests took %s, want about 6 minutes at 80 a minute", took)
		}
		for i := range DefaultReserve {
			if err := b.Take(Essential(t.Context())); err != nil {
				t.Fatalf("essential Take %d = %v, want the reserve", i, err)
			}
		}
		if err := b.Take(Essential(t.Context())); !errors.Is(err, ErrWriteBudget) {
			t.Errorf("essential Take past the hour = %v, want ErrWriteBudget", err)
		}
		if used, ref := b.Used(); used != ContentPerHour || ref != refused+1 {
			t.Errorf("Used() = %d, %d; want %d, %d", used, ref, ContentPerHour, refused+1)
		}
	})
}

// TestWriteBudgetDeadline: a wait for the minute's window that does not fit
// the context's deadline is refused at once, not waited.
func TestWriteBudgetDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := NewWriteBudget()
		b.Record(slicesRepeat(time.Now().Add(-10*time.Second), ContentPerMinute)...)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		start := time.Now()
		err := b.Take(ctx)
		var be *BudgetError
		if !errors.As(err, &be) || be.Window != "minute" || be.Wait != 50*time.Second {
			t.Fatalf("Take() = %v, want a minute budget error with a 50s wait", err)
		}
		if time.Since(start) != 0 {
			t.Errorf("Take waited %s before refusing", time.Since(start))
		}
		// With time enough, it waits the 50 s.
		if err := b.Take(t.Context()); err != nil || time.Since(start) != 50*time.Second {
			t.Errorf("Take() = %v after %s, want nil after 50s", err, time.Since(start))
		}
	})
}

func slicesRepeat(t time.Time, n int) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = t
	}
	return out
}

func TestContentCreating(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		method, path, body string
		want               bool
	}{
		{"POST", "/repos/o/r/pulls/7/reviews", "", true},
		{"POST", "/api/v3/repos/o/r/issues/7/comments", "", true},
		{"POST", "/repos/o/r/pulls/7/comments/9/replies", "", true},
		{"POST", "/repos/o/r/issues/comments/9/reactions", "", true},
		{"POST", "/repos/o/r/check-runs", "", false},
		{"PATCH", "/repos/o/r/check-runs/1", "", false},
		{"GET", "/repos/o/r/pulls/7/comments", "", false},
		{"POST", "/graphql", `{"query":"mutation($id:ID!){resolveReviewThread(input:{threadId:$id}){thread{id}}}"}`, true},
		{"POST", "/graphql", `{"query":"  query { viewer { login } }"}`, false},
		{"POST", "/graphql", `{"query":"{ viewer { login } }"}`, false},
		{"POST", "/graphql", `not json`, true},
	} {
		req, _ := http.NewRequest(tt.method, "http://x"+tt.path, strings.NewReader(tt.body))
		if got := ContentCreating(req); got != tt.want {
			t.Errorf("ContentCreating(%s %s %s) = %v, want %v", tt.method, tt.path, tt.body, got, tt.want)
		}
	}
}

func TestSplitComments(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		n, per int
		want   string
	}{{0, 50, "[]"}, {400, 50, "[50 50 50 50 50 50 50 50]"}, {101, 50, "[50 50 1]"}, {3, 0, "[3]"}} {
		if got := fmt.Sprint(SplitComments(tt.n, tt.per)); got != tt.want && !(tt.want == "[]" && got == "[]") {
			t.Errorf("SplitComments(%d, %d) = %s, want %s", tt.n, tt.per, got, tt.want)
		}
	}
}

// bigPR is a 300-file pull request, each file with one hunk of new lines
// 1-10, and 400 findings spread over it.
func bigPR() ([]fakegithub.File, []review.Finding) {
	var files []fakegithub.File
	var fs []review.Finding
	for i := range 300 {
		path := fmt.Sprintf("pkg%03d/file.go", i)
		var patch strings.Builder
		patch.WriteString("@@ -0,0 +1,10 @@")
		for l := 1; l <= 10; l++ {
			fmt.Fprintf(&patch, "\n+line %d", l)
		}
		files = append(files, fakegithub.File{Filename: path, Status: "added", Additions: 10, Patch: patch.String()})
	}
	for i := range 400 {
		line := 1 + i/300*3
		fs = append(fs, finding(review.SeverityMedium, fmt.Sprintf("pkg%03d/file.go", i%300), line, line, fmt.Sprintf("finding %d", i)))
	}
	return files, fs
}

// postBatched posts fs as reviews of at most per inline comments each
// through c, and returns the findings of the batches the budget refused.
func postBatched(ctx context.Context, c *Client, fs []review.Finding, anchors Anchors, per int) (notPosted []review.Finding, err error) {
	at := 0
	for _, n := range SplitComments(len(fs), per) {
		batch := fs[at : at+n]
		at += n
		if _, err := c.PostReview(ctx, testPR, testHead, batch, anchors, ReviewOptions{MaxComments: per, Body: "**warden**"}); err != nil {
			if errors.Is(err, ErrWriteBudget) {
				notPosted = append(notPosted, batch...)
				continue
			}
			return notPosted, err
		}
	}
	return notPosted, nil
}

// TestWriteBudgetBigPullRequest: 400 findings on a 300-file pull request
// are posted inline in 8 reviews of 50, inside GitHub's secondary limits
// (which the fake enforces); when earlier runs left only 3 writes in the
// hour, 3 reviews go out and the other 250 findings are reported not
// posted, none lost and none sent over the limit.
func TestWriteBudgetBigPullRequest(t *testing.T) {
	t.Parallel()
	files, fs := bigPR()
	for _, tt := range []struct {
		name      string
		earlier   int // content-creating requests of earlier runs this hour
		posted    int
		notPosted int
	}{
		{"fresh hour", 0, 400, 0},
		{"hour nearly spent", ContentPerHour - DefaultReserve - 3, 150, 250},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				fake := fakegithub.New(testOwner, testRepo)
				fake.ContentLimits = true
				fake.AddPullRequest(fakegithub.PullRequest{Number: testPR, HeadSHA: testHead, BaseSHA: "base", Files: files})
				fake.FailOnViolations(t)
				budget := NewWriteBudget()
				budget.Record(slicesRepeat(time.Now().Add(-30*time.Minute), tt.earlier)...)
				c, err := New(Config{APIURL: "http://fake.invalid", Token: fakegithub.DefaultToken, Owner: testOwner, Repo: testRepo,
					HTTPClient: &http.Client{Transport: budget.RoundTripper(fake.Transport())}})
				if err != nil {
					t.Fatal(err)
				}
				notPosted, err := postBatched(t.Context(), c, fs, AnchorsFromFiles(toFiles(files)), DefaultMaxComments)
				if err != nil {
					t.Fatal(err)
				}
				times, refused := fake.ContentCreated()
				if refused != 0 || maxInWindow(times, time.Minute) > ContentPerMinute || len(times)+tt.earlier > ContentPerHour {
					t.Errorf("GitHub refused %d; %d content writes (max %d in a minute); want none refused, inside both limits", refused, len(times), maxInWindow(times, time.Minute))
				}
				if got := len(fake.ReviewComments(testPR)); got != tt.posted || len(notPosted) != tt.notPosted {
					t.Errorf("%d inline comments posted, %d not posted; want %d and %d", got, len(notPosted), tt.posted, tt.notPosted)
				}
				all := posted(fake)
				for _, f := range fs {
					on := strings.Contains(all, marker(f))
					listed := false
					for _, n := range notPosted {
						listed = listed || n == f
					}
					if on == listed {
						t.Fatalf("finding %q: on the pull request %v, listed not posted %v; want exactly one", f.Title, on, listed)
					}
				}
			})
		})
	}
}

// TestPublishNotPostedRateBudget: when the hour's write budget is spent
// (earlier runs used it), the Publisher sends no review, and the check
// run's summary and the report say "not posted: rate budget" with the
// count; every finding is still in the check run's annotations.
func TestPublishNotPostedRateBudget(t *testing.T) {
	t.Parallel()
	fake := newFake(t)
	budget := NewWriteBudget()
	budget.Record(slicesRepeat(time.Now().Add(-10*time.Minute), ContentPerHour)...)
	c, err := New(Config{APIURL: "http://fake.invalid", Token: fakegithub.DefaultToken, Owner: testOwner, Repo: testRepo,
		HTTPClient: &http.Client{Transport: budget.RoundTripper(fake.Transport())}})
	if err != nil {
		t.Fatal(err)
	}
	fs := []review.Finding{
		finding(review.SeverityHigh, "a.go", 2, 2, "one"),
		finding(review.SeverityMedium, "a.go", 24, 24, "two"),
	}
	r := &review.Report{Schema: review.Schema, Outcome: review.OutcomeComplete, Findings: fs, Summary: review.Summary{Findings: 2}}
	var warned []string
	p := &Publisher{
		Client: c, CheckName: "warden", HeadSHA: testHead, PullRequest: testPR,
		Anchors: AnchorsFromFiles(toFiles(testFiles)), Thresholds: review.Thresholds{FailOn: review.SeverityHigh, ReportOn: review.SeverityMedium},
		IncompleteConclusion: DefaultIncompleteConclusion, Budget: time.Minute, Started: time.Now(),
		Summary: func(r *review.Report) (string, error) {
			var b strings.Builder
			err := report.Write(&b, r, report.FormatMarkdown, report.Options{})
			return b.String(), err
		},
		Warn: func(format string, args ...any) { warned = append(warned, fmt.Sprintf(format, args...)) },
	}
	p.Begin(t.Context())
	if err := p.Publish(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	if n := len(fake.Reviews(testPR)); n != 0 {
		t.Errorf("%d reviews posted past the budget", n)
	}
	if r.Summary.NotPosted != 2 {
		t.Errorf("Summary.NotPosted = %d, want 2", r.Summary.NotPosted)
	}
	runs := fake.CheckRuns()
	if len(runs) != 1 || !strings.Contains(runs[0].Summary, "**Not posted: rate budget.** 2 findings could not be posted") || len(runs[0].Annotations) != 2 {
		t.Errorf("check run = %+v; want the summary to say 2 not posted, and both annotated", runs)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "not posted: rate budget") {
		t.Errorf("warnings = %q", warned)
	}
}

// headerTransport is base with extra headers on the n-th answer (1-based),
// as GitHub sends its rate-limit headers on every answer.
type headerTransport struct {
	base   http.RoundTripper
	n      int
	header http.Header
	calls  int
}

func (h *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := h.base.RoundTrip(r)
	h.calls++
	if err == nil && h.calls == h.n {
		for k, v := range h.header {
			resp.Header[k] = v
		}
	}
	return resp, err
}

// TestWriteBudgetHonoursGitHub: a secondary-limit 403 with Retry-After
// pauses the run for as long as GitHub asks (the Client's transport sends
// that request again after the wait; nothing is sent in between).
func TestWriteBudgetHonoursGitHub(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(t)
		fake.Fail(fakegithub.RouteCreateIssueComment, fakegithub.Fault{Status: http.StatusForbidden, RetryAfter: "30"})
		budget := NewWriteBudget()
		c, err := New(Config{APIURL: "http://fake.invalid", Token: fakegithub.DefaultToken, Owner: testOwner, Repo: testRepo,
			HTTPClient: &http.Client{Transport: budget.RoundTripper(fake.Transport())}})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := c.Comment(t.Context(), testPR, "one"); err != nil {
			t.Fatalf("Comment after a secondary-limit 403: %v", err)
		}
		if got := time.Since(start); got < 30*time.Second || budget.GitHubPauses() != 1 {
			t.Errorf("the comment went through after %s with %d pauses; want GitHub's 30 s, once", got, budget.GitHubPauses())
		}
		reqs := fake.Requests()
		if n := len(reqs); n != 2 {
			t.Fatalf("%d requests reached GitHub, want the refused one and its retry", n)
		}
	})
}

// TestWriteBudgetWaitsForPrimaryReset: a primary limit spent by other runs
// on the repository's token (x-ratelimit-remaining: 0 on a 200, which the
// Client hides from go-github) pauses the next request, a read too, until
// the reset instead of drawing a refusal; a pause longer than the run has
// left refuses the request unsent.
func TestWriteBudgetWaitsForPrimaryReset(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(t)
		budget := NewWriteBudget()
		reset := time.Now().Add(90 * time.Second)
		ht := &headerTransport{base: fake.Transport(), n: 1, header: http.Header{
			"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {fmt.Sprint(reset.Unix())}}}
		c, err := New(Config{APIURL: "http://fake.invalid", Token: fakegithub.DefaultToken, Owner: testOwner, Repo: testRepo,
			HTTPClient: &http.Client{Transport: budget.RoundTripper(ht)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Comment(t.Context(), testPR, "spends the hour"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PullRequest(t.Context(), testPR); err != nil {
			t.Fatalf("a read after the primary limit was spent: %v", err)
		}
		if time.Now().Before(reset) {
			t.Errorf("the next request went out %s before the reset", reset.Sub(time.Now()))
		}
		// A pause longer than the run has left refuses the request unsent.
		budget.observe(&http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"240"}}, Body: http.NoBody})
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		before := len(fake.Requests())
		_, err = c.Comment(ctx, testPR, "too late")
		var be *BudgetError
		if !errors.As(err, &be) || be.Window != "github" || !errors.Is(err, ErrWriteBudget) || len(fake.Requests()) != before {
			t.Errorf("Comment during a 4-minute pause with a minute left = %v (%d requests sent); want a github budget error, nothing sent", err, len(fake.Requests())-before)
		}
	})
}

// TestWriteBudgetRunsShareGitHubsLimits: two runs on one repository (two
// pull requests reviewed at once, each with its own budget) post 60
// comments each, one after another, into GitHub's shared 80-a-minute
// content limit (the fake enforces it across both). Each refusal GitHub
// gives pauses that run for GitHub's minute; every comment is posted in
// the end, within both limits, and GitHub refuses at most one request of
// each run per minute it has to wait.
func TestWriteBudgetRunsShareGitHubsLimits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(t)
		fake.ContentLimits = true
		const each = 60
		errs := make(chan error, 2)
		budgets := []*WriteBudget{NewWriteBudget(), NewWriteBudget()}
		for _, b := range budgets {
			c, err := New(Config{APIURL: "http://fake.invalid", Token: fakegithub.DefaultToken, Owner: testOwner, Repo: testRepo,
				HTTPClient: &http.Client{Transport: b.RoundTripper(fake.Transport())}})
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				for i := range each {
					if _, err := c.Comment(t.Context(), testPR, fmt.Sprint("comment ", i)); err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("a run failed to post: %v", err)
			}
		}
		times, refused := fake.ContentCreated()
		pauses := budgets[0].GitHubPauses() + budgets[1].GitHubPauses()
		if len(times) != 2*each || maxInWindow(times, time.Minute) > ContentPerMinute {
			t.Errorf("%d comments created (max %d in a minute); want all %d, within GitHub's limit", len(times), maxInWindow(times, time.Minute), 2*each)
		}
		if refused == 0 || refused > 4 || pauses != refused {
			t.Errorf("GitHub refused %d requests and the runs paused %d times; want a few refusals, each pausing its run", refused, pauses)
		}
	})
}
