package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// GitHub's secondary limits on content-creating requests: "No more than 80
// content-generating requests per minute and no more than 500
// content-generating requests per hour are allowed"
// (rate-limits-for-the-rest-api.md, about secondary rate limits;
// REFERENCE.md A.3). "There is no API to query secondary-limit state", so
// warden keeps its own count and stays under both.
const (
	ContentPerMinute = 80
	ContentPerHour   = 500
)

// DefaultReserve is how many of the hour's content-creating requests are
// kept for the ones that say what happened (a command's reply, the final
// summary comment): marked with Essential, only they may use them.
const DefaultReserve = 5

// ErrWriteBudget is wrapped by every error of a request the WriteBudget did
// not let through: the request was not sent. Callers list what it would
// have posted as "not posted: rate budget" in the summary and the report.
var ErrWriteBudget = errors.New("not posted: rate budget")

// BudgetError says which limit stopped a content-creating request.
type BudgetError struct {
	// Window is "minute" or "hour" (warden's own count), or "github" when
	// GitHub itself asked for a pause (Retry-After, a spent primary limit,
	// a secondary-limit refusal) that does not fit.
	Window string
	// Used and Limit are the window's count and its limit (the hour's less
	// the reserve, for a request that is not essential).
	Used, Limit int
	// Wait is how long until a slot frees; the wait did not fit.
	Wait time.Duration
}

func (e *BudgetError) Error() string {
	if e.Window == "github" {
		return fmt.Sprintf("%s: GitHub asked to wait %s (its rate limits, shared with every run on the repository), later than the time left",
			ErrWriteBudget, e.Wait.Round(time.Second))
	}
	return fmt.Sprintf("%s: %d of %d content-creating requests per %s used (GitHub's secondary limit); the next slot is in %s, later than the time left",
		ErrWriteBudget, e.Used, e.Limit, e.Window, e.Wait.Round(time.Second))
}

func (e *BudgetError) Unwrap() error { return ErrWriteBudget }

// WriteBudget paces the content-creating requests of one run (comments,
// reviews, replies, reactions, GraphQL mutations: see ContentCreating)
// under GitHub's secondary limits. A request waits while the minute's
// window is full and the wait fits its context; when the hour's budget is
// spent, or the wait would pass the deadline, it is refused with a
// *BudgetError and never sent. It is safe for concurrent use.
//
// Batching comes first (one review carries all of a run's inline comments,
// see PostReview), so a run normally makes a handful of writes; the budget
// is what keeps a run that cannot batch (resolving many threads, replies)
// and the runs before it in the same hour honest.
//
// Other runs on the repository (other pull requests' reviews, in parallel)
// share GitHub's limits but not this count, and GitHub has no API for the
// secondary limits' state. So the budget also reads what GitHub answers
// (RoundTripper): a 403 or 429 that is a rate limit pauses every later
// request until GitHub's Retry-After, the primary limit's reset
// (x-ratelimit-remaining: 0), or a minute for a secondary limit that names
// no time ("Handle rate limit errors appropriately",
// rate-limits-for-the-rest-api.md), and the refused request is sent again
// once after that wait when it fits; a wait that does not fit refuses the
// request, unsent. The review workflow's concurrency group keeps one review
// run per pull request; command runs (a group per comment) and other pull
// requests' runs share the limits too.
type WriteBudget struct {
	// PerMinute and PerHour are the limits; <= 0 means ContentPerMinute
	// and ContentPerHour.
	PerMinute, PerHour int
	// Reserve is kept of the hour's budget for Essential requests; < 0
	// means none, 0 means DefaultReserve.
	Reserve int
	// Now is the clock; nil means time.Now (testing/synctest moves it).
	Now func() time.Time

	mu       sync.Mutex
	sent     []time.Time // the last hour's, oldest first
	refused  int
	lastWait time.Duration
	// pausedUntil is when GitHub said requests may go again (Retry-After,
	// a primary limit's reset, a secondary limit's minute); zero: none.
	pausedUntil time.Time
	// GitHubPauses counts the rate-limit answers GitHub gave.
	pauses int
}

// maxGitHubWait is the longest pause GitHub asks for that a request waits
// out (when its context allows); a longer one refuses it.
const maxGitHubWait = 5 * time.Minute

// NewWriteBudget returns a budget with GitHub's documented limits.
func NewWriteBudget() *WriteBudget { return &WriteBudget{} }

type essentialKey struct{}

// Essential marks ctx's requests as ones the reserve is kept for.
func Essential(ctx context.Context) context.Context {
	return context.WithValue(ctx, essentialKey{}, true)
}

func (b *WriteBudget) limits(essential bool) (minute, hour int) {
	minute, hour = b.PerMinute, b.PerHour
	if minute <= 0 {
		minute = ContentPerMinute
	}
	if hour <= 0 {
		hour = ContentPerHour
	}
	reserve := b.Reserve
	if reserve == 0 {
		reserve = DefaultReserve
	}
	if !essential && reserve > 0 {
		hour = max(0, hour-reserve)
	}
	return minute, hour
}

func (b *WriteBudget) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Record counts content-creating requests made before this budget
// existed (e.g. warden's own comments of the last hour, by their creation
// times), so that runs close together share the hour.
func (b *WriteBudget) Record(times ...time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sent = append(b.sent, times...)
	sortTimes(b.sent)
}

func sortTimes(ts []time.Time) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].Before(ts[j-1]); j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

// Take reserves one content-creating request, waiting while the minute's
// window is full. It returns a *BudgetError (wrapping ErrWriteBudget) when
// the hour is spent or the wait does not fit ctx, and ctx's error when ctx
// ends while waiting.
func (b *WriteBudget) Take(ctx context.Context) error {
	essential, _ := ctx.Value(essentialKey{}).(bool)
	perMinute, perHour := b.limits(essential)
	if err := b.hold(ctx); err != nil {
		return err
	}
	for {
		b.mu.Lock()
		now := b.now()
		for len(b.sent) > 0 && !b.sent[0].After(now.Add(-time.Hour)) {
			b.sent = b.sent[1:]
		}
		inMinute := 0
		var oldestInMinute time.Time
		for _, t := range b.sent {
			if t.After(now.Add(-time.Minute)) {
				if inMinute == 0 {
					oldestInMinute = t
				}
				inMinute++
			}
		}
		var wait time.Duration
		var window string
		var used, limit int
		switch {
		case len(b.sent) >= perHour:
			// The slot frees when enough of the hour's oldest age out.
			idx := len(b.sent) - perHour
			window, used, limit = "hour", len(b.sent), perHour
			wait = b.sent[idx].Add(time.Hour).Sub(now)
			if perHour == 0 {
				wait = time.Hour
			}
		case inMinute >= perMinute:
			window, used, limit = "minute", inMinute, perMinute
			wait = oldestInMinute.Add(time.Minute).Sub(now)
		default:
			b.sent = append(b.sent, now)
			b.mu.Unlock()
			return nil
		}
		fits := true
		if dl, ok := ctx.Deadline(); ok && now.Add(wait).After(dl) {
			fits = false
		}
		if window == "hour" && wait > 10*time.Minute {
			fits = false // a run does not sit out the hour
		}
		if !fits {
			b.refused++
			b.mu.Unlock()
			return &BudgetError{Window: window, Used: used, Limit: limit, Wait: wait}
		}
		b.lastWait = wait
		b.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// hold waits while GitHub has asked for a pause, when the wait fits ctx
// and maxGitHubWait; else it refuses with a *BudgetError (Window
// "github").
func (b *WriteBudget) hold(ctx context.Context) error {
	b.mu.Lock()
	wait := b.pausedUntil.Sub(b.now())
	if wait <= 0 {
		b.mu.Unlock()
		return nil
	}
	fits := wait <= maxGitHubWait
	if dl, ok := ctx.Deadline(); ok && b.now().Add(wait).After(dl) {
		fits = false
	}
	if !fits {
		b.refused++
		b.mu.Unlock()
		return &BudgetError{Window: "github", Wait: wait}
	}
	b.lastWait = wait
	b.mu.Unlock()
	return sleep(ctx, wait)
}

// observe reads GitHub's answer: a rate-limit refusal, or a primary limit
// spent (x-ratelimit-remaining: 0 on any answer), pauses every later
// request (see WriteBudget). It reports whether it paused.
func (b *WriteBudget) observe(resp *http.Response) bool {
	wait, limited := pauseOf(resp, b.now())
	if !limited {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pauses++
	if until := b.now().Add(wait); until.After(b.pausedUntil) {
		b.pausedUntil = until
	}
	return true
}

// pauseOf says how long GitHub's answer asks every request to wait, as
// GitHub's documentation has it (rate-limits-for-the-rest-api.md, "Handle
// rate limit errors appropriately", and "Checking the status of your rate
// limit"): any answer with x-ratelimit-remaining 0 until x-ratelimit-reset
// (UTC epoch seconds; the primary limit, which every run on the
// repository's token shares); a 403 or 429 refusal for its retry-after
// (seconds or an HTTP date), else for a secondary limit that names no time
// at least one minute. The read happens below the Client's transport,
// which hides a spent primary limit from go-github.
//
// GitHub API docs: https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#handle-rate-limit-errors-appropriately
func pauseOf(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp == nil {
		return 0, false
	}
	if resp.StatusCode < 300 {
		if resp.Header.Get("X-RateLimit-Remaining") != "0" {
			return 0, false
		}
		if reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return max(0, time.Unix(reset, 0).Sub(now)) + time.Second, true
		}
		return 0, false
	}
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	if ra := strings.TrimSpace(resp.Header.Get("Retry-After")); ra != "" {
		if s, err := strconv.Atoi(ra); err == nil && s >= 0 {
			return time.Duration(s) * time.Second, true
		}
		if at, err := http.ParseTime(ra); err == nil {
			return max(0, at.Sub(now)), true
		}
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return max(0, time.Unix(reset, 0).Sub(now)) + time.Second, true
		}
		return time.Minute, true
	}
	if resp.StatusCode == http.StatusTooManyRequests || secondaryLimitBody(resp) {
		return time.Minute, true
	}
	return 0, false
}

// secondaryLimitBody reports whether a 403's body is GitHub's secondary
// rate limit message ("You have exceeded a secondary rate limit"); it
// leaves the body readable.
func secondaryLimitBody(resp *http.Response) bool {
	if resp.Body == nil {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return err == nil && strings.Contains(strings.ToLower(string(b)), "secondary rate limit")
}

// Used is how many content-creating requests the last hour holds; Refused
// how many Take refused.
func (b *WriteBudget) Used() (used, refused int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	for _, t := range b.sent {
		if t.After(now.Add(-time.Hour)) {
			used++
		}
	}
	return used, b.refused
}

// ContentCreating reports whether a request creates content in GitHub's
// sense: a POST that creates a comment, a review, a reply, a reaction, an
// issue or a pull request, or a GraphQL mutation (body starting with
// "mutation"). Check-run writes and edits are not counted: they create no
// content people are notified of.
func ContentCreating(req *http.Request) bool {
	if req.Method != http.MethodPost {
		return false
	}
	p := strings.TrimSuffix(req.URL.Path, "/")
	if strings.HasSuffix(p, "/graphql") {
		return isMutation(req)
	}
	for _, suffix := range []string{"/comments", "/reviews", "/replies", "/reactions", "/issues", "/pulls"} {
		if strings.HasSuffix(p, suffix) {
			return true
		}
	}
	return false
}

func isMutation(req *http.Request) bool {
	if req.GetBody == nil {
		return true // unknown: count it
	}
	body, err := req.GetBody()
	if err != nil {
		return true
	}
	defer body.Close()
	var q struct {
		Query string `json:"query"`
	}
	if err := json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(&q); err != nil {
		return true
	}
	return strings.HasPrefix(strings.TrimSpace(q.Query), "mutation")
}

// RoundTripper returns base (nil: http.DefaultTransport) with every
// content-creating request passed through b first: a refused request is
// never sent, and its error wraps ErrWriteBudget. Every request waits out
// a pause GitHub asked for (observe), or is refused when the pause does not
// fit; the Client's transport above it stays the one that retries a
// request GitHub refused. Put it under the Client (Config.HTTPClient's
// Transport).
func (b *WriteBudget) RoundTripper(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		take := b.hold
		if ContentCreating(req) {
			take = b.Take
		}
		if err := take(req.Context()); err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, err
		}
		resp, err := base.RoundTrip(req)
		if err == nil {
			b.observe(resp)
		}
		return resp, err
	})
}

// GitHubPauses is how many times GitHub's answers paused the budget: a
// rate-limit refusal, or a primary limit spent.
func (b *WriteBudget) GitHubPauses() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pauses
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// SplitComments sizes the reviews that carry n inline comments at most per
// to a review (<= 0: DefaultMaxComments): the fewest content-creating
// requests that post them all inline.
func SplitComments(n, per int) []int {
	if per <= 0 {
		per = DefaultMaxComments
	}
	var out []int
	for n > 0 {
		k := min(n, per)
		out = append(out, k)
		n -= k
	}
	return out
}
