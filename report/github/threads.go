package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// Thread is one review thread that warden started on a pull request (its
// first comment carries a finding's fingerprint marker), as GitHub's
// GraphQL API lists it.
type Thread struct {
	ID string // GraphQL node id, for resolveReviewThread
	// Mark is the finding's, from its marker (report.Mark; of an earlier
	// version, Version 2 or 1).
	Mark report.Mark
	// Sealed is set when the first comment ends with its fingerprint
	// marker sealed under the state key (Client.LastRecord): only then can
	// a reply, a reaction or a resolution in the thread dismiss a finding.
	Sealed bool
	Path   string
	// Line is the thread's line in the current diff; 0 when the thread is
	// outdated (its lines changed). OriginalLine is the line it was
	// posted on.
	Line, OriginalLine int
	Outdated           bool
	Resolved           bool
	ResolvedBy         string // login; "" when not resolved
	CanResolve         bool   // viewerCanResolve: the token may resolve it
	// RootID is the first comment's REST id (for replies and reactions).
	RootID  int64
	Replies []ThreadReply
	// ThumbsDown are the logins of the people who gave the first comment a
	// thumbs-down, read with the thread (bots' reactions carry no login).
	// ThumbsDownAll is false when there were more than the query reads
	// (100): the REST listing, ThumbsDown, reads them all.
	ThumbsDown    []string
	ThumbsDownAll bool
}

// ThreadReply is a later comment in a thread.
type ThreadReply struct {
	Author string // login, without "[bot]"
	Bot    bool
	// Warden is set when warden's own login wrote it (Identity): only
	// then do its markers count.
	Warden bool
	Body   string
	// Record is the hidden record that ends a reply of warden's (its
	// text: "dismissed:<fingerprint>", "fixed"), and Sealed whether its
	// seal holds; "" when the reply ends with none.
	Record string
	Sealed bool
}

// reviewThreadsQuery lists a pull request's review threads, 50 a page,
// each with its first 50 comments and the first comment's thumbs-down
// reactions (up to maxThumbsDown), so that reading who dismissed a finding
// costs no request a thread. Checked against GitHub's schema by the fake
// GitHub.
const reviewThreadsQuery = `query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 50, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id isResolved isOutdated path line originalLine viewerCanResolve
          resolvedBy { login }
          comments(first: 50) { nodes { fullDatabaseId body author { __typename login } } }
          root: comments(first: 1) { nodes { reactions(content: THUMBS_DOWN, first: 100) { totalCount nodes { user { login } } } } }
        }
      }
    }
  }
}`

const resolveThreadMutation = `mutation($id: ID!) {
  resolveReviewThread(input: {threadId: $id}) { thread { id isResolved } }
}`

// graphqlURL is GitHub's GraphQL endpoint for the REST root base:
// https://api.github.com/graphql, or https://HOST/api/graphql on GitHub
// Enterprise Server (whose REST root is https://HOST/api/v3/).
func graphqlURL(base *url.URL) string {
	u := *base
	if p, ok := strings.CutSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v3"); ok {
		u.Path = p + "/api/graphql"
	} else {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/graphql"
	}
	return u.String()
}

// graphqlError is one entry of a GraphQL answer's "errors".
type graphqlError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// GraphQLError reports errors in a GraphQL answer (GitHub answers them with
// 200). A FORBIDDEN one also wraps ErrNoWriteAccess.
type GraphQLError struct {
	Op     string
	Errors []graphqlError
}

func (e *GraphQLError) Error() string {
	var parts []string
	for _, g := range e.Errors {
		parts = append(parts, strings.TrimSpace(g.Type+" "+g.Message))
	}
	return e.Op + ": GitHub GraphQL: " + strings.Join(parts, "; ")
}

func (e *GraphQLError) Unwrap() error {
	for _, g := range e.Errors {
		if g.Type == "FORBIDDEN" {
			return ErrNoWriteAccess
		}
	}
	return nil
}

// graphql posts one GraphQL request and decodes its data into out.
func (c *Client) graphql(ctx context.Context, op, query string, vars map[string]any, out any) error {
	body := map[string]any{"query": query, "variables": vars}
	// GitHub API docs: https://docs.github.com/graphql/guides/forming-calls-with-graphql
	req, err := c.gh.NewRequest("POST", graphqlURL(c.gh.BaseURL), body)
	if err != nil {
		return c.fail(op, false, err)
	}
	var ans struct {
		Data   jsonRaw        `json:"data"`
		Errors []graphqlError `json:"errors"`
	}
	if _, err := c.gh.Do(ctx, req, &ans); err != nil {
		return c.fail(op, strings.HasPrefix(strings.TrimSpace(query), "mutation"), err)
	}
	if len(ans.Errors) > 0 {
		for i := range ans.Errors {
			ans.Errors[i].Message = redact(ans.Errors[i].Message, c.token)
		}
		return &GraphQLError{Op: op, Errors: ans.Errors}
	}
	return ans.Data.decode(out)
}

// threadNode is a review thread as reviewThreadsQuery reads it.
type threadNode struct {
	ID               string
	IsResolved       bool
	IsOutdated       bool
	Path             string
	Line             *int
	OriginalLine     *int
	ViewerCanResolve bool
	ResolvedBy       *struct{ Login string }
	Comments         struct {
		Nodes []struct {
			FullDatabaseID string
			Body           string
			Author         *struct {
				Typename string `json:"__typename"`
				Login    string
			}
		}
	}
	Root struct {
		Nodes []struct {
			Reactions struct {
				TotalCount int
				Nodes      []struct{ User *struct{ Login string } }
			}
		}
	}
}

// ReviewThreads lists the review threads warden started on pull request
// pr (those whose first comment warden's own login wrote with a
// fingerprint marker), all pages.
func (c *Client) ReviewThreads(ctx context.Context, pr int) ([]Thread, error) {
	op := fmt.Sprintf("list review threads of pull request #%d", pr)
	self, err := c.Identity(ctx)
	if err != nil {
		return nil, err
	}
	var out []Thread
	var after any
	for page := 0; page < 100; page++ { // 5,000 threads at most
		var data struct {
			Repository struct {
				PullRequest *struct {
					ReviewThreads struct {
						PageInfo struct {
							HasNextPage bool
							EndCursor   string
						}
						Nodes []threadNode
					}
				}
			}
		}
		vars := map[string]any{"owner": c.owner, "name": c.repo, "number": pr, "after": after}
		if err := c.graphql(ctx, op, reviewThreadsQuery, vars, &data); err != nil {
			return nil, err
		}
		if data.Repository.PullRequest == nil {
			return nil, fmt.Errorf("%s: no such pull request", op)
		}
		conn := data.Repository.PullRequest.ReviewThreads
		for _, n := range conn.Nodes {
			if t, ok := n.thread(c, self); ok {
				out = append(out, t)
			}
		}
		if !conn.PageInfo.HasNextPage {
			return out, nil
		}
		after = conn.PageInfo.EndCursor
	}
	return out, nil
}

// thread is n as a Thread; ok is false when warden (login self) did not
// start it: its first comment is someone else's, or has no fingerprint
// marker.
func (n threadNode) thread(c *Client, self string) (Thread, bool) {
	if len(n.Comments.Nodes) == 0 {
		return Thread{}, false
	}
	first := n.Comments.Nodes[0]
	if first.Author == nil || !sameLogin(first.Author.Login, self) {
		return Thread{}, false // not warden's, whatever its text
	}
	m := markerRE.FindStringSubmatch(first.Body)
	if m == nil {
		return Thread{}, false // not a finding's
	}
	t := Thread{
		ID: n.ID, Mark: markOf(m), Path: n.Path, Outdated: n.IsOutdated,
		Resolved: n.IsResolved, CanResolve: n.ViewerCanResolve,
	}
	if last, ok := c.LastRecord(first.Body); ok && last.Sealed && last.Text == "fp:"+m[1] {
		t.Sealed = true
	}
	t.RootID, _ = strconv.ParseInt(first.FullDatabaseID, 10, 64)
	if n.Line != nil {
		t.Line = *n.Line
	}
	if n.OriginalLine != nil {
		t.OriginalLine = *n.OriginalLine
	}
	if n.ResolvedBy != nil {
		t.ResolvedBy = n.ResolvedBy.Login
	}
	t.ThumbsDownAll = true
	for _, r := range n.Root.Nodes {
		for _, rn := range r.Reactions.Nodes {
			if rn.User != nil {
				t.ThumbsDown = append(t.ThumbsDown, rn.User.Login)
			}
		}
		t.ThumbsDownAll = r.Reactions.TotalCount <= len(r.Reactions.Nodes)
	}
	for _, r := range n.Comments.Nodes[1:] {
		reply := ThreadReply{Body: r.Body}
		if r.Author != nil {
			reply.Author, reply.Bot = r.Author.Login, r.Author.Typename == "Bot"
			reply.Warden = sameLogin(r.Author.Login, self)
		}
		if last, ok := c.LastRecord(r.Body); ok && reply.Warden {
			reply.Record, reply.Sealed = last.Text, last.Sealed
		}
		t.Replies = append(t.Replies, reply)
	}
	return t, true
}

// ResolveThread resolves a review thread. Without the permission (a
// read-only token, or GitHub's "contents: write" requirement) the error
// wraps ErrNoWriteAccess.
func (c *Client) ResolveThread(ctx context.Context, id string) error {
	var data struct{}
	return c.graphql(ctx, "resolve review thread "+id, resolveThreadMutation, map[string]any{"id": id}, &data)
}

// Reply posts a reply in the thread of review comment id on pull request
// pr.
func (c *Client) Reply(ctx context.Context, pr int, id int64, body string) error {
	op := fmt.Sprintf("reply to review comment %d", id)
	// GitHub API docs: https://docs.github.com/rest/pulls/comments#create-a-reply-for-a-review-comment
	u := fmt.Sprintf("repos/%s/%s/pulls/%d/comments/%d/replies", url.PathEscape(c.owner), url.PathEscape(c.repo), pr, id)
	req, err := c.gh.NewRequest("POST", u, map[string]string{"body": clipBytes(body, MaxCommentBody, "…")})
	if err != nil {
		return c.fail(op, true, err)
	}
	_, err = c.gh.Do(ctx, req, nil)
	return c.fail(op, true, err)
}

// Comment posts a comment in pull request pr's conversation (the reply to
// a command) and returns its id.
func (c *Client) Comment(ctx context.Context, pr int, body string) (int64, error) {
	op := fmt.Sprintf("comment on pull request #%d", pr)
	// GitHub API docs: https://docs.github.com/rest/issues/comments#create-an-issue-comment
	ic, _, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, pr, &gh.IssueComment{Body: gh.String(clipBytes(body, MaxCommentBody, "…"))})
	if err != nil {
		return 0, c.fail(op, true, err)
	}
	return ic.GetID(), nil
}

// HasRecord reports whether a conversation comment of pull request pr by
// warden's own login (Ours) ends with the sealed hidden record text
// (LastRecord); anyone else's copy of it, an unsealed one, or one inside
// the text counts for nothing. It reads at most maxMarkerPages pages of
// 100, newest last; a pull request with more comments than that is
// searched in its first ones only.
func (c *Client) HasRecord(ctx context.Context, pr int, text string) (bool, error) {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for range maxMarkerPages {
		// GitHub API docs: https://docs.github.com/rest/issues/comments#list-issue-comments
		cs, resp, err := c.gh.Issues.ListComments(ctx, c.owner, c.repo, pr, opts)
		if err != nil {
			return false, c.fail(fmt.Sprintf("list the comments of pull request #%d", pr), false, err)
		}
		for _, ic := range cs {
			if rec, ok := c.LastRecord(ic.GetBody()); !ok || !rec.Sealed || rec.Text != text {
				continue
			}
			if ours, err := c.Ours(ctx, ic.GetUser().GetLogin()); err != nil || ours {
				return ours, err
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return false, nil
}

// maxMarkerPages bounds HasComment's reads.
const maxMarkerPages = 10

// React adds a reaction ("eyes", "rocket", "+1", "-1", "confused", ...)
// to a comment: a review comment when review is set, else a conversation
// comment.
func (c *Client) React(ctx context.Context, id int64, review bool, content string) error {
	op := fmt.Sprintf("react %s to comment %d", content, id)
	var err error
	if review {
		// GitHub API docs: https://docs.github.com/rest/reactions/reactions#create-reaction-for-a-pull-request-review-comment
		_, _, err = c.gh.Reactions.CreatePullRequestCommentReaction(ctx, c.owner, c.repo, id, content)
	} else {
		// GitHub API docs: https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment
		_, _, err = c.gh.Reactions.CreateIssueCommentReaction(ctx, c.owner, c.repo, id, content)
	}
	return c.fail(op, true, err)
}

// ThumbsDown returns the logins that gave review comment id a thumbs-down.
func (c *Client) ThumbsDown(ctx context.Context, id int64) ([]string, error) {
	op := fmt.Sprintf("list reactions of review comment %d", id)
	opts := &gh.ListOptions{PerPage: 100}
	var out []string
	for {
		// GitHub API docs: https://docs.github.com/rest/reactions/reactions#list-reactions-for-a-pull-request-review-comment
		rs, resp, err := c.gh.Reactions.ListPullRequestCommentReactions(ctx, c.owner, c.repo, id, opts)
		if err != nil {
			return nil, c.fail(op, false, err)
		}
		for _, r := range rs {
			if r.GetContent() == "-1" && r.GetUser().GetType() != "Bot" {
				out = append(out, r.GetUser().GetLogin())
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// dismissedRE finds the marker warden writes in its reply to a trusted
// `/warden dismiss`: the dismissal's record. Model text cannot forge it
// (neutralize escapes "<"), and it counts only in warden's own replies
// (ThreadReply.Warden).
var dismissedRE = regexp.MustCompile(`^dismissed:([0-9a-f]{32})$`)

// DismissedMarker is the hidden record that ends warden's reply to a
// dismissal of the finding with fingerprint fp: sealed, on a line of its
// own.
func (c *Client) DismissedMarker(fp string) string { return "\n\n" + c.Mark("dismissed:"+fp) }

// Follow-up reasons: why a finding is suppressed.
const (
	SuppressedCommand  = "dismissed with /warden dismiss"
	SuppressedReaction = "thumbs-down"
	SuppressedResolved = "thread resolved without a code change"
)

// FollowUp is what a run does about the threads of earlier runs.
type FollowUp struct {
	// Resolve are the threads of findings this run no longer reports on
	// lines that changed: fixed.
	Resolve []Thread
	// Held are every thread's finding, each with why it is not posted
	// again, if it is not (for Suppress).
	Held []Held
}

// Held is a finding an earlier run recorded on the pull request (a
// thread's marker, an entry of warden's findings comment), by its mark,
// and why it is not shown again: "" when it is, else one of the
// Suppressed reasons.
type Held struct {
	Mark       report.Mark
	Suppressed string
}

// Follow decides, for warden's threads on a pull request, which were fixed
// (this run no longer reports the finding, and the lines under it changed:
// the thread is outdated or changed(path, line) says so) and which findings
// were dismissed: by warden's record of a `/warden dismiss`, by a
// thumbs-down from a trusted login (thumbsDown, by the thread's RootID),
// or by a trusted person resolving the thread while the code under it did
// not change. trusted says whose word counts: on a public repository
// anyone may react, so the Action trusts only logins with write access
// (Maintainers), and never the pull request's untrusted author. It is
// asked only as often as a decision needs it (each lookup costs a
// request).
//
// A thread's finding is the one of current its mark is (report.Match, over
// every thread at once, so that of two findings on identical code each
// keeps its own thread).
func Follow(threads []Thread, current []review.Finding, changed func(path string, line int) bool, thumbsDown map[int64][]string, trusted func(login string) bool) FollowUp {
	marks := make([]report.Mark, len(threads))
	for i, t := range threads {
		marks[i] = t.Mark
	}
	now := report.Match(marks, current)
	var fu FollowUp
	for i, t := range threads {
		lineChanged := t.Outdated || (changed != nil && changed(t.Path, t.OriginalLine))
		reason := t.dismissed(thumbsDown, trusted, lineChanged)
		fu.Held = append(fu.Held, Held{Mark: t.Mark, Suppressed: reason})
		if reason != "" {
			continue
		}
		if !t.Resolved && now[i] < 0 && lineChanged {
			fu.Resolve = append(fu.Resolve, t)
		}
	}
	return fu
}

// dismissed is why t's finding was dismissed ("" when it was not): only in
// a thread warden's sealed comment started, by warden's sealed record of a
// `/warden dismiss` (the last line of its own reply: any workflow posting
// as github-actions[bot] can write the text), a trusted thumbs-down, or a
// trusted person resolving it while the code under it did not change.
func (t Thread) dismissed(thumbsDown map[int64][]string, trusted func(login string) bool, lineChanged bool) string {
	if !t.Sealed {
		return ""
	}
	for _, r := range t.Replies {
		if m := dismissedRE.FindStringSubmatch(r.Record); r.Warden && r.Sealed && m != nil && m[1] == t.Mark.Fingerprint {
			return SuppressedCommand
		}
	}
	for _, login := range thumbsDown[t.RootID] {
		if trusted(login) {
			return SuppressedReaction
		}
	}
	if t.Resolved && !lineChanged && t.ResolvedBy != "" && !strings.HasSuffix(t.ResolvedBy, "[bot]") && t.ResolvedBy != "github-actions" && trusted(t.ResolvedBy) {
		return SuppressedResolved
	}
	return ""
}

// Suppress removes from r the findings that held ones with a reason are
// (report.Match, over every held finding at once, so that dismissing one
// of two findings on identical code leaves the other), counting them in
// Summary.Suppressed, so that every sink shows the same, honest count. It
// returns the findings it removed (ReviewOptions.Dismissed).
func Suppress(r *review.Report, held []Held) []review.Finding {
	marks := make([]report.Mark, len(held))
	for i, h := range held {
		marks[i] = h.Mark
	}
	drop := make([]bool, len(r.Findings))
	for i, j := range report.Match(marks, r.Findings) {
		if j >= 0 && held[i].Suppressed != "" {
			drop[j] = true
		}
	}
	var kept, gone []review.Finding
	for i, f := range r.Findings {
		if drop[i] {
			gone = append(gone, f)
		} else {
			kept = append(kept, f)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	r.Findings = kept
	r.Summary.Findings = len(kept)
	r.Summary.Suppressed += len(gone)
	return gone
}

// fixedMarker ends warden's "Fixed in" reply in a thread, so that a later
// run does not say it again.
const fixedMarker = "fixed"

// saidFixed reports whether warden already replied in t that its finding
// is fixed (a reply by warden's own login with fixedMarker, or one of an
// earlier version's "Fixed in" replies, which had no marker).
func (t Thread) saidFixed() bool {
	return slices.ContainsFunc(t.Replies, func(r ThreadReply) bool {
		return r.Warden && (r.Record == fixedMarker || strings.Contains(r.Body, "<!-- warden:fixed -->") || strings.HasPrefix(r.Body, "Fixed in "))
	})
}

// ResolveFixed resolves the threads of fixed findings, each with a
// one-line reply naming the commit. A thread the token may not resolve
// (GitHub runs resolveReviewThread only for a token with contents: write)
// still gets the reply, once, which asks a person to resolve it. It
// returns how many threads it resolved and, when some were left open, a
// note for the summary instead of an error.
func (c *Client) ResolveFixed(ctx context.Context, pr int, threads []Thread, commit string) (resolved int, note string, err error) {
	short := commit
	if len(short) > 7 {
		short = short[:7]
	}
	denied, told := 0, 0
	for _, t := range threads {
		if !t.saidFixed() {
			body := fmt.Sprintf("Fixed in %s: warden no longer finds this on the changed lines.", short)
			if !t.CanResolve {
				body += " Resolve this thread if you agree: warden's token may not resolve threads."
			}
			switch err := c.Reply(ctx, pr, t.RootID, body+"\n\n"+c.Mark(fixedMarker)); {
			case errors.Is(err, ErrNoWriteAccess):
				denied++
				continue
			case err != nil:
				return resolved, note, err
			}
		}
		if !t.CanResolve {
			denied++
			told++
			continue
		}
		if err := c.ResolveThread(ctx, t.ID); err != nil {
			if errors.Is(err, ErrNoWriteAccess) {
				denied++
				told++
				continue
			}
			return resolved, note, err
		}
		resolved++
	}
	if denied > 0 {
		note = fmt.Sprintf("%d fixed %s not resolved: the token may not resolve review threads (it needs pull-requests: write, and contents: write for resolveReviewThread).",
			denied, review.Plural(denied, "finding's thread was", "findings' threads were"))
		switch {
		case told == denied:
			note += fmt.Sprintf(" warden said in %s that the finding is fixed.", review.Plural(told, "that thread", "those threads"))
		case told > 0:
			note += fmt.Sprintf(" warden said in %d of them that the finding is fixed.", told)
		}
	}
	return resolved, note, nil
}

type jsonRaw []byte

func (j *jsonRaw) UnmarshalJSON(b []byte) error { *j = append((*j)[:0], b...); return nil }

func (j jsonRaw) decode(out any) error {
	if len(j) == 0 || string(j) == "null" {
		return errors.New("GitHub GraphQL: no data in the answer")
	}
	return json.Unmarshal(j, out)
}
