package fakegithub

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The routes the fake serves, as GitHub's REST docs name them. Fail and
// Request.Route use these strings.
const (
	RouteCreateCheckRun     = "POST /repos/{owner}/{repo}/check-runs"
	RouteUpdateCheckRun     = "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}"
	RouteGetCheckRun        = "GET /repos/{owner}/{repo}/check-runs/{check_run_id}"
	RouteListCheckRuns      = "GET /repos/{owner}/{repo}/commits/{ref}/check-runs"
	RouteGetPullRequest     = "GET /repos/{owner}/{repo}/pulls/{pull_number}"
	RouteListFiles          = "GET /repos/{owner}/{repo}/pulls/{pull_number}/files"
	RouteListReviewComments = "GET /repos/{owner}/{repo}/pulls/{pull_number}/comments"
	RouteGetReviewComment   = "GET /repos/{owner}/{repo}/pulls/comments/{comment_id}"
	RouteListReviews        = "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews"
	RouteCreateReview       = "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews"
	RouteCreateReply        = "POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"
	RouteListIssueComments  = "GET /repos/{owner}/{repo}/issues/{issue_number}/comments"
	RouteCreateIssueComment = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
	RouteGetIssueComment    = "GET /repos/{owner}/{repo}/issues/comments/{comment_id}"
	RouteUpdateIssueComment = "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}"
	// Reactions on a pull request's conversation comments and on its
	// review comments.
	RouteListIssueCommentReactions   = "GET /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"
	RouteCreateIssueCommentReaction  = "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"
	RouteListReviewCommentReactions  = "GET /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions"
	RouteCreateReviewCommentReaction = "POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions"
	// RouteGetPermission is a login's permission on the repository (see
	// SetRole).
	RouteGetPermission = "GET /repos/{owner}/{repo}/collaborators/{username}/permission"

	// RouteGetAuthenticatedUser answers who the token is: a user's login
	// for TokenLogin's token, 403 for GitHub Actions' installation token.
	RouteGetAuthenticatedUser = "GET /user"
	// RouteGraphQL is GitHub's GraphQL endpoint (see graphql.go); it is
	// not in the REST description.
	RouteGraphQL = "POST /graphql"
)

// Routes lists every route the fake serves.
var Routes = []string{
	RouteCreateCheckRun, RouteUpdateCheckRun, RouteGetCheckRun, RouteGetPullRequest,
	RouteListFiles, RouteListReviewComments, RouteListReviews, RouteCreateReview,
	RouteListCheckRuns, RouteCreateReply, RouteListIssueComments, RouteCreateIssueComment,
	RouteListIssueCommentReactions, RouteCreateIssueCommentReaction,
	RouteListReviewCommentReactions, RouteCreateReviewCommentReaction,
	RouteGetPermission, RouteGetAuthenticatedUser, RouteGraphQL,
	RouteListArtifacts, RouteListRunArtifacts, RouteGetWorkflowRun, RouteDownloadArtifact,
	RouteGetReviewComment, RouteGetIssueComment, RouteUpdateIssueComment,
}

// Limits GitHub enforces and the fake checks, with GitHub's words.
const (
	// MaxAnnotations per request: "The Checks API limits the number of
	// annotations to a maximum of 50 per API request."
	MaxAnnotations = 50
	// MaxOutputText for output.summary and output.text: "Maximum length:
	// 65535 characters." Counted in characters (runes).
	MaxOutputText = 65535
	// MaxBody for review and comment bodies: "Body is too long (maximum is
	// 65536 characters)". Counted in characters (runes).
	MaxBody = 65536
	// MaxFiles listed for a pull request: "Responses include a maximum of
	// 3000 files."
	MaxFiles = 3000
)

// GitHub's 422 texts for review comments outside the diff.
const (
	MsgLineNotInDiff  = "Pull request review thread line must be part of the diff"
	MsgStartSameHunk  = "Pull request review thread start line must be part of the same hunk as the line."
	MsgNoWriteAccess  = "Resource not accessible by integration"
	MsgBadCredentials = "Bad credentials"
)

// Default tokens New sets.
const (
	DefaultToken         = "ghs_fakeWriteToken0123456789"
	DefaultReadOnlyToken = "ghs_fakeReadOnlyToken0123456789"
)

// Server is the fake. Set its exported fields before serving; add state
// with the Add methods at any time. It is safe for concurrent use.
type Server struct {
	// Owner and Repo name the one repository that exists; others are 404.
	Owner, Repo string
	// Token may read and write; ReadOnlyToken may only read (like a fork
	// pull request's GITHUB_TOKEN): its writes get 403 "Resource not
	// accessible by integration". Both are accepted as "Bearer <t>" or
	// "token <t>"; anything else is 401.
	Token, ReadOnlyToken string
	// TokenLogin, when set, makes Token a user's token (a personal access
	// token) of that login: GET /user answers it, and everything written
	// with Token is authored by it. Empty: Token is GitHub Actions'
	// installation token, whose writes are authored by github-actions[bot]
	// and which GET /user refuses with 403 (GitHub API docs:
	// https://docs.github.com/rest/users/users#get-the-authenticated-user;
	// an installation token gets "Resource not accessible by integration").
	TokenLogin string
	// EchoAuthorization makes every error body quote the request's
	// Authorization header, as a careless proxy might, to test that clients
	// never pass it on.
	EchoAuthorization bool
	// Now stamps created objects; nil means time.Now.
	Now func() time.Time
	// ContentLimits makes the fake enforce GitHub's secondary limits on
	// content-creating requests (ContentPerMinute, ContentPerHour) with
	// GitHub's 403, by Now.
	ContentLimits bool
	// DefaultBranch is the repository's default branch; "" means "main".
	DefaultBranch string

	mu        sync.Mutex
	nextID    int64
	checkRuns []*CheckRun
	pulls     map[int]*PullRequest
	reviews   map[int][]Review
	comments  map[int][]ReviewComment
	// issueComments are the conversation comments of every pull request.
	issueComments []IssueComment
	reactions     map[reactionKey][]Reaction
	// contents are files' contents by commit and path, for following
	// review comments across pushes (outdated.go).
	contents map[string]map[string]string
	// threads holds review-thread state by the thread's first comment.
	threads map[int64]*threadState
	// scoped are the tokens GrantToken minted, with their permissions.
	scoped map[string]Permissions
	// roles are the logins' repository roles (SetRole).
	roles map[string]string
	// orgMembers and committers are the logins of the owning
	// organization's members and of the repository's committers
	// (associations.go), lower-cased.
	orgMembers, committers map[string]bool
	faults                 map[string][]*Fault
	requests               []Request
	// times holds when each object (by id) was created and, for check
	// runs, completed.
	times      map[int64]objTimes
	violations []string
	// contentTimes are the accepted content-creating requests' times.
	contentTimes   []time.Time
	contentRefused int
	checked        map[testing.TB]bool // by FailOnViolations
	// actions is GitHub Actions: runs, jobs, caches and artifacts
	// (actions.go, actions_runtime.go).
	actions     actionsState
	blobKeyOnce sync.Once
	blobSecret  []byte
	mux         *http.ServeMux
	muxOnce     sync.Once
}

// New returns a fake for owner/repo with DefaultToken and
// DefaultReadOnlyToken.
func New(owner, repo string) *Server {
	return &Server{Owner: owner, Repo: repo, Token: DefaultToken, ReadOnlyToken: DefaultReadOnlyToken}
}

// Start serves s on a loopback httptest server closed at the end of the
// test. Its URL is the API root for api.github.com style clients; URL +
// "/api/v3" works too. At the end of the test it fails the test with
// every violation of GitHub's REST API description (see Violations).
func (s *Server) Start(tb testing.TB) *httptest.Server {
	tb.Helper()
	ts := httptest.NewServer(s)
	tb.Cleanup(ts.Close)
	s.FailOnViolations(tb)
	return ts
}

// FailOnViolations fails tb at its end with each violation of GitHub's
// REST API description that s saw (see Violations). Start calls it; tests
// that serve s otherwise, e.g. through Transport, call it themselves.
// It does so once per tb, however often it is called.
func (s *Server) FailOnViolations(tb testing.TB) {
	tb.Helper()
	s.mu.Lock()
	if s.checked == nil {
		s.checked = map[testing.TB]bool{}
	}
	done := s.checked[tb]
	s.checked[tb] = true
	s.mu.Unlock()
	if done {
		return
	}
	tb.Cleanup(func() {
		for _, v := range s.Violations() {
			tb.Errorf("fakegithub: GitHub's REST API description (or GraphQL schema) does not allow: %s", v)
		}
	})
}

// Transport returns an in-memory http.RoundTripper that hands each request
// to s, for tests under testing/synctest (no sockets, virtual time). Use it
// with any base URL, e.g. http://fake.invalid/.
func (s *Server) Transport() http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		r := req.Clone(req.Context())
		if r.Body == nil {
			r.Body = http.NoBody
		}
		r.RequestURI = r.URL.RequestURI()
		s.ServeHTTP(rec, r)
		resp := rec.Result()
		resp.Request = req
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Fault scripts an answer to a route instead of the real one.
type Fault struct {
	// Status is the HTTP status: 403 or 429 for rate limits, 5xx for server
	// errors, anything else to taste.
	Status int
	// RetryAfter is the Retry-After header ("60"); empty for none. A 403 or
	// 429 with it is a secondary rate limit, with GitHub's body
	// (documentation_url ending in "secondary-rate-limits").
	RetryAfter string
	// RateLimitReset, when set, adds "x-ratelimit-remaining: 0" and
	// "x-ratelimit-reset" (Unix seconds): a primary rate limit.
	RateLimitReset time.Time
	// Message replaces the default message.
	Message string
	// Times is how many requests the fault answers; <= 0 means 1.
	Times int
}

// Fail scripts route (one of Routes) to answer f for its next f.Times
// requests, after earlier faults for the same route. It panics on an unknown
// route.
func (s *Server) Fail(route string, f Fault) {
	if !slices.Contains(Routes, route) {
		panic(fmt.Sprintf("fakegithub: unknown route %q; want one of %q", route, Routes))
	}
	if f.Times <= 0 {
		f.Times = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faults == nil {
		s.faults = map[string][]*Fault{}
	}
	s.faults[route] = append(s.faults[route], &f)
}

// Request is one recorded request.
type Request struct {
	Method string
	// Path is the URL path without the GitHub Enterprise prefix.
	Path string
	// Enterprise is set when the request came under /api/v3/.
	Enterprise bool
	// Route is the matched route (one of Routes), "" when none matched.
	Route string
	Query url.Values
	// Header is the request's header without Authorization.
	Header http.Header
	// Body is the JSON body; nil when empty.
	Body json.RawMessage
	// Status is what the fake answered.
	Status int
}

// Requests returns every request so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// RequestsTo returns the requests that matched route.
func (s *Server) RequestsTo(route string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Route == route {
			out = append(out, r)
		}
	}
	return out
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.muxOnce.Do(s.routes)
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	rec := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone()}
	rec.Header.Del("Authorization")
	if len(bytes.TrimSpace(body)) > 0 {
		if json.Valid(body) {
			rec.Body = json.RawMessage(body)
		} else {
			rec.Body, _ = json.Marshal(string(body))
		}
	}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	if r.URL.Path == "/api/graphql" { // GitHub Enterprise Server's GraphQL endpoint
		rec.Enterprise = true
		rec.Path = "/graphql"
		r2.URL.Path = rec.Path
		r2.URL.RawPath = ""
	} else if p, ok := strings.CutPrefix(r.URL.Path, "/api/v3/"); ok {
		rec.Enterprise = true
		rec.Path = "/" + p
		r2.URL.Path = rec.Path
		r2.URL.RawPath = ""
	}
	// The answer is buffered so that it can be checked against GitHub's
	// description before it leaves.
	st := &specState{body: body}
	r2 = r2.WithContext(context.WithValue(r2.Context(), specKey{}, st))
	buf := httptest.NewRecorder()
	s.mux.ServeHTTP(buf, r2)
	out := httptest.NewRecorder()
	rec.Status = s.checkResponse(out, r2, st.in, buf)
	rec.Route = cmp.Or(st.route, r2.Pattern)
	// Recorded before the answer leaves: a client that has its answer
	// finds its request in Requests.
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.mu.Unlock()
	for k, v := range out.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(out.Code)
	w.Write(out.Body.Bytes())
}

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	s.handle(RouteCreateCheckRun, true, s.createCheckRun)
	s.handle(RouteUpdateCheckRun, true, s.updateCheckRun)
	s.handle(RouteGetCheckRun, false, s.getCheckRun)
	s.handle(RouteGetPullRequest, false, s.getPullRequest)
	s.handle(RouteListFiles, false, s.listFiles)
	s.handleEither("/repos/{owner}/{repo}/pulls", RouteListReviewComments, "pull_number", s.listReviewComments, RouteGetReviewComment, "comment_id", s.getReviewComment)
	s.handle(RouteListReviews, false, s.listReviews)
	s.handle(RouteCreateReview, true, s.createReview)
	s.handle(RouteListCheckRuns, false, s.listCheckRuns)
	s.handle(RouteCreateReply, true, s.replyToReviewComment)
	s.handleEither("/repos/{owner}/{repo}/issues", RouteListIssueComments, "issue_number", s.listIssueComments, RouteGetIssueComment, "comment_id", s.getIssueComment)
	s.handle(RouteUpdateIssueComment, true, s.updateIssueComment)
	s.handle(RouteCreateIssueComment, true, s.createIssueComment)
	listIC, createIC := s.reactionHandlers(OnIssueComment, RouteListIssueCommentReactions, RouteCreateIssueCommentReaction)
	s.handle(RouteListIssueCommentReactions, false, listIC)
	s.handle(RouteCreateIssueCommentReaction, true, createIC)
	listRC, createRC := s.reactionHandlers(OnReviewComment, RouteListReviewCommentReactions, RouteCreateReviewCommentReaction)
	s.handle(RouteListReviewCommentReactions, false, listRC)
	s.handle(RouteCreateReviewCommentReaction, true, createRC)
	s.handle(RouteGetPermission, false, s.getPermission)
	s.handle(RouteGetAuthenticatedUser, false, s.getAuthenticatedUser)
	s.handle(RouteListArtifacts, false, s.listArtifacts)
	s.handle(RouteListRunArtifacts, false, s.listRunArtifacts)
	s.handle(RouteGetWorkflowRun, false, s.getWorkflowRun)
	s.handle(RouteDownloadArtifact, false, s.downloadArtifact)
	s.mux.HandleFunc(ResultsPath, s.serveRuntime)
	s.mux.HandleFunc(blobPath, s.serveRuntime)
	s.handleGraphQL()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest")
	})
}

// handle registers h behind what every GitHub route does first:
// authentication (401), scripted faults, the repository (404) and write
// permission (403). Before those it checks the request against GitHub's
// description (see specOK).
func (s *Server) handle(route string, write bool, h http.HandlerFunc) {
	s.mux.HandleFunc(route, s.guard(route, write, h))
}

// handleEither serves two GET routes that Go's ServeMux cannot tell apart
// by pattern (".../pulls/{pull_number}/comments" and
// ".../pulls/comments/{comment_id}" both match ".../pulls/comments/comments"),
// on the shape "GET <prefix>/{a}/{b}": b "comments" is the list route with
// its parameter a, a "comments" the single comment b. Anything else is 404.
func (s *Server) handleEither(prefix, list, listParam string, listH http.HandlerFunc, one, oneParam string, oneH http.HandlerFunc) {
	listG, oneG := s.guard(list, false, listH), s.guard(one, false, oneH)
	s.mux.HandleFunc("GET "+prefix+"/{a}/{b}", func(w http.ResponseWriter, r *http.Request) {
		a, b := r.PathValue("a"), r.PathValue("b")
		switch {
		case a == "comments":
			r.SetPathValue(oneParam, b)
			oneG(w, r)
		case b == "comments":
			r.SetPathValue(listParam, a)
			listG(w, r)
		default:
			s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest")
		}
	})
}

// guard is what every GitHub route does before its handler h:
// authentication (401), scripted faults, the repository (404) and write
// permission (403), after checking the request against GitHub's
// description (see specOK).
func (s *Server) guard(route string, write bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if st, _ := r.Context().Value(specKey{}).(*specState); st != nil {
			st.route = route
		}
		s.validateRequest(r, route)
		access := s.access(r.Header.Get("Authorization"))
		if access == noAccess {
			s.errorJSON(w, r, http.StatusUnauthorized, MsgBadCredentials, nil, "https://docs.github.com/rest")
			return
		}
		if s.fault(w, r, route) {
			return
		}
		if route != RouteGetAuthenticatedUser && (r.PathValue("owner") != s.Owner || r.PathValue("repo") != s.Repo) {
			s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest")
			return
		}
		if write && access != readWrite {
			s.errorJSON(w, r, http.StatusForbidden, MsgNoWriteAccess, nil, docsURL(route))
			return
		}
		if s.scopedDenied(w, r, route) {
			return
		}
		if contentCreating[route] && s.overContentLimit() {
			s.secondaryLimited(w, r)
			return
		}
		h(w, r)
	}
}

type accessLevel int

const (
	noAccess accessLevel = iota
	readOnly
	readWrite
)

func (s *Server) access(auth string) accessLevel {
	scheme, tok, ok := strings.Cut(auth, " ")
	if !ok || (!strings.EqualFold(scheme, "bearer") && !strings.EqualFold(scheme, "token")) || tok == "" {
		return noAccess
	}
	switch tok {
	case s.Token, AppToken:
		return readWrite
	case s.ReadOnlyToken:
		return readOnly
	}
	s.mu.Lock()
	_, scoped := s.scoped[tok]
	s.mu.Unlock()
	if scoped {
		return readWrite // what each route may do is permitted's
	}
	return noAccess
}

// fault answers r with the next scripted fault for route, if any.
func (s *Server) fault(w http.ResponseWriter, r *http.Request, route string) bool {
	s.mu.Lock()
	q := s.faults[route]
	if len(q) == 0 {
		s.mu.Unlock()
		return false
	}
	f := *q[0]
	q[0].Times--
	if q[0].Times <= 0 {
		s.faults[route] = q[1:]
	}
	s.mu.Unlock()

	msg, doc := f.Message, "https://docs.github.com/rest"
	switch {
	case f.RetryAfter != "":
		w.Header().Set("Retry-After", f.RetryAfter)
		if msg == "" {
			msg = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
		}
		doc = "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits"
	case !f.RateLimitReset.IsZero():
		if msg == "" {
			msg = "API rate limit exceeded for installation ID 1."
		}
		doc = "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-the-primary-rate-limit"
	case msg == "" && f.Status >= 500:
		msg = "Server Error"
	case msg == "":
		msg = http.StatusText(f.Status)
	}
	if !f.RateLimitReset.IsZero() {
		w.Header().Set("X-RateLimit-Limit", "1000")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Used", "1000")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(f.RateLimitReset.Unix(), 10))
	}
	s.errorJSON(w, r, f.Status, msg, nil, doc)
	return true
}

// errorJSON writes GitHub's error shape: {"message", "errors",
// "documentation_url", "status"}.
func (s *Server) errorJSON(w http.ResponseWriter, r *http.Request, status int, msg string, errs []string, doc string) {
	if s.EchoAuthorization {
		msg += " (request Authorization: " + r.Header.Get("Authorization") + ")"
		for i := range errs {
			errs[i] += " [" + r.Header.Get("Authorization") + "]"
		}
	}
	body := map[string]any{"message": msg, "documentation_url": doc, "status": strconv.Itoa(status)}
	if errs != nil {
		body["errors"] = errs
	}
	writeJSON(w, status, body)
}

// unprocessable is GitHub's 422 for a rejected body.
func (s *Server) unprocessable(w http.ResponseWriter, r *http.Request, route string, msg string, errs ...string) {
	s.errorJSON(w, r, http.StatusUnprocessableEntity, msg, errs, docsURL(route))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func docsURL(route string) string {
	switch route {
	case RouteCreateCheckRun:
		return "https://docs.github.com/rest/checks/runs#create-a-check-run"
	case RouteUpdateCheckRun:
		return "https://docs.github.com/rest/checks/runs#update-a-check-run"
	case RouteCreateReview:
		return "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"
	case RouteCreateReply:
		return "https://docs.github.com/rest/pulls/comments#create-a-reply-for-a-review-comment"
	case RouteCreateIssueComment:
		return "https://docs.github.com/rest/issues/comments#create-an-issue-comment"
	case RouteGetAuthenticatedUser:
		return "https://docs.github.com/rest/users/users#get-the-authenticated-user"
	}
	return "https://docs.github.com/rest"
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}

type objTimes struct{ created, completed time.Time }

// stamp records that object id was created now. Call with s.mu held.
func (s *Server) stamp(id int64) {
	if s.times == nil {
		s.times = map[int64]objTimes{}
	}
	s.times[id] = objTimes{created: s.now()}
}

// stampCompleted records when c was first completed. Call with s.mu held.
func (s *Server) stampCompleted(c *CheckRun) {
	if t := s.times[c.ID]; c.Status == "completed" && t.completed.IsZero() {
		t.completed = s.now()
		s.times[c.ID] = t
	}
}

// paginate serves items page by page like GitHub: per_page (default 30,
// at most 100) and page (from 1), with a Link header for the next and last
// pages.
func paginate[T any](w http.ResponseWriter, r *http.Request, items []T) {
	per := 30
	if v, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && v > 0 {
		per = min(v, 100)
	}
	page := 1
	if v, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && v > 0 {
		page = v
	}
	last := max(1, (len(items)+per-1)/per)
	lo := min(len(items), (page-1)*per)
	hi := min(len(items), lo+per)
	link := func(p int, rel string) string {
		u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path}
		if u.Host == "" {
			u.Host = "fake.invalid"
		}
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(per))
		u.RawQuery = q.Encode()
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	out := items[lo:hi]
	if out == nil {
		out = []T{}
	}
	writeJSON(w, http.StatusOK, out)
}

// writer is the login that what Token writes is authored by (TokenLogin).
func (s *Server) writer() string {
	if s.TokenLogin != "" {
		return s.TokenLogin
	}
	return "github-actions[bot]"
}

// getAuthenticatedUser answers GET /user: the user of a user's token
// (TokenLogin); an installation token, GitHub Actions' included, gets
// 403 "Resource not accessible by integration"
// (https://docs.github.com/rest/users/users#get-the-authenticated-user).
func (s *Server) getAuthenticatedUser(w http.ResponseWriter, r *http.Request) {
	if s.TokenLogin == "" || s.access(r.Header.Get("Authorization")) != readWrite {
		s.errorJSON(w, r, http.StatusForbidden, MsgNoWriteAccess, nil, docsURL(RouteGetAuthenticatedUser))
		return
	}
	if !s.specOK(w, r, RouteGetAuthenticatedUser) {
		return
	}
	u := userJSON(s.TokenLogin, "User")
	for k, v := range map[string]any{
		"name": nil, "company": nil, "blog": "", "location": nil, "email": nil, "hireable": nil, "bio": nil,
		"public_repos": 0, "public_gists": 0, "followers": 0, "following": 0,
		"created_at": timestamp(s.now()), "updated_at": timestamp(s.now()),
	} {
		u[k] = v
	}
	writeJSON(w, http.StatusOK, u)
}
