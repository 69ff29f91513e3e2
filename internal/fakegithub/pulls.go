package fakegithub

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// PullRequest is a pull request the fake serves.
type PullRequest struct {
	Number           int
	Title, Body      string
	HeadSHA, BaseSHA string
	HeadRef, BaseRef string
	// HeadRepo is the head repository's full name; empty means the base
	// repository (not a fork).
	HeadRepo string
	Draft    bool
	// User is the author's login (default "octocat"); UserType "User" or
	// "Bot" (default "User").
	User, UserType string
	// Association is the author's author_association; "" means the one
	// GitHub derives (Server.Association).
	Association string
	Files       []File
	// ChangedFiles is the changed_files count; 0 means len(Files). Set it
	// above MaxFiles to model a pull request the files API cuts.
	ChangedFiles int
	// OtherSHAs are earlier head commits that a review's commit_id may
	// name.
	OtherSHAs []string
}

// File is one changed file with its patch (hunks only, as the files API
// gives it). An empty Patch is left out of the JSON, as GitHub does for
// binary or very large files.
type File struct {
	Filename         string `json:"filename"`
	PreviousFilename string `json:"previous_filename,omitempty"`
	Status           string `json:"status"`
	Additions        int    `json:"additions"`
	Deletions        int    `json:"deletions"`
	Patch            string `json:"patch,omitempty"`
	// Content is the file's whole content at the pull request's head
	// (not part of the files API's answer). With it for the heads before
	// and after a push, review comments follow their lines as GitHub's do
	// (outdated.go); without it a comment is only checked against the
	// current diff.
	Content string `json:"-"`
}

// Review is a submitted (or pending) review.
type Review struct {
	ID       int64
	PR       int
	CommitID string
	// Event is what was asked; State what GitHub shows (COMMENTED,
	// CHANGES_REQUESTED, APPROVED, PENDING).
	Event, State, Body string
	User               string
}

// ReviewComment is an inline review comment.
type ReviewComment struct {
	ID, ReviewID    int64
	Path            string
	Line, StartLine int
	Side, StartSide string
	Body, CommitID  string
	User            string
	// Association is the author's author_association; "" means the one
	// GitHub derives (Server.Association).
	Association string
	// InReplyTo is the id of the thread's first comment, for a reply.
	InReplyTo int64
	// hunk is the diff hunk the comment was made on (its diff_hunk once
	// outdated).
	hunk string
}

// AddPullRequest adds or replaces a pull request.
func (s *Server) AddPullRequest(pr PullRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pulls == nil {
		s.pulls = map[int]*PullRequest{}
	}
	pr.Files = slices.Clone(pr.Files)
	s.pulls[pr.Number] = &pr
	s.recordContents(&pr)
}

// AddReviewComment adds an existing comment (for example from an earlier
// run, or by a person) to pull request pr, without validation, and returns
// its id.
func (s *Server) AddReviewComment(pr int, c ReviewComment) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.comments == nil {
		s.comments = map[int][]ReviewComment{}
	}
	if c.ID == 0 {
		c.ID = s.id()
	}
	if p := s.pulls[pr]; p != nil {
		c.CommitID = cmp.Or(c.CommitID, p.HeadSHA)
		for _, f := range p.Files {
			if f.Filename == c.Path {
				c.hunk = diffHunk(f.Patch, cmp.Or(c.Side, "RIGHT"), c.Line)
			}
		}
	}
	s.stamp(c.ID)
	s.comments[pr] = append(s.comments[pr], c)
	return c.ID
}

// Reviews returns the reviews of pull request pr, in creation order.
func (s *Server) Reviews(pr int) []Review {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reviews[pr])
}

// ReviewComments returns the review comments of pull request pr, in
// creation order.
func (s *Server) ReviewComments(pr int) []ReviewComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.comments[pr])
}

func (s *Server) pull(w http.ResponseWriter, r *http.Request) (*PullRequest, bool) {
	n, _ := strconv.Atoi(r.PathValue("pull_number"))
	s.mu.Lock()
	pr := s.pulls[n]
	s.mu.Unlock()
	if pr == nil {
		s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest/pulls/pulls#get-a-pull-request")
		return nil, false
	}
	return pr, true
}

func (s *Server) getPullRequest(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.pull(w, r)
	if !ok || !s.specOK(w, r, RouteGetPullRequest) {
		return
	}
	writeJSON(w, http.StatusOK, s.pullJSON(pr))
}

// pullJSON is GitHub's pull-request for pr.
func (s *Server) pullJSON(pr *PullRequest) map[string]any {
	full := s.Owner + "/" + s.Repo
	head := pr.HeadRepo
	if head == "" {
		head = full
	}
	user, typ := prAuthor(pr), pr.UserType
	if typ == "" {
		typ = "User"
	}
	changed := pr.ChangedFiles
	if changed == 0 {
		changed = len(pr.Files)
	}
	var adds, dels int
	for _, f := range pr.Files {
		adds += f.Additions
		dels += f.Deletions
	}
	created := timestamp(s.now())
	headOwner, _, _ := strings.Cut(head, "/")
	ref := func(owner, fullName, ref, sha string) map[string]any {
		return map[string]any{
			"label": owner + ":" + ref, "ref": ref, "sha": sha,
			"user": userJSON(owner, "User"), "repo": repoJSON(fullName, fullName != full, s.now()),
		}
	}
	u := pullURL(s.Owner, s.Repo, pr.Number)
	html := fmt.Sprintf("%s/%s/pull/%d", htmlRoot, full, pr.Number)
	issue := fmt.Sprintf("%s/repos/%s/issues/%d", apiRoot, full, pr.Number)
	statuses := fmt.Sprintf("%s/repos/%s/statuses/%s", apiRoot, full, pr.HeadSHA)
	id := stableID(fmt.Sprintf("pull:%s#%d", full, pr.Number))
	return map[string]any{
		"url": u, "id": id, "node_id": nodeID("PR", id), "html_url": html,
		"diff_url": html + ".diff", "patch_url": html + ".patch", "issue_url": issue,
		"commits_url": u + "/commits", "review_comments_url": u + "/comments",
		"review_comment_url": apiRoot + "/repos/" + full + "/pulls/comments{/number}",
		"comments_url":       issue + "/comments", "statuses_url": statuses,
		"number": pr.Number, "state": "open", "locked": false,
		"title": pr.Title, "body": nullable(pr.Body), "draft": pr.Draft,
		"user":   userJSON(user, typ),
		"labels": []any{}, "milestone": nil, "active_lock_reason": nil,
		"created_at": created, "updated_at": created, "closed_at": nil, "merged_at": nil,
		"merge_commit_sha": nil, "assignee": nil, "assignees": []any{},
		"requested_reviewers": []any{}, "requested_teams": []any{},
		"head": ref(headOwner, head, pr.HeadRef, pr.HeadSHA),
		"base": ref(s.Owner, full, pr.BaseRef, pr.BaseSHA),
		"_links": map[string]any{
			"self": link(u), "html": link(html), "issue": link(issue), "comments": link(issue + "/comments"),
			"review_comments": link(u + "/comments"), "review_comment": link(apiRoot + "/repos/" + full + "/pulls/comments{/number}"),
			"commits": link(u + "/commits"), "statuses": link(statuses),
		},
		"author_association": s.association(pr.Association, user), "auto_merge": nil,
		"merged": false, "mergeable": nil, "rebaseable": nil, "mergeable_state": "unknown",
		"merged_by": nil, "comments": 0, "review_comments": len(s.ReviewComments(pr.Number)),
		"maintainer_can_modify": false, "commits": 1 + len(pr.OtherSHAs),
		"additions": adds, "deletions": dels, "changed_files": changed,
	}
}

func (s *Server) listFiles(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.pull(w, r)
	if !ok || !s.specOK(w, r, RouteListFiles) {
		return
	}
	files := pr.Files
	if len(files) > MaxFiles {
		files = files[:MaxFiles]
	}
	out := make([]map[string]any, len(files))
	for i, f := range files {
		out[i] = s.fileJSON(pr, f)
	}
	paginate(w, r, out)
}

// fileJSON is GitHub's diff-entry for f. An empty Patch is left out, as
// GitHub does for binary or very large files.
func (s *Server) fileJSON(pr *PullRequest, f File) map[string]any {
	full := s.Owner + "/" + s.Repo
	m := map[string]any{
		"sha":      fakeSHA(pr.HeadSHA + ":" + f.Filename),
		"filename": f.Filename, "status": f.Status,
		"additions": f.Additions, "deletions": f.Deletions, "changes": f.Additions + f.Deletions,
		"blob_url":     fmt.Sprintf("%s/%s/blob/%s/%s", htmlRoot, full, pr.HeadSHA, f.Filename),
		"raw_url":      fmt.Sprintf("%s/%s/raw/%s/%s", htmlRoot, full, pr.HeadSHA, f.Filename),
		"contents_url": fmt.Sprintf("%s/repos/%s/contents/%s?ref=%s", apiRoot, full, f.Filename, pr.HeadSHA),
	}
	if f.PreviousFilename != "" {
		m["previous_filename"] = f.PreviousFilename
	}
	if f.Patch != "" {
		m["patch"] = f.Patch
	}
	return m
}

func (s *Server) listReviewComments(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.pull(w, r)
	if !ok || !s.specOK(w, r, RouteListReviewComments) {
		return
	}
	out := []map[string]any{}
	for _, c := range s.ReviewComments(pr.Number) {
		out = append(out, s.commentJSON(pr, c))
	}
	paginate(w, r, out)
}

// commentJSON is GitHub's pull-request-review-comment for c on pr: where
// it sits now (see place). An outdated comment has no line or position:
// GitHub answers null for both, which the REST description does not allow
// (neither is nullable there), so the fake leaves them out.
func (s *Server) commentJSON(pr *PullRequest, c ReviewComment) map[string]any {
	full := s.Owner + "/" + s.Repo
	user := cmp.Or(c.User, "octocat")
	orig := cmp.Or(c.CommitID, pr.HeadSHA)
	side := cmp.Or(c.Side, "RIGHT")
	at := s.place(pr, c)
	hunk := c.hunk
	if !at.outdated {
		for _, f := range pr.Files {
			if f.Filename == c.Path {
				hunk = diffHunk(f.Patch, side, at.line)
			}
		}
	}
	s.mu.Lock()
	created := timestamp(cmp.Or(s.times[c.ID].created, s.now()))
	s.mu.Unlock()
	u := fmt.Sprintf("%s/repos/%s/pulls/comments/%d", apiRoot, full, c.ID)
	html := fmt.Sprintf("%s/%s/pull/%d#discussion_r%d", htmlRoot, full, pr.Number, c.ID)
	var review any
	if c.ReviewID != 0 {
		review = c.ReviewID
	}
	m := map[string]any{
		"url": u, "id": c.ID, "node_id": nodeID("PRRC", c.ID), "pull_request_review_id": review,
		"diff_hunk": hunk, "path": c.Path, "commit_id": at.commit, "original_commit_id": orig,
		"user": userJSON(user, userType(user)), "body": c.Body,
		"created_at": created, "updated_at": created,
		"html_url": html, "pull_request_url": pullURL(s.Owner, s.Repo, pr.Number),
		"author_association": s.association(c.Association, user),
		"_links": map[string]any{
			"self": link(u), "html": link(html), "pull_request": link(pullURL(s.Owner, s.Repo, pr.Number)),
		},
		"start_line": nil, "original_start_line": nil, "start_side": nil,
		"original_line": c.Line, "side": side, "subject_type": "line",
	}
	if !at.outdated {
		m["line"] = at.line
	}
	if c.StartLine > 0 {
		m["original_start_line"], m["start_side"] = c.StartLine, cmp.Or(c.StartSide, side)
		if !at.outdated {
			m["start_line"] = at.startLine
		}
	}
	if c.InReplyTo != 0 {
		m["in_reply_to_id"] = c.InReplyTo
	}
	return m
}

// userType is "Bot" for a login ending in "[bot]", else "User".
func userType(login string) string {
	if strings.HasSuffix(login, "[bot]") {
		return "Bot"
	}
	return "User"
}

func (s *Server) listReviews(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.pull(w, r)
	if !ok || !s.specOK(w, r, RouteListReviews) {
		return
	}
	out := []map[string]any{}
	for _, rv := range s.Reviews(pr.Number) {
		out = append(out, s.reviewJSON(pr, rv))
	}
	paginate(w, r, out)
}

// reviewJSON is GitHub's pull-request-review for rv on pr.
func (s *Server) reviewJSON(pr *PullRequest, rv Review) map[string]any {
	full := s.Owner + "/" + s.Repo
	user := cmp.Or(rv.User, "octocat")
	html := fmt.Sprintf("%s/%s/pull/%d#pullrequestreview-%d", htmlRoot, full, pr.Number, rv.ID)
	m := map[string]any{
		"id": rv.ID, "node_id": nodeID("PRR", rv.ID), "user": userJSON(user, userType(user)),
		"body": rv.Body, "state": rv.State, "commit_id": nullable(rv.CommitID),
		"html_url": html, "pull_request_url": pullURL(s.Owner, s.Repo, pr.Number),
		"_links": map[string]any{
			"html": link(html), "pull_request": link(pullURL(s.Owner, s.Repo, pr.Number)),
		},
		"author_association": s.Association(user),
	}
	s.mu.Lock()
	t, ok := s.times[rv.ID]
	s.mu.Unlock()
	if ok && rv.State != "PENDING" {
		m["submitted_at"] = timestamp(t.created)
	}
	return m
}

type reviewBody struct {
	CommitID *string             `json:"commit_id"`
	Body     *string             `json:"body"`
	Event    *string             `json:"event"`
	Comments []reviewCommentBody `json:"comments"`
}

type reviewCommentBody struct {
	Path      string  `json:"path"`
	Body      string  `json:"body"`
	Position  *int    `json:"position"`
	Line      *int    `json:"line"`
	Side      *string `json:"side"`
	StartLine *int    `json:"start_line"`
	StartSide *string `json:"start_side"`
}

var reviewStates = map[string]string{
	"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED", "": "PENDING",
}

// createReview validates the whole review like GitHub: one bad comment
// rejects everything with 422 and GitHub does not say which one.
func (s *Server) createReview(w http.ResponseWriter, r *http.Request) {
	const route = RouteCreateReview
	pr, ok := s.pull(w, r)
	if !ok {
		return
	}
	var b reviewBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		// A value of the wrong type is GitHub's 422; only JSON it
		// cannot parse is a 400.
		if s.specOK(w, r, route) {
			s.errorJSON(w, r, http.StatusBadRequest, "Problems parsing JSON", nil, docsURL(route))
		}
		return
	}
	rv, comments, msg := checkReview(pr, b)
	rv.User = s.writer()
	if msg != "" {
		s.unprocessable(w, r, route, "Unprocessable Entity", msg)
		return
	}
	if !s.specOK(w, r, route) {
		return
	}
	s.mu.Lock()
	rv.ID = s.id()
	s.stamp(rv.ID)
	if s.reviews == nil {
		s.reviews = map[int][]Review{}
	}
	if s.comments == nil {
		s.comments = map[int][]ReviewComment{}
	}
	s.reviews[pr.Number] = append(s.reviews[pr.Number], rv)
	for _, c := range comments {
		c.ID, c.ReviewID, c.User = s.id(), rv.ID, rv.User
		for _, f := range pr.Files {
			if f.Filename == c.Path {
				c.hunk = diffHunk(f.Patch, c.Side, c.Line)
			}
		}
		s.stamp(c.ID)
		s.comments[pr.Number] = append(s.comments[pr.Number], c)
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.reviewJSON(pr, rv))
}

// checkReview returns GitHub's 422 text for a review GitHub would reject,
// and otherwise the review and its comments as they are stored (without
// their ids).
func checkReview(pr *PullRequest, b reviewBody) (Review, []ReviewComment, string) {
	event := ""
	if b.Event != nil {
		event = *b.Event
	}
	state, ok := reviewStates[event]
	if !ok {
		return Review{}, nil, fmt.Sprintf("Event %q is not one of APPROVE, REQUEST_CHANGES, COMMENT", event)
	}
	body := ""
	if b.Body != nil {
		body = *b.Body
	}
	if body == "" && (event == "REQUEST_CHANGES" || event == "COMMENT") {
		// "body: Required when using REQUEST_CHANGES or COMMENT for the
		// event parameter."
		return Review{}, nil, "Body is required for this event"
	}
	if utf8.RuneCountInString(body) > MaxBody {
		return Review{}, nil, fmt.Sprintf("Body is too long (maximum is %d characters)", MaxBody)
	}
	commit := pr.HeadSHA
	if b.CommitID != nil && *b.CommitID != "" {
		commit = *b.CommitID
		if commit != pr.HeadSHA && !slices.Contains(pr.OtherSHAs, commit) {
			return Review{}, nil, "No commit found for SHA: " + commit
		}
	}
	files := map[string]File{}
	for _, f := range pr.Files {
		files[f.Filename] = f
	}
	var comments []ReviewComment
	for _, c := range b.Comments {
		rc, msg := checkComment(c, files)
		if msg != "" {
			return Review{}, nil, msg
		}
		rc.CommitID = commit
		comments = append(comments, rc)
	}
	rv := Review{PR: pr.Number, CommitID: commit, Event: event, State: state, Body: body}
	return rv, comments, ""
}

// checkComment returns GitHub's 422 text for a comment GitHub would reject.
func checkComment(c reviewCommentBody, files map[string]File) (ReviewComment, string) {
	rc := ReviewComment{Path: c.Path, Body: c.Body, Side: "RIGHT"}
	if c.Position != nil {
		return rc, "position is deprecated and not supported by fakegithub; use line and side"
	}
	if c.Body == "" {
		return rc, "Body can't be blank"
	}
	if utf8.RuneCountInString(c.Body) > MaxBody {
		return rc, fmt.Sprintf("Body is too long (maximum is %d characters)", MaxBody)
	}
	f, ok := files[c.Path]
	if !ok {
		return rc, "Path could not be resolved"
	}
	if c.Line == nil {
		return rc, "Line could not be resolved"
	}
	rc.Line = *c.Line
	if c.Side != nil {
		rc.Side = *c.Side
	}
	if rc.Side != "RIGHT" && rc.Side != "LEFT" {
		return rc, fmt.Sprintf("Side %q is not LEFT or RIGHT", rc.Side)
	}
	hunks := parseHunks(f.Patch)
	if len(hunks) == 0 {
		return rc, "diff hunk can't be blank"
	}
	h := slices.IndexFunc(hunks, func(h hunk) bool { return h.has(rc.Side, rc.Line) })
	if h < 0 {
		return rc, MsgLineNotInDiff
	}
	if c.StartLine != nil {
		rc.StartLine, rc.StartSide = *c.StartLine, rc.Side
		if c.StartSide != nil {
			rc.StartSide = *c.StartSide
		}
		if rc.StartSide != "RIGHT" && rc.StartSide != "LEFT" {
			return rc, fmt.Sprintf("Start side %q is not LEFT or RIGHT", rc.StartSide)
		}
		if rc.StartSide == rc.Side && rc.StartLine >= rc.Line {
			return rc, "Pull request review thread start line must precede the end line"
		}
		if !hunks[h].has(rc.StartSide, rc.StartLine) {
			if slices.ContainsFunc(hunks, func(h hunk) bool { return h.has(rc.StartSide, rc.StartLine) }) {
				return rc, MsgStartSameHunk
			}
			return rc, MsgLineNotInDiff
		}
	}
	return rc, ""
}

// hunk is one hunk's old (LEFT) and new (RIGHT) line ranges, inclusive;
// an empty side has end < start.
type hunk struct{ oldStart, oldEnd, newStart, newEnd int }

func (h hunk) has(side string, line int) bool {
	if side == "LEFT" {
		return h.oldStart <= line && line <= h.oldEnd
	}
	return h.newStart <= line && line <= h.newEnd
}

var hunkRE = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// parseHunks reads the hunk headers of a patch. Every line a hunk shows,
// context included, can carry a comment on its side.
func parseHunks(patch string) []hunk {
	var out []hunk
	for _, line := range strings.Split(patch, "\n") {
		m := hunkRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		num := func(s string, def int) int {
			if s == "" {
				return def
			}
			n, _ := strconv.Atoi(s)
			return n
		}
		oldStart, oldLen, newStart, newLen := num(m[1], 0), num(m[2], 1), num(m[3], 0), num(m[4], 1)
		out = append(out, hunk{oldStart: oldStart, oldEnd: oldStart + oldLen - 1, newStart: newStart, newEnd: newStart + newLen - 1})
	}
	return out
}
