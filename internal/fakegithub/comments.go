package fakegithub

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"
)

// IssueComment is a comment in a pull request's conversation (GitHub
// stores it on the pull request's issue).
type IssueComment struct {
	ID    int64
	Issue int // the pull request's number
	Body  string
	// User is the author's login (default "octocat"); Association its
	// author_association ("": the one GitHub derives, Server.Association).
	User, Association string
	// Edits counts the edits through "Update an issue comment".
	Edits int
}

// Reaction is one reaction on a comment.
type Reaction struct {
	ID int64
	// Content is one of GitHub's reaction names: "+1", "-1", "laugh",
	// "confused", "heart", "hooray", "rocket", "eyes".
	Content string
	User    string // login; default "octocat"
}

// The kinds of comment a reaction is on.
const (
	OnIssueComment  = "issue_comment"
	OnReviewComment = "review_comment"
)

type reactionKey struct {
	kind string
	id   int64
}

// AddIssueComment adds a comment to pull request pr's conversation, as a
// person wrote it, and returns its id.
func (s *Server) AddIssueComment(pr int, c IssueComment) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.ID == 0 {
		c.ID = s.id()
	}
	c.Issue = pr
	s.stamp(c.ID)
	s.issueComments = append(s.issueComments, c)
	return c.ID
}

// IssueComments returns pull request pr's conversation comments, in
// creation order.
func (s *Server) IssueComments(pr int) []IssueComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []IssueComment
	for _, c := range s.issueComments {
		if c.Issue == pr {
			out = append(out, c)
		}
	}
	return out
}

// AddReaction adds a reaction, as a person gave it, to the comment id of
// kind (OnIssueComment or OnReviewComment).
func (s *Server) AddReaction(kind string, id int64, r Reaction) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.ID == 0 {
		r.ID = s.id()
	}
	s.stamp(r.ID)
	if s.reactions == nil {
		s.reactions = map[reactionKey][]Reaction{}
	}
	k := reactionKey{kind, id}
	s.reactions[k] = append(s.reactions[k], r)
}

// Reactions returns the reactions on the comment id of kind, in creation
// order.
func (s *Server) Reactions(kind string, id int64) []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reactions[reactionKey{kind, id}])
}

func (s *Server) listIssueComments(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("issue_number"))
	s.mu.Lock()
	pr, ok := s.pulls[n]
	s.mu.Unlock()
	if !ok {
		s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest/issues/comments#list-issue-comments")
		return
	}
	if !s.specOK(w, r, RouteListIssueComments) {
		return
	}
	out := []map[string]any{}
	for _, c := range s.IssueComments(pr.Number) {
		out = append(out, s.issueCommentJSON(c))
	}
	paginate(w, r, out)
}

func (s *Server) createIssueComment(w http.ResponseWriter, r *http.Request) {
	const route = RouteCreateIssueComment
	n, _ := strconv.Atoi(r.PathValue("issue_number"))
	s.mu.Lock()
	_, ok := s.pulls[n]
	s.mu.Unlock()
	if !ok {
		s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest/issues/comments#create-an-issue-comment")
		return
	}
	body, ok := s.issueCommentBody(w, r, route)
	if !ok {
		return
	}
	id := s.AddIssueComment(n, IssueComment{Body: body, User: s.writer()})
	var c IssueComment
	for _, ic := range s.IssueComments(n) {
		if ic.ID == id {
			c = ic
		}
	}
	writeJSON(w, http.StatusCreated, s.issueCommentJSON(c))
}

// issueCommentBody reads the body of a request to create or update an
// issue comment as GitHub checks it: JSON, at most MaxBody characters, not
// blank, and the route's schema. ok is false when it answered the error.
func (s *Server) issueCommentBody(w http.ResponseWriter, r *http.Request, route string) (body string, ok bool) {
	var b struct {
		Body *string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		if s.specOK(w, r, route) {
			s.errorJSON(w, r, http.StatusBadRequest, "Problems parsing JSON", nil, docsURL(route))
		}
		return "", false
	}
	if b.Body != nil && utf8.RuneCountInString(*b.Body) > MaxBody {
		s.validationFailed(w, r, route, "IssueComment", fmt.Sprintf("Body is too long (maximum is %d characters)", MaxBody))
		return "", false
	}
	if b.Body != nil && *b.Body == "" {
		s.validationFailed(w, r, route, "IssueComment", "Body can't be blank")
		return "", false
	}
	if !s.specOK(w, r, route) {
		return "", false
	}
	return *b.Body, true
}

// issueCommentJSON is GitHub's issue-comment for c.
func (s *Server) issueCommentJSON(c IssueComment) map[string]any {
	full := s.Owner + "/" + s.Repo
	user := cmp.Or(c.User, "octocat")
	s.mu.Lock()
	created := timestamp(cmp.Or(s.times[c.ID].created, s.now()))
	s.mu.Unlock()
	u := fmt.Sprintf("%s/repos/%s/issues/comments/%d", apiRoot, full, c.ID)
	return map[string]any{
		"id": c.ID, "node_id": nodeID("IC", c.ID), "url": u,
		"html_url":  fmt.Sprintf("%s/%s/pull/%d#issuecomment-%d", htmlRoot, full, c.Issue, c.ID),
		"issue_url": fmt.Sprintf("%s/repos/%s/issues/%d", apiRoot, full, c.Issue),
		"body":      c.Body, "user": userJSON(user, userType(user)),
		"created_at": created, "updated_at": created,
		"author_association": s.association(c.Association, user),
	}
}

// replyToReviewComment creates a reply in the thread of a top-level
// review comment. GitHub: "Replies to replies are not supported."
func (s *Server) replyToReviewComment(w http.ResponseWriter, r *http.Request) {
	const route = RouteCreateReply
	pr, ok := s.pull(w, r)
	if !ok {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("comment_id"), 10, 64)
	var parent *ReviewComment
	for _, c := range s.ReviewComments(pr.Number) {
		if c.ID == id {
			parent = &c
		}
	}
	if parent == nil {
		s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest/pulls/comments#create-a-reply-for-a-review-comment")
		return
	}
	var b struct {
		Body *string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		if s.specOK(w, r, route) {
			s.errorJSON(w, r, http.StatusBadRequest, "Problems parsing JSON", nil, docsURL(route))
		}
		return
	}
	if !s.specOK(w, r, route) {
		return
	}
	if *b.Body == "" || utf8.RuneCountInString(*b.Body) > MaxBody {
		// GitHub's description lists no 422 for this route; the fake
		// records the bad body as a violation instead.
		s.violation(r, "request: body: empty or over %d characters", MaxBody)
	}
	root := parent.ID
	if parent.InReplyTo != 0 {
		root = parent.InReplyTo
	}
	// A reply joins its thread where the thread was made: its lines and
	// commit are the thread's (so it is outdated with it).
	c := ReviewComment{
		Path: parent.Path, Line: parent.Line, StartLine: parent.StartLine, Side: parent.Side, StartSide: parent.StartSide,
		Body: *b.Body, CommitID: cmp.Or(parent.CommitID, pr.HeadSHA), User: s.writer(), InReplyTo: root, hunk: parent.hunk,
	}
	s.mu.Lock()
	c.ID = s.id()
	s.stamp(c.ID)
	s.comments[pr.Number] = append(s.comments[pr.Number], c)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, s.commentJSON(pr, c))
}

// commentExists reports whether the comment id of kind exists.
func (s *Server) commentExists(kind string, id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if kind == OnIssueComment {
		return slices.ContainsFunc(s.issueComments, func(c IssueComment) bool { return c.ID == id })
	}
	for _, cs := range s.comments {
		if slices.ContainsFunc(cs, func(c ReviewComment) bool { return c.ID == id }) {
			return true
		}
	}
	return false
}

func (s *Server) reactionHandlers(kind, listRoute, createRoute string) (list, create http.HandlerFunc) {
	docs := "https://docs.github.com/rest/reactions/reactions"
	list = func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("comment_id"), 10, 64)
		if !s.commentExists(kind, id) {
			s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, docs)
			return
		}
		if !s.specOK(w, r, listRoute) {
			return
		}
		want := r.URL.Query().Get("content")
		out := []map[string]any{}
		for _, re := range s.Reactions(kind, id) {
			if want == "" || re.Content == want {
				out = append(out, s.reactionJSON(re))
			}
		}
		paginate(w, r, out)
	}
	create = func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("comment_id"), 10, 64)
		if !s.commentExists(kind, id) {
			s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, docs)
			return
		}
		var b struct {
			Content string `json:"content"`
		}
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			if s.specOK(w, r, createRoute) {
				s.errorJSON(w, r, http.StatusBadRequest, "Problems parsing JSON", nil, docs)
			}
			return
		}
		if !s.specOK(w, r, createRoute) {
			return
		}
		bot := s.writer()
		// The same reaction by the same user again is GitHub's 200 with
		// the existing one.
		for _, re := range s.Reactions(kind, id) {
			if re.Content == b.Content && cmp.Or(re.User, "octocat") == bot {
				writeJSON(w, http.StatusOK, s.reactionJSON(re))
				return
			}
		}
		re := Reaction{Content: b.Content, User: bot}
		s.mu.Lock()
		re.ID = s.id()
		s.mu.Unlock()
		s.AddReaction(kind, id, re)
		writeJSON(w, http.StatusCreated, s.reactionJSON(re))
	}
	return list, create
}

func (s *Server) reactionJSON(re Reaction) map[string]any {
	user := cmp.Or(re.User, "octocat")
	s.mu.Lock()
	created := timestamp(cmp.Or(s.times[re.ID].created, s.now()))
	s.mu.Unlock()
	return map[string]any{
		"id": re.ID, "node_id": nodeID("REA", re.ID), "user": userJSON(user, userType(user)),
		"content": re.Content, "created_at": created,
	}
}

// validationFailed is GitHub's 422 "Validation Failed" with one error
// object, the shape the issues API answers with.
func (s *Server) validationFailed(w http.ResponseWriter, r *http.Request, route, resource, msg string) {
	if s.EchoAuthorization {
		msg += " (request Authorization: " + r.Header.Get("Authorization") + ")"
	}
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
		"message":           "Validation Failed",
		"errors":            []map[string]any{{"resource": resource, "code": "unprocessable", "field": "data", "message": msg}},
		"documentation_url": docsURL(route),
		"status":            "422",
	})
}

// getIssueComment is "Get an issue comment".
func (s *Server) getIssueComment(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("comment_id"), 10, 64)
	c, ok := s.issueComment(id)
	if !ok {
		s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest/issues/comments#get-an-issue-comment")
		return
	}
	if !s.specOK(w, r, RouteGetIssueComment) {
		return
	}
	writeJSON(w, http.StatusOK, s.issueCommentJSON(c))
}

func (s *Server) issueComment(id int64) (IssueComment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.issueComments, func(c IssueComment) bool { return c.ID == id })
	if i < 0 {
		return IssueComment{}, false
	}
	return s.issueComments[i], true
}

// updateIssueComment is "Update an issue comment": a new body, the author
// and the id unchanged (an installation token with write access may edit
// any comment of the repository). Edits counts them.
func (s *Server) updateIssueComment(w http.ResponseWriter, r *http.Request) {
	const route = RouteUpdateIssueComment
	id, _ := strconv.ParseInt(r.PathValue("comment_id"), 10, 64)
	if _, ok := s.issueComment(id); !ok {
		s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest/issues/comments#update-an-issue-comment")
		return
	}
	body, ok := s.issueCommentBody(w, r, route)
	if !ok {
		return
	}
	s.mu.Lock()
	i := slices.IndexFunc(s.issueComments, func(c IssueComment) bool { return c.ID == id })
	s.issueComments[i].Body = body
	s.issueComments[i].Edits++
	c := s.issueComments[i]
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.issueCommentJSON(c))
}

// getReviewComment is "Get a review comment for a pull request".
func (s *Server) getReviewComment(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("comment_id"), 10, 64)
	s.mu.Lock()
	var found *ReviewComment
	var pr *PullRequest
	for n, cs := range s.comments {
		for _, c := range cs {
			if c.ID == id {
				found, pr = &c, s.pulls[n]
			}
		}
	}
	s.mu.Unlock()
	if found == nil || pr == nil {
		s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest/pulls/comments#get-a-review-comment-for-a-pull-request")
		return
	}
	if !s.specOK(w, r, RouteGetReviewComment) {
		return
	}
	writeJSON(w, http.StatusOK, s.commentJSON(pr, *found))
}
