package fakegithub

import (
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
	Files          []File
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
}

// AddReviewComment adds an existing comment (for example from an earlier
// run, or by a person) to pull request pr, without validation.
func (s *Server) AddReviewComment(pr int, c ReviewComment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.comments == nil {
		s.comments = map[int][]ReviewComment{}
	}
	if c.ID == 0 {
		c.ID = s.id()
	}
	s.comments[pr] = append(s.comments[pr], c)
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
	if !ok {
		return
	}
	full := s.Owner + "/" + s.Repo
	head := pr.HeadRepo
	if head == "" {
		head = full
	}
	user, typ := pr.User, pr.UserType
	if user == "" {
		user = "octocat"
	}
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
	repoJSON := func(fullName string) map[string]any {
		owner, name, _ := strings.Cut(fullName, "/")
		return map[string]any{
			"name": name, "full_name": fullName,
			"owner": map[string]any{"login": owner},
			"fork":  fullName != full,
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"number":        pr.Number,
		"state":         "open",
		"title":         pr.Title,
		"body":          pr.Body,
		"draft":         pr.Draft,
		"user":          map[string]any{"login": user, "type": typ},
		"head":          map[string]any{"sha": pr.HeadSHA, "ref": pr.HeadRef, "repo": repoJSON(head)},
		"base":          map[string]any{"sha": pr.BaseSHA, "ref": pr.BaseRef, "repo": repoJSON(full)},
		"changed_files": changed,
		"additions":     adds,
		"deletions":     dels,
		"html_url":      fmt.Sprintf("https://github.com/%s/pull/%d", full, pr.Number),
	})
}

func (s *Server) listFiles(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.pull(w, r)
	if !ok {
		return
	}
	files := pr.Files
	if len(files) > MaxFiles {
		files = files[:MaxFiles]
	}
	paginate(w, r, files)
}

func (s *Server) listReviewComments(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.pull(w, r)
	if !ok {
		return
	}
	out := []map[string]any{}
	for _, c := range s.ReviewComments(pr.Number) {
		out = append(out, c.json())
	}
	paginate(w, r, out)
}

func (c ReviewComment) json() map[string]any {
	m := map[string]any{
		"id": c.ID, "pull_request_review_id": c.ReviewID, "path": c.Path,
		"line": c.Line, "side": c.Side, "body": c.Body, "commit_id": c.CommitID,
		"user": map[string]any{"login": c.User},
	}
	if c.StartLine > 0 {
		m["start_line"], m["start_side"] = c.StartLine, c.StartSide
	}
	return m
}

func (s *Server) listReviews(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.pull(w, r)
	if !ok {
		return
	}
	out := []map[string]any{}
	for _, rv := range s.Reviews(pr.Number) {
		out = append(out, rv.json())
	}
	paginate(w, r, out)
}

func (rv Review) json() map[string]any {
	return map[string]any{
		"id": rv.ID, "body": rv.Body, "state": rv.State, "commit_id": rv.CommitID,
		"user": map[string]any{"login": rv.User},
	}
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
		s.errorJSON(w, r, http.StatusBadRequest, "Problems parsing JSON", nil, docsURL(route))
		return
	}
	event := ""
	if b.Event != nil {
		event = *b.Event
	}
	state, ok := reviewStates[event]
	if !ok {
		s.unprocessable(w, r, route, "Unprocessable Entity", fmt.Sprintf("Event %q is not one of APPROVE, REQUEST_CHANGES, COMMENT", event))
		return
	}
	body := ""
	if b.Body != nil {
		body = *b.Body
	}
	if body == "" && (event == "REQUEST_CHANGES" || event == "COMMENT") {
		// "body: Required when using REQUEST_CHANGES or COMMENT for the
		// event parameter."
		s.unprocessable(w, r, route, "Unprocessable Entity", "Body is required for this event")
		return
	}
	if utf8.RuneCountInString(body) > MaxBody {
		s.unprocessable(w, r, route, "Unprocessable Entity", fmt.Sprintf("Body is too long (maximum is %d characters)", MaxBody))
		return
	}
	commit := pr.HeadSHA
	if b.CommitID != nil && *b.CommitID != "" {
		commit = *b.CommitID
		if commit != pr.HeadSHA && !slices.Contains(pr.OtherSHAs, commit) {
			s.unprocessable(w, r, route, "Unprocessable Entity", "No commit found for SHA: "+commit)
			return
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
			s.unprocessable(w, r, route, "Unprocessable Entity", msg)
			return
		}
		rc.CommitID = commit
		comments = append(comments, rc)
	}
	s.mu.Lock()
	rv := Review{ID: s.id(), PR: pr.Number, CommitID: commit, Event: event, State: state, Body: body, User: "github-actions[bot]"}
	if s.reviews == nil {
		s.reviews = map[int][]Review{}
	}
	if s.comments == nil {
		s.comments = map[int][]ReviewComment{}
	}
	s.reviews[pr.Number] = append(s.reviews[pr.Number], rv)
	for _, c := range comments {
		c.ID, c.ReviewID, c.User = s.id(), rv.ID, rv.User
		s.comments[pr.Number] = append(s.comments[pr.Number], c)
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, rv.json())
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
