package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v62/github"

	"github.com/org/warden/secrets"
)

// DefaultAPIURL is GitHub.com's REST API root.
const DefaultAPIURL = "https://api.github.com"

// Config says where and as whom the Client talks to GitHub. cmd/warden fills
// it from GITHUB_API_URL, GITHUB_SERVER_URL, GITHUB_REPOSITORY and the
// github-token input.
type Config struct {
	// APIURL is the REST root (GITHUB_API_URL): https://api.github.com, or
	// https://ghe.example.com/api/v3 on GitHub Enterprise Server. Empty
	// means DefaultAPIURL. It is used as given: no /api/v3 is appended.
	APIURL string
	// ServerURL is the web root (GITHUB_SERVER_URL) that links in comment
	// bodies may point to. Empty: derived from APIURL (https://github.com
	// for api.github.com, else APIURL without a trailing /api/v3).
	ServerURL string
	// Token authenticates every request. It is never printed, logged or put
	// in an error: String, GoString and LogValue redact it.
	Token string
	// Login is the login Token posts as (input github-token-login); empty
	// means ask GitHub (Identity). Only comments by this login carry
	// warden's markers.
	Login       string
	Owner, Repo string
	// HTTPClient sends the requests; nil means a plain client. It must not
	// retry on its own: the Client owns retries.
	HTTPClient *http.Client
	// Logger receives waits and retries; nil discards.
	Logger *slog.Logger
	// Wait waits for d or until ctx is done, whichever comes first, and
	// returns ctx's error in the second case. Nil means a timer and a
	// select. Tests inject it (or run under testing/synctest).
	Wait func(ctx context.Context, d time.Duration) error
	// MaxRateLimitWait caps one rate-limit wait whatever the deadline; a
	// longer Retry-After is an error at once. Zero means
	// DefaultMaxRateLimitWait.
	MaxRateLimitWait time.Duration
}

// DefaultMaxRateLimitWait is the longest single rate-limit wait by default.
// GitHub's secondary limits usually ask for about a minute ("wait for at
// least one minute before retrying", rate-limits-for-the-rest-api.md); the
// review budget is 15 minutes.
const DefaultMaxRateLimitWait = 5 * time.Minute

// String describes the configuration with the token redacted.
func (c Config) String() string {
	return fmt.Sprintf("github.Config{APIURL:%q ServerURL:%q Token:REDACTED Owner:%q Repo:%q}",
		redactURL(c.APIURL), redactURL(c.ServerURL), c.Owner, c.Repo)
}

// GoString is String, so that %#v cannot print the token either.
func (c Config) GoString() string { return c.String() }

// LogValue implements slog.LogValuer with the token redacted.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("api_url", redactURL(c.APIURL)),
		slog.String("owner", c.Owner),
		slog.String("repo", c.Repo),
		slog.String("token", "REDACTED"),
	)
}

// Client talks to one repository on GitHub. It is safe for concurrent use;
// its writes are serialized (GitHub: "make requests for a single user or
// client ID serially"), reads are not.
type Client struct {
	gh          *gh.Client
	owner, repo string
	serverURL   string
	token       string
	log         *slog.Logger
	tr          *transport

	identityMu sync.Mutex
	login      string // Identity's answer, or Config.Login

	stateKey []byte // seals hidden records (SetStateKey); nil: none
}

// ErrNoWriteAccess reports a write that GitHub refused with 403 for a reason
// other than a rate limit: typically the read-only GITHUB_TOKEN of a fork's
// pull request ("Resource not accessible by integration"). Callers fall back
// to WriteAnnotations and the job summary. Errors wrap it together with the
// operation and the underlying *gh.ErrorResponse.
var ErrNoWriteAccess = errors.New("the GitHub token cannot write to this repository (403)")

// RateLimitedError reports a rate limit that was not waited out, because the
// wait would pass the caller's deadline or MaxRateLimitWait, or because
// waiting did not help after MaxRateLimitRetries tries. Err is go-github's
// typed error (*gh.RateLimitError, *gh.AbuseRateLimitError or
// *gh.ErrorResponse for a 429).
type RateLimitedError struct {
	Wait   time.Duration // what GitHub asked for
	Reason string        // why it was not waited out
	Err    error
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("GitHub rate limit: retry after %s %s: %v", e.Wait.Round(time.Second), e.Reason, e.Err)
}

func (e *RateLimitedError) Unwrap() error { return e.Err }

// MaxRateLimitRetries is how often one request is retried after rate-limit
// waits before giving up ("give up after N tries", GitHub's guidance).
const MaxRateLimitRetries = 3

// New checks cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	if cfg.Token == "" {
		return nil, errors.New("github: no token")
	}
	if cfg.Owner == "" || cfg.Repo == "" || strings.Contains(cfg.Owner+cfg.Repo, "/") {
		return nil, fmt.Errorf("github: owner %q and repository %q must both be set, without slashes", cfg.Owner, cfg.Repo)
	}
	api := cfg.APIURL
	if api == "" {
		api = DefaultAPIURL
	}
	base, err := url.Parse(strings.TrimSuffix(api, "/") + "/")
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" || base.User != nil {
		return nil, fmt.Errorf("github: API URL %q is not an http(s) URL without credentials", redactURL(api))
	}
	server := cfg.ServerURL
	if server == "" {
		server = deriveServerURL(base)
	}
	server = strings.TrimSuffix(server, "/")

	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var hc http.Client
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
	}
	base0 := hc.Transport
	if base0 == nil {
		base0 = http.DefaultTransport
	}
	wait := cfg.Wait
	if wait == nil {
		wait = sleep
	}
	maxWait := cfg.MaxRateLimitWait
	if maxWait <= 0 {
		maxWait = DefaultMaxRateLimitWait
	}
	tr := &transport{
		base:    base0,
		wait:    wait,
		maxWait: maxWait,
		log:     log,
		token:   cfg.Token,
		writes:  make(chan struct{}, 1),
	}
	hc.Transport = tr
	g := gh.NewClient(&hc).WithAuthToken(cfg.Token)
	g.BaseURL = base
	g.UploadURL = base
	c := &Client{
		gh:        g,
		owner:     cfg.Owner,
		repo:      cfg.Repo,
		serverURL: server,
		token:     cfg.Token,
		log:       log,
		tr:        tr,
		login:     strings.TrimSpace(cfg.Login),
	}
	return c, nil
}

// REST returns c's go-github client and its repository, for the GitHub
// services of other packages (ghbot): a call through it gets c's
// transport (retries, rate-limit waits, serialized writes, the write
// budget) and its errors must go through Fail before anyone sees them.
func (c *Client) REST() (client *gh.Client, owner, repo string) { return c.gh, c.owner, c.repo }

// RepoURL is the repository's web address (the server URL, owner and
// name): the one host whose links neutralized text keeps.
func (c *Client) RepoURL() string { return c.repoURL() }

// Fail is c's error handling for a call made through REST: it wraps err
// with op, classifies a write's 403 as ErrNoWriteAccess and removes the
// token from everything the error can say. nil stays nil.
func (c *Client) Fail(op string, write bool, err error) error { return c.fail(op, write, err) }

// redactURL hides a password in a URL; an unparsable URL is hidden whole.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "REDACTED"
	}
	return u.Redacted()
}

func deriveServerURL(api *url.URL) string {
	if strings.EqualFold(api.Host, "api.github.com") {
		return "https://github.com"
	}
	u := *api
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v3")
	u.RawPath = ""
	return strings.TrimSuffix(u.String(), "/")
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fail wraps err with the operation, classifies a write's 403 as
// ErrNoWriteAccess, and redacts the token from everything the error can say.
func (c *Client) fail(op string, write bool, err error) error {
	if err == nil {
		return nil
	}
	scrub(err, c.token)
	if rl := (*RateLimitedError)(nil); errors.As(err, &rl) {
		err = rl // drop net/http's "Post <url>:" wrapper; rl names the request
	}
	var er *gh.ErrorResponse
	if write && errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusForbidden {
		// go-github gives a rate-limited 403 its own types
		// (*gh.RateLimitError, *gh.AbuseRateLimitError), and the transport
		// turns a 403 with Retry-After into *RateLimitedError, so a plain
		// *gh.ErrorResponse with 403 here is a permission problem: "Resource
		// not accessible by integration" for a read-only GITHUB_TOKEN, or an
		// archived repository, or SAML enforcement. No string is matched.
		err = fmt.Errorf("%w: %w", ErrNoWriteAccess, err)
	}
	return &redactedError{msg: redact(op+": "+err.Error(), c.token), err: err}
}

// redactedError carries a message with the token removed and keeps the
// chain for errors.Is and errors.As.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redact removes the token (and any echoed Bearer credential) from s:
// secrets.Mask, the one redaction of held keys.
func redact(s, token string) string { return secrets.Mask(s, token) }

// scrub removes the token from the fields of go-github's typed errors in the
// chain, so that a caller who unwraps one and prints it cannot leak it (a
// server or proxy may echo the request's Authorization header).
func scrub(err error, token string) {
	var er *gh.ErrorResponse
	if errors.As(err, &er) {
		er.Message = redact(er.Message, token)
		er.DocumentationURL = redact(er.DocumentationURL, token)
		for i := range er.Errors {
			e := &er.Errors[i]
			e.Message, e.Field, e.Code, e.Resource = redact(e.Message, token), redact(e.Field, token), redact(e.Code, token), redact(e.Resource, token)
		}
		if er.Block != nil {
			er.Block.Reason = redact(er.Block.Reason, token)
		}
		scrubBody(er.Response, token)
	}
	var rl *gh.RateLimitError
	if errors.As(err, &rl) {
		rl.Message = redact(rl.Message, token)
		scrubBody(rl.Response, token)
	}
	var ab *gh.AbuseRateLimitError
	if errors.As(err, &ab) {
		ab.Message = redact(ab.Message, token)
		scrubBody(ab.Response, token)
	}
}

func scrubBody(r *http.Response, token string) {
	if r == nil || r.Body == nil {
		return
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader([]byte(redact(string(b), token))))
}

// transport owns every retry and wait between go-github and the network:
// rate limits (waited out when the wait fits), one retry on 5xx, and the
// serialization of writes. It runs below go-github so that go-github's own
// "don't call before the reset" bookkeeping never sees a limit that was
// waited out.
type transport struct {
	base    http.RoundTripper
	wait    func(context.Context, time.Duration) error
	maxWait time.Duration
	log     *slog.Logger
	token   string
	writes  chan struct{} // a mutex that a ctx can abandon
}

type ctxKey int

const noServerErrorRetry ctxKey = iota

func isWrite(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if isWrite(req.Method) {
		select {
		case t.writes <- struct{}{}:
			defer func() { <-t.writes }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	retried5xx := ctx.Value(noServerErrorRetry) != nil
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 {
			r = req.Clone(ctx)
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		switch {
		case resp.StatusCode >= 500 && !retried5xx:
			retried5xx = true
			t.log.Warn("GitHub server error; retrying once", "method", req.Method, "status", resp.StatusCode, "attempt", attempt)
			drain(resp)
			if err := t.wait(ctx, time.Second); err != nil {
				return nil, err
			}
			continue
		case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests:
			d, limited, ghErr := rateLimitWait(resp)
			if !limited {
				return resp, nil
			}
			var reason string
			switch {
			case attempt > MaxRateLimitRetries:
				reason = fmt.Sprintf("after %d tries", MaxRateLimitRetries)
			case d > t.maxWait:
				reason = fmt.Sprintf("exceeds the longest wait allowed (%s)", t.maxWait)
			default:
				if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
					reason = fmt.Sprintf("does not fit the time left (%s)", time.Until(dl).Round(time.Second))
				}
			}
			if reason != "" {
				scrub(ghErr, t.token)
				return nil, &RateLimitedError{Wait: d, Reason: reason, Err: ghErr}
			}
			t.log.Warn("GitHub rate limit; waiting", "method", req.Method, "status", resp.StatusCode, "attempt", attempt, "duration", d)
			if err := t.wait(ctx, d); err != nil {
				return nil, err
			}
			continue
		case resp.StatusCode < 300 && resp.Header.Get("X-RateLimit-Remaining") == "0":
			// go-github would refuse every later call locally, without
			// waiting, until the reset. Hidden from it, the next call
			// reaches GitHub, whose 403 this transport waits out.
			resp.Header.Del("X-RateLimit-Remaining")
			resp.Header.Del("X-RateLimit-Reset")
		}
		return resp, nil
	}
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
}

// rateLimitWait reads a 403 or 429 the way GitHub's rate-limit guide asks
// ("If the retry-after response header is present, you should not retry your
// request until after that many seconds has elapsed. If the
// x-ratelimit-remaining header is 0, you should not retry your request until
// after the time specified by the x-ratelimit-reset header. Otherwise, wait
// for at least one minute before retrying."). A 403 without any of these
// signals is not a rate limit. The body is consumed: the typed error from
// go-github's CheckResponse is returned instead.
func rateLimitWait(resp *http.Response) (time.Duration, bool, error) {
	defer resp.Body.Close()
	err := gh.CheckResponse(resp)
	retryAfter := func() (time.Duration, bool) {
		v := strings.TrimSpace(resp.Header.Get("Retry-After"))
		if v == "" {
			return 0, false
		}
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second)), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(0, time.Until(t)), true
		}
		return 0, false
	}
	reset := func() (time.Duration, bool) {
		if resp.Header.Get("X-RateLimit-Remaining") != "0" {
			return 0, false
		}
		s, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64)
		if err != nil {
			return 0, false
		}
		// One second of margin: the reset is given in whole seconds.
		return max(0, time.Until(time.Unix(s, 0))) + time.Second, true
	}
	var (
		rl *gh.RateLimitError
		ab *gh.AbuseRateLimitError
	)
	switch {
	case errors.As(err, &ab):
		if ab.RetryAfter != nil {
			return *ab.RetryAfter, true, err
		}
		if d, ok := retryAfter(); ok {
			return d, true, err
		}
		return time.Minute, true, err
	case errors.As(err, &rl):
		if d, ok := retryAfter(); ok {
			return d, true, err
		}
		return max(0, time.Until(rl.Rate.Reset.Time)) + time.Second, true, err
	}
	if d, ok := retryAfter(); ok {
		return d, true, err
	}
	if d, ok := reset(); ok {
		return d, true, err
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return time.Minute, true, err
	}
	return 0, false, err
}
