package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	gh "github.com/google/go-github/v62/github"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/review"
)

const (
	testOwner = "org"
	testRepo  = "warden"
	testPR    = 7
	testHead  = "1111111111111111111111111111111111111111"
)

// testFiles: a.go shows new lines 1-6 and 23-26; b.go 1-2; big.bin has no
// patch.
var testFiles = []fakegithub.File{
	{Filename: "a.go", Status: "modified", Additions: 5, Deletions: 0,
		Patch: "@@ -1,3 +1,6 @@\n a\n+b\n+c\n+d\n e\n f\n@@ -20,2 +23,4 @@ func g() {\n x\n+y\n+z\n w"},
	{Filename: "b.go", Status: "added", Additions: 2, Patch: "@@ -0,0 +1,2 @@\n+package b\n+var x = 1"},
	{Filename: "big.bin", Status: "modified", Additions: 1, Deletions: 1},
}

func newFake(t *testing.T) *fakegithub.Server {
	t.Helper()
	f := fakegithub.New(testOwner, testRepo)
	f.AddPullRequest(fakegithub.PullRequest{Number: testPR, HeadSHA: testHead, BaseSHA: "base", Files: testFiles})
	f.FailOnViolations(t) // also for tests that use f.Transport()
	return f
}

// waits records the waits a Client asked for, without waiting.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) wait(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) got() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

type testClient struct {
	*Client
	fake  *fakegithub.Server
	waits *waits
	log   *bytes.Buffer
}

// start serves fake on loopback and returns a Client for it with token.
func start(t *testing.T, fake *fakegithub.Server, token string, mod ...func(*Config)) testClient {
	t.Helper()
	ts := fake.Start(t)
	w := &waits{}
	var buf bytes.Buffer
	cfg := Config{
		APIURL: ts.URL, Token: token, Owner: testOwner, Repo: testRepo,
		HTTPClient: ts.Client(), Wait: w.wait,
		Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &buf}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%v) = %v", cfg, err)
	}
	return testClient{Client: c, fake: fake, waits: w, log: &buf}
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		cfg        Config
		wantErr    bool
		wantBase   string
		wantServer string
	}{
		{"github.com", Config{Token: "t", Owner: "o", Repo: "r"}, false, "https://api.github.com/", "https://github.com"},
		{"enterprise", Config{APIURL: "https://ghe.example.com/api/v3", Token: "t", Owner: "o", Repo: "r"}, false, "https://ghe.example.com/api/v3/", "https://ghe.example.com"},
		{"server URL given", Config{APIURL: "http://127.0.0.1:9/", ServerURL: "https://x.example/", Token: "t", Owner: "o", Repo: "r"}, false, "http://127.0.0.1:9/", "https://x.example"},
		{"no token", Config{Owner: "o", Repo: "r"}, true, "", ""},
		{"no repo", Config{Token: "t", Owner: "o"}, true, "", ""},
		{"slash in owner", Config{Token: "t", Owner: "o/x", Repo: "r"}, true, "", ""},
		{"bad URL", Config{APIURL: "ftp://x", Token: "t", Owner: "o", Repo: "r"}, true, "", ""},
		{"user in URL", Config{APIURL: "https://u:p@x", Token: "t", Owner: "o", Repo: "r"}, true, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(tt.cfg)
			if (err != nil) != tt.wantErr {
				t.Fatalf("New(%v) error = %v, want error %v", tt.cfg, err, tt.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), "p@") {
					t.Errorf("New(%v) error = %v, leaks the URL's password", tt.cfg, err)
				}
				return
			}
			if got := c.gh.BaseURL.String(); got != tt.wantBase {
				t.Errorf("New(%v).BaseURL = %q, want %q", tt.cfg, got, tt.wantBase)
			}
			if c.serverURL != tt.wantServer {
				t.Errorf("New(%v) server URL = %q, want %q", tt.cfg, c.serverURL, tt.wantServer)
			}
		})
	}
}

func TestConfigRedactsToken(t *testing.T) {
	t.Parallel()
	const secret = "ghs_secretsecret"
	cfg := Config{Token: secret, Owner: "o", Repo: "r"}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "cfg", cfg)
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%v", &cfg), buf.String()} {
		if strings.Contains(s, secret) || !strings.Contains(s, "REDACTED") {
			t.Errorf("formatted Config = %q, want the token REDACTED", s)
		}
	}
}

func TestCheckRunLifecycle(t *testing.T) {
	t.Parallel()
	c := start(t, newFake(t), fakegithub.DefaultToken)
	ctx := t.Context()
	id, err := c.CreateCheckRun(ctx, "warden", testHead)
	if err != nil {
		t.Fatalf("CreateCheckRun() = %v", err)
	}
	run, _ := c.fake.CheckRun(id)
	if run.Status != "in_progress" || run.Name != "warden" || run.HeadSHA != testHead {
		t.Errorf("after CreateCheckRun, run = %+v, want warden in_progress on the head", run)
	}
	err = c.CompleteCheckRun(ctx, id, CheckOutput{
		Conclusion: "neutral", Title: "Complete: 1 finding", Summary: "## warden\n",
		Annotations: findingsOf(review.SeverityMedium), DetailsURL: "https://github.com/org/warden/actions/runs/1",
	})
	if err != nil {
		t.Fatalf("CompleteCheckRun() = %v", err)
	}
	run, _ = c.fake.CheckRun(id)
	want := fakegithub.CheckRun{
		ID: id, Name: "warden", HeadSHA: testHead, Status: "completed", Conclusion: "neutral",
		DetailsURL: "https://github.com/org/warden/actions/runs/1", Title: "Complete: 1 finding", Summary: "## warden\n",
		Annotations: []fakegithub.Annotation{{Path: "a.go", StartLine: 1, EndLine: 1, AnnotationLevel: "warning", Title: "[medium] ta", Message: "ta"}},
		Updates:     1, App: fakegithub.AppActions,
	}
	if diff := cmp.Diff(want, run); diff != "" {
		t.Errorf("check run after CompleteCheckRun (-want +got):\n%s", diff)
	}
	// The update never sends "name": an empty one would rename the run.
	for _, r := range c.fake.RequestsTo(fakegithub.RouteUpdateCheckRun) {
		if bytes.Contains(r.Body, []byte(`"name"`)) {
			t.Errorf("update body %s sends a name", r.Body)
		}
	}
}

func TestCompleteCheckRunAnnotationBatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		findings     int
		wantRequests int
	}{
		{0, 1}, {50, 1}, {51, 2}, {150, 3}, {151, 4},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.findings), func(t *testing.T) {
			t.Parallel()
			c := start(t, newFake(t), fakegithub.DefaultToken)
			id, err := c.CreateCheckRun(t.Context(), "warden", testHead)
			if err != nil {
				t.Fatal(err)
			}
			var fs []review.Finding
			for i := range tt.findings {
				fs = append(fs, review.Finding{Skill: "s", Severity: review.Severity(1 + i%5), Title: fmt.Sprint("t", i), Path: "a.go", StartLine: i + 1, EndLine: i + 1})
			}
			if err := c.CompleteCheckRun(t.Context(), id, CheckOutput{Conclusion: "failure", Title: "x", Summary: "y", Annotations: fs}); err != nil {
				t.Fatalf("CompleteCheckRun(%d annotations) = %v", tt.findings, err)
			}
			reqs := c.fake.RequestsTo(fakegithub.RouteUpdateCheckRun)
			if len(reqs) != tt.wantRequests {
				t.Errorf("CompleteCheckRun(%d annotations) made %d update requests, want %d", tt.findings, len(reqs), tt.wantRequests)
			}
			for i, r := range reqs {
				if r.Status != http.StatusOK {
					t.Errorf("update %d answered %d: %s", i, r.Status, r.Body)
				}
			}
			run, _ := c.fake.CheckRun(id)
			if len(run.Annotations) != tt.findings || run.Conclusion != "failure" {
				t.Errorf("check run has %d annotations, conclusion %q, want %d, failure", len(run.Annotations), run.Conclusion, tt.findings)
			}
			if tt.findings > 0 && run.Annotations[0].AnnotationLevel != "failure" {
				t.Errorf("first annotation = %+v, want the most severe (failure) first", run.Annotations[0])
			}
		})
	}
}

func TestCompleteCheckRunCutsSummary(t *testing.T) {
	t.Parallel()
	c := start(t, newFake(t), fakegithub.DefaultToken)
	id, err := c.CreateCheckRun(t.Context(), "warden", testHead)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("line ü\n", 20000) // 160,000 bytes
	if err := c.CompleteCheckRun(t.Context(), id, CheckOutput{Conclusion: "neutral", Title: strings.Repeat("T", 400), Summary: long}); err != nil {
		t.Fatalf("CompleteCheckRun(160 kB summary) = %v", err)
	}
	run, _ := c.fake.CheckRun(id)
	if len(run.Summary) > MaxOutputText || !strings.Contains(run.Summary, "summary cut") {
		t.Errorf("summary = %d bytes, want at most %d with a note", len(run.Summary), MaxOutputText)
	}
	if len(run.Title) > MaxTitle {
		t.Errorf("title = %d bytes, want at most %d", len(run.Title), MaxTitle)
	}
}

func TestCompleteCheckRunRejectsBadConclusion(t *testing.T) {
	t.Parallel()
	c := start(t, newFake(t), fakegithub.DefaultToken)
	for _, concl := range []string{"", "stale", "passed", "SUCCESS"} {
		if err := c.CompleteCheckRun(t.Context(), 1, CheckOutput{Conclusion: concl, Title: "t", Summary: "s"}); err == nil {
			t.Errorf("CompleteCheckRun(conclusion %q) = nil, want an error", concl)
		}
	}
	if n := len(c.fake.Requests()); n != 0 {
		t.Errorf("bad conclusions sent %d requests, want 0", n)
	}
}

func TestNoWriteAccess(t *testing.T) {
	t.Parallel()
	c := start(t, newFake(t), fakegithub.DefaultReadOnlyToken)
	ctx := t.Context()
	_, err := c.CreateCheckRun(ctx, "warden", testHead)
	var er *gh.ErrorResponse
	if !errors.Is(err, ErrNoWriteAccess) || !errors.As(err, &er) || er.Response.StatusCode != 403 {
		t.Errorf("CreateCheckRun(read-only token) = %v, want ErrNoWriteAccess wrapping a 403 *gh.ErrorResponse", err)
	}
	if !strings.HasPrefix(err.Error(), "create check run: ") {
		t.Errorf("CreateCheckRun(read-only token) = %q, want the operation first", err)
	}
	if err := c.CompleteCheckRun(ctx, 1, CheckOutput{Conclusion: "neutral", Title: "t", Summary: "s"}); !errors.Is(err, ErrNoWriteAccess) {
		t.Errorf("CompleteCheckRun(read-only token) = %v, want ErrNoWriteAccess", err)
	}
	_, err = c.PostReview(ctx, testPR, testHead, findingsOf(review.SeverityHigh), AnchorsFromFiles(toFiles(testFiles)), ReviewOptions{Body: "b"})
	if !errors.Is(err, ErrNoWriteAccess) {
		t.Errorf("PostReview(read-only token) = %v, want ErrNoWriteAccess", err)
	}
	// Reads work, and a read's 403 would not be ErrNoWriteAccess.
	if _, err := c.PullRequest(ctx, testPR); err != nil {
		t.Errorf("PullRequest(read-only token) = %v, want nil", err)
	}
	if len(c.waits.got()) != 0 {
		t.Errorf("waits = %v, want none: a permission 403 is not a rate limit", c.waits.got())
	}
}

func toFiles(fs []fakegithub.File) []File {
	out := make([]File, len(fs))
	for i, f := range fs {
		out[i] = File{Path: f.Filename, Status: f.Status, Patch: f.Patch, Additions: f.Additions, Deletions: f.Deletions}
	}
	return out
}

func TestTokenNeverLeaks(t *testing.T) {
	t.Parallel()
	const secret = "ghs_verySecretTokenValue42"
	tests := []struct {
		name  string
		token string // the fake's write token; the client always sends secret
		ro    bool
		fault *fakegithub.Fault
	}{
		{"401 bad credentials", "ghs_other", false, nil},
		{"403 read only", "ghs_other", true, nil},
		{"422 and 5xx", secret, false, &fakegithub.Fault{Status: 502}},
		{"rate limit not waited", secret, false, &fakegithub.Fault{Status: 429, RetryAfter: "99999", Times: 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFake(t)
			fake.EchoAuthorization = true
			fake.Token = tt.token
			if tt.ro {
				fake.ReadOnlyToken = secret
			}
			if tt.fault != nil {
				f := *tt.fault
				f.Times = max(f.Times, 2)
				fake.Fail(fakegithub.RouteCreateCheckRun, f)
				fake.Fail(fakegithub.RouteGetPullRequest, f)
			}
			c := start(t, fake, secret)
			var errs []error
			_, err := c.CreateCheckRun(t.Context(), "warden", testHead)
			errs = append(errs, err)
			_, err = c.PullRequest(t.Context(), testPR)
			errs = append(errs, err)
			err = c.CompleteCheckRun(t.Context(), 99, CheckOutput{Conclusion: "neutral", Title: "t", Summary: "s"})
			errs = append(errs, err)
			for i, err := range errs {
				if err == nil {
					continue
				}
				t.Logf("error %d: %v", i, err)
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %d = %q, leaks the token", i, err)
				}
				var er *gh.ErrorResponse
				if errors.As(err, &er) && (strings.Contains(er.Error(), secret) || strings.Contains(er.Message, secret)) {
					t.Errorf("unwrapped *gh.ErrorResponse %d = %q, leaks the token", i, er)
				}
				var rl *RateLimitedError
				if errors.As(err, &rl) && strings.Contains(rl.Error(), secret) {
					t.Errorf("unwrapped *RateLimitedError %d = %q, leaks the token", i, rl)
				}
			}
			if errs[0] == nil {
				t.Errorf("CreateCheckRun() = nil, want an error in this case")
			}
			if strings.Contains(c.log.String(), secret) {
				t.Errorf("log = %q, leaks the token", c.log.String())
			}
			for _, r := range fake.Requests() {
				if b, _ := json.Marshal(r); bytes.Contains(b, []byte(secret)) {
					t.Errorf("recorded request %s leaks the token", b)
				}
			}
		})
	}
}

func TestRateLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		faults    []fakegithub.Fault
		deadline  time.Duration // 0: none
		wantWaits []time.Duration
		wantErr   bool
		wantCalls int
	}{
		{"secondary 403 with retry-after", []fakegithub.Fault{{Status: 403, RetryAfter: "30"}}, 0, []time.Duration{30 * time.Second}, false, 2},
		{"secondary 429 with retry-after", []fakegithub.Fault{{Status: 429, RetryAfter: "7"}}, 0, []time.Duration{7 * time.Second}, false, 2},
		{"429 without headers waits a minute", []fakegithub.Fault{{Status: 429}}, 0, []time.Duration{time.Minute}, false, 2},
		{"403 with retry-after but another message", []fakegithub.Fault{{Status: 403, RetryAfter: "3", Message: "slow down"}}, 0, []time.Duration{3 * time.Second}, false, 2},
		{"twice", []fakegithub.Fault{{Status: 429, RetryAfter: "1", Times: 2}}, 0, []time.Duration{time.Second, time.Second}, false, 3},
		{"gives up after 3 tries", []fakegithub.Fault{{Status: 429, RetryAfter: "1", Times: 10}}, 0, []time.Duration{time.Second, time.Second, time.Second}, true, 4},
		{"does not fit the deadline", []fakegithub.Fault{{Status: 403, RetryAfter: "600"}}, time.Minute, nil, true, 1},
		{"longer than the cap", []fakegithub.Fault{{Status: 403, RetryAfter: "3600"}}, 0, nil, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFake(t)
			for _, f := range tt.faults {
				fake.Fail(fakegithub.RouteCreateCheckRun, f)
			}
			c := start(t, fake, fakegithub.DefaultToken)
			ctx := t.Context()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			_, err := c.CreateCheckRun(ctx, "warden", testHead)
			if (err != nil) != tt.wantErr {
				t.Fatalf("CreateCheckRun() = %v, want error %v", err, tt.wantErr)
			}
			var rl *RateLimitedError
			if err != nil && (!errors.As(err, &rl) || errors.Is(err, ErrNoWriteAccess)) {
				t.Errorf("CreateCheckRun() = %v, want a *RateLimitedError and not ErrNoWriteAccess", err)
			}
			if diff := cmp.Diff(tt.wantWaits, c.waits.got()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if n := len(fake.RequestsTo(fakegithub.RouteCreateCheckRun)); n != tt.wantCalls {
				t.Errorf("requests = %d, want %d", n, tt.wantCalls)
			}
		})
	}
}

// TestPrimaryRateLimitUnderSynctest waits out x-ratelimit-reset in virtual
// time with the real timer, through an in-memory transport.
func TestPrimaryRateLimitUnderSynctest(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(t)
		fake.Fail(fakegithub.RouteGetPullRequest, fakegithub.Fault{Status: 403, RateLimitReset: time.Now().Add(90 * time.Second)})
		c, err := New(Config{
			APIURL: "http://fake.invalid/api/v3", Token: fakegithub.DefaultToken, Owner: testOwner, Repo: testRepo,
			HTTPClient: &http.Client{Transport: fake.Transport()},
		})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		pr, err := c.PullRequest(t.Context(), testPR)
		if err != nil || pr.GetHead().GetSHA() != testHead {
			t.Fatalf("PullRequest() = %v, %v, want the pull request", pr, err)
		}
		if d := time.Since(t0); d < 90*time.Second || d > 92*time.Second {
			t.Errorf("PullRequest() took %s of virtual time, want about 91s (the reset plus a second)", d)
		}
		for _, r := range fake.Requests() {
			if !r.Enterprise {
				t.Errorf("request %s %s did not use the /api/v3 prefix", r.Method, r.Path)
			}
		}
	})
}

func TestServerErrorRetriedOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		times     int
		wantErr   bool
		wantCalls int
	}{
		{"once", 1, false, 2},
		{"twice", 2, true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFake(t)
			fake.Fail(fakegithub.RouteGetPullRequest, fakegithub.Fault{Status: 502, Times: tt.times})
			fake.Fail(fakegithub.RouteCreateCheckRun, fakegithub.Fault{Status: 500, Times: tt.times})
			c := start(t, fake, fakegithub.DefaultToken)
			_, err := c.PullRequest(t.Context(), testPR)
			if (err != nil) != tt.wantErr {
				t.Errorf("PullRequest() = %v, want error %v", err, tt.wantErr)
			}
			_, err = c.CreateCheckRun(t.Context(), "warden", testHead)
			if (err != nil) != tt.wantErr {
				t.Errorf("CreateCheckRun() = %v, want error %v", err, tt.wantErr)
			}
			for _, route := range []string{fakegithub.RouteGetPullRequest, fakegithub.RouteCreateCheckRun} {
				if n := len(fake.RequestsTo(route)); n != tt.wantCalls {
					t.Errorf("%s: %d requests, want %d", route, n, tt.wantCalls)
				}
			}
		})
	}
}

// TestWritesAreSerialized holds the first write in the server and checks
// that a second one does not start before it ends.
func TestWritesAreSerialized(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := newFake(t)
		release := make(chan struct{})
		var mu sync.Mutex
		inFlight, most, arrived := 0, 0, 0
		base := fake.Transport()
		tr := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet {
				return base.RoundTrip(r)
			}
			mu.Lock()
			inFlight++
			arrived++
			most = max(most, inFlight)
			first := arrived == 1
			mu.Unlock()
			if first {
				<-release
			}
			defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
			return base.RoundTrip(r)
		})
		c, err := New(Config{APIURL: "http://fake.invalid", Token: fakegithub.DefaultToken, Owner: testOwner, Repo: testRepo, HTTPClient: &http.Client{Transport: tr}})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if _, err := c.CreateCheckRun(t.Context(), "warden", testHead); err != nil {
					t.Errorf("CreateCheckRun() = %v", err)
				}
			})
		}
		synctest.Wait()
		// A read is not held up by the pending write.
		if _, err := c.PullRequest(t.Context(), testPR); err != nil {
			t.Errorf("PullRequest() during a write = %v", err)
		}
		mu.Lock()
		if arrived != 1 {
			t.Errorf("%d writes arrived while the first was in flight, want 1", arrived)
		}
		mu.Unlock()
		close(release)
		wg.Wait()
		if most != 1 || arrived != 2 {
			t.Errorf("writes: at most %d in flight, %d arrived; want 1 and 2", most, arrived)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestPullRequestFiles(t *testing.T) {
	t.Parallel()
	mk := func(n int) []fakegithub.File {
		out := make([]fakegithub.File, n)
		for i := range out {
			out[i] = fakegithub.File{Filename: fmt.Sprintf("f%04d.go", i), Status: "added", Additions: 1, Patch: "@@ -0,0 +1 @@\n+x"}
		}
		return out
	}
	tests := []struct {
		name          string
		files         []fakegithub.File
		changed       int
		wantN         int
		wantTruncated bool
		wantPages     int
	}{
		{"few", testFiles, 0, 3, false, 1},
		{"three pages", mk(250), 0, 250, false, 3},
		{"exactly 3000", mk(3000), 0, 3000, false, 30},
		{"cut at 3000", mk(3000), 3100, 3000, true, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakegithub.New(testOwner, testRepo)
			fake.AddPullRequest(fakegithub.PullRequest{Number: testPR, HeadSHA: testHead, Files: tt.files, ChangedFiles: tt.changed})
			c := start(t, fake, fakegithub.DefaultReadOnlyToken)
			files, truncated, err := c.PullRequestFiles(t.Context(), testPR)
			if err != nil {
				t.Fatalf("PullRequestFiles() = %v", err)
			}
			if len(files) != tt.wantN || truncated != tt.wantTruncated {
				t.Errorf("PullRequestFiles() = %d files, truncated %v, want %d, %v", len(files), truncated, tt.wantN, tt.wantTruncated)
			}
			reqs := fake.RequestsTo(fakegithub.RouteListFiles)
			if len(reqs) != tt.wantPages {
				t.Errorf("PullRequestFiles() made %d requests, want %d", len(reqs), tt.wantPages)
			}
			if got := reqs[0].Query.Get("per_page"); got != "100" {
				t.Errorf("per_page = %q, want 100", got)
			}
		})
	}
	t.Run("fields", func(t *testing.T) {
		t.Parallel()
		c := start(t, newFake(t), fakegithub.DefaultToken)
		files, _, err := c.PullRequestFiles(t.Context(), testPR)
		if err != nil {
			t.Fatal(err)
		}
		want := toFiles(testFiles)
		if diff := cmp.Diff(want, files); diff != "" {
			t.Errorf("PullRequestFiles() (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(Anchors{"a.go": {{Start: 1, End: 6}, {Start: 23, End: 26}}, "b.go": {{Start: 1, End: 2}}}, AnchorsFromFiles(files)); diff != "" {
			t.Errorf("AnchorsFromFiles() (-want +got):\n%s", diff)
		}
	})
}

// TestExhaustedQuotaOnSuccessIsNotRefusedLocally: a 2xx saying
// "x-ratelimit-remaining: 0" must not make go-github refuse the next call
// without asking GitHub (the transport owns waiting).
func TestExhaustedQuotaOnSuccessIsNotRefusedLocally(t *testing.T) {
	t.Parallel()
	fake := newFake(t)
	base := fake.Transport()
	tr := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(r)
		if err == nil {
			resp.Header.Set("X-RateLimit-Remaining", "0")
			resp.Header.Set("X-RateLimit-Reset", fmt.Sprint(time.Now().Add(time.Hour).Unix()))
		}
		return resp, err
	})
	c, err := New(Config{APIURL: "http://fake.invalid", Token: fakegithub.DefaultToken, Owner: testOwner, Repo: testRepo, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := c.PullRequest(t.Context(), testPR); err != nil {
			t.Errorf("PullRequest() call %d = %v, want nil", i+1, err)
		}
	}
	if n := len(fake.RequestsTo(fakegithub.RouteGetPullRequest)); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
}
