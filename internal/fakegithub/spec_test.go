package fakegithub

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSpecCoversRoutes: the trimmed description has exactly the
// operations the fake serves, under the same method and path template.
func TestSpecCoversRoutes(t *testing.T) {
	t.Parallel()
	sp, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	var got, ids []string
	for path, item := range sp.doc.Paths.Map() {
		for method, op := range item.Operations() {
			got = append(got, method+" "+path)
			ids = append(ids, op.OperationID)
		}
	}
	slices.Sort(got)
	slices.Sort(ids)
	rest := slices.DeleteFunc(slices.Clone(Routes), func(r string) bool { return r == RouteGraphQL }) // GraphQL: spec/schema.graphql
	if diff := cmp.Diff(slices.Sorted(slices.Values(rest)), got); diff != "" {
		t.Errorf("operations in spec/api.github.com.json (-Routes +spec):\n%s", diff)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(operations)), ids); diff != "" {
		t.Errorf("operationIds (-regen_test.go +spec):\n%s", diff)
	}
}

// TestAnswersFollowSpec drives every route with what GitHub accepts, on a
// server that fails the test on any violation, so every kind of answer
// the fake gives is checked against the description: pull requests from a
// fork, by a bot, as a draft; renamed, binary and added files; single- and
// multi-line comments, comments added by hand; pending and submitted
// reviews; check runs in progress and completed.
func TestAnswersFollowSpec(t *testing.T) {
	t.Parallel()
	s := New("o", "r")
	s.AddPullRequest(PullRequest{
		Number: 1, Title: "t", HeadSHA: "head1", BaseSHA: "base1", HeadRef: "feature", BaseRef: "main",
		HeadRepo: "someone/r", User: "dependabot[bot]", UserType: "Bot", Draft: true,
		Files: []File{
			{Filename: "a.go", Status: "modified", Additions: 2, Patch: "@@ -1,3 +1,5 @@\n a\n+b\n+c\n d\n e"},
			{Filename: "new.go", PreviousFilename: "old.go", Status: "renamed"},
			{Filename: "logo.png", Status: "added", Additions: 1},
		},
	})
	s.AddReviewComment(1, ReviewComment{Path: "a.go", Line: 2, Body: "by hand"})
	url := s.Start(t).URL
	for _, root := range []string{url, url + "/api/v3"} {
		ok := func(method, path string, body any) {
			t.Helper()
			if a, _, _ := do(t, method, root+path, DefaultToken, body); a.Status >= 300 {
				t.Fatalf("%s %s = %+v", method, path, a)
			}
		}
		ok("POST", "/repos/o/r/check-runs", map[string]any{"name": "w", "head_sha": "head1", "status": "in_progress"})
		runs := s.CheckRuns()
		run := runs[len(runs)-1].ID
		ok("GET", fmt.Sprintf("/repos/o/r/check-runs/%d", run), nil)
		ok("PATCH", fmt.Sprintf("/repos/o/r/check-runs/%d", run), map[string]any{
			"status": "completed", "conclusion": "neutral", "details_url": "https://example.com/run",
			"output": map[string]any{"title": "t", "summary": "s", "annotations": annotations(2)},
		})
		ok("PATCH", fmt.Sprintf("/repos/o/r/check-runs/%d", run), map[string]any{
			"output": map[string]any{"title": "t", "summary": "s", "annotations": annotations(1)},
		})
		ok("GET", fmt.Sprintf("/repos/o/r/check-runs/%d", run), nil)
		ok("GET", "/repos/o/r/pulls/1", nil)
		ok("GET", "/repos/o/r/pulls/1/files?per_page=2", nil)
		ok("GET", "/repos/o/r/pulls/1/files?per_page=2&page=2", nil)
		ok("POST", "/repos/o/r/pulls/1/reviews", map[string]any{"body": "pending"})
		ok("POST", "/repos/o/r/pulls/1/reviews", map[string]any{
			"commit_id": "head1", "event": "COMMENT", "body": "b",
			"comments": []map[string]any{
				{"path": "a.go", "line": 3, "side": "RIGHT", "body": "one"},
				{"path": "a.go", "start_line": 2, "start_side": "RIGHT", "line": 3, "side": "RIGHT", "body": "two"},
				{"path": "a.go", "line": 2, "side": "LEFT", "body": "old side"},
			},
		})
		ok("GET", "/repos/o/r/pulls/1/comments?per_page=100", nil)
		ok("GET", "/repos/o/r/pulls/1/reviews?per_page=100", nil)
	}
}

// TestAnswerViolationIs500: an answer the description does not allow (a
// file status GitHub never sends) is the fake's bug: 500 and a violation.
func TestAnswerViolationIs500(t *testing.T) {
	t.Parallel()
	s := New("o", "r")
	s.AddPullRequest(PullRequest{Number: 1, HeadSHA: "h", Files: []File{{Filename: "a", Status: "moved"}}})
	ts := httptest.NewServer(s) // not Start: the violation is the point
	t.Cleanup(ts.Close)
	url := ts.URL
	a, _, _ := do(t, "GET", url+"/repos/o/r/pulls/1/files", DefaultToken, nil)
	if a.Status != 500 || !strings.Contains(a.Message, "violates GitHub's REST API description") {
		t.Errorf("answer = %+v, want 500 naming the violation", a)
	}
	got := s.Violations()
	if len(got) != 1 || !strings.Contains(got[0], "GET /repos/o/r/pulls/1/files: response 200: /0/status: value is not one of the allowed values") {
		t.Errorf("Violations() = %q, want the file status", got)
	}
	if rs := s.Requests(); len(rs) != 1 || rs[0].Status != 500 {
		t.Errorf("recorded %+v, want the 500 the client saw", rs)
	}
}

// TestRequestViolations: what the description does not allow, including
// fields it does not name (GitHub ignores those silently), is answered
// 422 without a change of state, and recorded.
func TestRequestViolations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path string
		body               any
		violation          string
	}{
		{"misspelt field", "POST", "/repos/o/r/check-runs", map[string]any{"name": "w", "head_sha": "h", "conclsion": "success"},
			`POST /repos/o/r/check-runs: request: property "conclsion" is unsupported`},
		{"misspelt annotation field", "POST", "/repos/o/r/check-runs",
			map[string]any{"name": "w", "head_sha": "h", "output": map[string]any{"title": "t", "summary": "s", "annotations": []map[string]any{
				{"path": "a.go", "start_line": 1, "end_line": 1, "annotation_level": "warning", "message": "m", "raw_detail": "x"},
			}}},
			`/output/annotations/0: property "raw_detail" is unsupported`},
		{"status GitHub Actions reserves", "POST", "/repos/o/r/check-runs", map[string]any{"name": "w", "head_sha": "h", "status": "waiting"},
			`/status: value is not one of the allowed values ["queued","in_progress","completed"]`},
		{"misspelt comment field", "POST", "/repos/o/r/pulls/3/reviews",
			map[string]any{"event": "COMMENT", "body": "b", "comments": []map[string]any{{"path": "a.go", "line": 1, "body": "c", "sde": "RIGHT"}}},
			`/comments/0: property "sde" is unsupported`},
		{"wrong type", "POST", "/repos/o/r/pulls/3/reviews", map[string]any{"event": "COMMENT", "body": "b", "comments": []map[string]any{{"path": "a.go", "line": "1", "body": "c"}}},
			`/comments/0/line: value must be an integer`},
		{"bad query", "GET", "/repos/o/r/pulls/3/files?per_page=all", nil, `parameter "per_page"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, url := newLenientServer(t)
			a, _, _ := do(t, tt.method, url+tt.path, DefaultToken, tt.body)
			if a.Status != 422 || !strings.HasPrefix(a.Message, "Invalid request.\n\n") {
				t.Errorf("answer = %+v, want 422 Invalid request", a)
			}
			checkViolations(t, s, tt.violation)
			if n := len(s.CheckRuns()) + len(s.Reviews(pr)); n != 0 {
				t.Errorf("%d check runs and reviews stored, want none", n)
			}
		})
	}
}

func TestDiffHunk(t *testing.T) {
	t.Parallel()
	patch := "@@ -1,3 +1,4 @@\n a\n+b\n c\n-d\n@@ -10,2 +11,2 @@\n x\n-y\n+z"
	tests := []struct {
		side string
		line int
		want string
	}{
		{"RIGHT", 1, "@@ -1,3 +1,4 @@\n a"},
		{"RIGHT", 2, "@@ -1,3 +1,4 @@\n a\n+b"},
		{"LEFT", 3, "@@ -1,3 +1,4 @@\n a\n+b\n c\n-d"},
		{"RIGHT", 12, "@@ -10,2 +11,2 @@\n x\n-y\n+z"},
		{"LEFT", 11, "@@ -10,2 +11,2 @@\n x\n-y"},
		{"RIGHT", 5, ""},
	}
	for _, tt := range tests {
		if got := diffHunk(patch, tt.side, tt.line); got != tt.want {
			t.Errorf("diffHunk(%s, %d) = %q, want %q", tt.side, tt.line, got, tt.want)
		}
	}
}
