package fakegithub

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const pr = 3

// newServer serves a pull request with two files; the test fails on any
// request or answer that GitHub's REST API description does not allow.
func newServer(t *testing.T) (*Server, string) {
	t.Helper()
	s, url := newLenientServer(t)
	s.FailOnViolations(t)
	return s, url
}

// newLenientServer is newServer for tests that send what the description
// does not allow on purpose, and check Violations themselves.
func newLenientServer(t *testing.T) (*Server, string) {
	t.Helper()
	s := New("o", "r")
	s.AddPullRequest(PullRequest{
		Number: pr, HeadSHA: "head", BaseSHA: "base",
		Files: []File{
			{Filename: "a.go", Status: "modified", Patch: "@@ -1,3 +1,5 @@\n a\n+b\n+c\n d\n e\n@@ -10,4 +12,3 @@\n x\n-y\n z\n w"},
			{Filename: "bin", Status: "modified"},
		},
	})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts.URL
}

// checkViolations fails t unless s recorded exactly one violation
// containing want, or none when want is "".
func checkViolations(t *testing.T, s *Server, want string) {
	t.Helper()
	got := s.Violations()
	switch {
	case want == "" && len(got) > 0:
		t.Errorf("Violations() = %q, want none", got)
	case want != "" && (len(got) != 1 || !strings.Contains(got[0], want)):
		t.Errorf("Violations() = %q, want one containing %q", got, want)
	}
}

type answer struct {
	Status  int
	Message string
	Errors  []string
}

func do(t *testing.T, method, url, token string, body any) (answer, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = strings.NewReader(string(b))
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, url, r)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{Status: resp.StatusCode}
	if resp.StatusCode >= 300 {
		var e struct {
			Message string   `json:"message"`
			Errors  []string `json:"errors"`
		}
		json.Unmarshal(raw, &e)
		a.Message, a.Errors = e.Message, e.Errors
	}
	return a, resp.Header, raw
}

func annotations(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"path": "a.go", "start_line": 1, "end_line": 1, "annotation_level": "warning", "message": "m"}
	}
	return out
}

func TestCheckRunValidation(t *testing.T) {
	t.Parallel()
	output := func(summary string, n int) map[string]any {
		return map[string]any{"title": "t", "summary": summary, "annotations": annotations(n)}
	}
	tests := []struct {
		name   string
		token  string
		create map[string]any
		update map[string]any // sent to the created run when create succeeds
		want   answer
		// violation is part of the one violation of GitHub's description
		// the fake records; "" for none.
		violation string
	}{
		{"created", DefaultToken, map[string]any{"name": "warden", "head_sha": "h", "status": "in_progress"}, nil, answer{Status: 201}, ""},
		{"no token", "", map[string]any{"name": "warden", "head_sha": "h"}, nil, answer{Status: 401, Message: MsgBadCredentials}, ""},
		{"wrong token", "nope", map[string]any{"name": "warden", "head_sha": "h"}, nil, answer{Status: 401, Message: MsgBadCredentials}, ""},
		{"read-only token", DefaultReadOnlyToken, map[string]any{"name": "warden", "head_sha": "h"}, nil, answer{Status: 403, Message: MsgNoWriteAccess}, ""},
		{"no name", DefaultToken, map[string]any{"head_sha": "h"}, nil, answer{Status: 422, Message: "Invalid request.\n\n\"name\" wasn't supplied."}, "/name: property \"name\" is missing"},
		{"bad conclusion", DefaultToken, map[string]any{"name": "w", "head_sha": "h", "conclusion": "passed"}, nil,
			answer{Status: 422, Message: `Invalid request.` + "\n\n" + `"passed" is not a member of ["action_required" "cancelled" "failure" "neutral" "success" "skipped" "timed_out"].`}, "/conclusion: value is not one of the allowed values"},
		{"completed without conclusion", DefaultToken, map[string]any{"name": "w", "head_sha": "h", "status": "completed"}, nil,
			answer{Status: 422, Message: "Invalid request.\n\n\"conclusion\" wasn't supplied."}, ""},
		{"50 annotations", DefaultToken, map[string]any{"name": "w", "head_sha": "h", "output": output("s", 50)}, nil, answer{Status: 201}, ""},
		{"51 annotations", DefaultToken, map[string]any{"name": "w", "head_sha": "h", "output": output("s", 51)}, nil,
			answer{Status: 422, Message: "Invalid request.\n\nNo more than 50 items are allowed; 51 were supplied."}, "/output/annotations: maximum number of items is 50"},
		{"summary at the limit, in characters", DefaultToken, map[string]any{"name": "w", "head_sha": "h", "output": output(strings.Repeat("ü", 65535), 0)}, nil, answer{Status: 201}, ""},
		{"summary over the limit", DefaultToken, map[string]any{"name": "w", "head_sha": "h", "output": output(strings.Repeat("x", 65536), 0)}, nil,
			answer{Status: 422, Message: "Invalid request.\n\nOnly 65535 characters are allowed; 65536 were supplied."}, "/output/summary: maximum string length is 65535"},
		{"update with 51 annotations", DefaultToken, map[string]any{"name": "w", "head_sha": "h"}, map[string]any{"output": output("s", 51)},
			answer{Status: 422, Message: "Invalid request.\n\nNo more than 50 items are allowed; 51 were supplied."}, "PATCH /repos/o/r/check-runs/1: request: /output/annotations: maximum number of items is 50"},
		{"update with a bad conclusion", DefaultToken, map[string]any{"name": "w", "head_sha": "h"}, map[string]any{"conclusion": "stale"},
			answer{Status: 422, Message: `Invalid request.` + "\n\n" + `"stale" is not a member of ["action_required" "cancelled" "failure" "neutral" "success" "skipped" "timed_out"].`}, ""},
		{"update completes", DefaultToken, map[string]any{"name": "w", "head_sha": "h"}, map[string]any{"conclusion": "neutral", "output": output("s", 3)}, answer{Status: 200}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, url := newLenientServer(t)
			got, _, raw := do(t, "POST", url+"/repos/o/r/check-runs", tt.token, tt.create)
			if tt.update != nil && got.Status == 201 {
				var run struct{ ID int64 }
				json.Unmarshal(raw, &run)
				got, _, _ = do(t, "PATCH", fmt.Sprintf("%s/repos/o/r/check-runs/%d", url, run.ID), tt.token, tt.update)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			checkViolations(t, s, tt.violation)
		})
	}
}

func TestAnnotationsAppend(t *testing.T) {
	t.Parallel()
	s, url := newServer(t)
	_, _, raw := do(t, "POST", url+"/api/v3/repos/o/r/check-runs", DefaultToken,
		map[string]any{"name": "w", "head_sha": "h", "output": map[string]any{"title": "t", "summary": "s", "annotations": annotations(50)}})
	var run struct{ ID int64 }
	json.Unmarshal(raw, &run)
	for range 2 {
		a, _, _ := do(t, "PATCH", fmt.Sprintf("%s/api/v3/repos/o/r/check-runs/%d", url, run.ID), DefaultToken,
			map[string]any{"conclusion": "failure", "output": map[string]any{"title": "t", "summary": "s2", "annotations": annotations(50)}})
		if a.Status != 200 {
			t.Fatalf("update = %+v", a)
		}
	}
	got, _ := s.CheckRun(run.ID)
	if len(got.Annotations) != 150 || got.Status != "completed" || got.Conclusion != "failure" || got.Summary != "s2" || got.Updates != 2 {
		t.Errorf("check run = %d annotations, %s/%s, summary %q, %d updates; want 150, completed/failure, s2, 2",
			len(got.Annotations), got.Status, got.Conclusion, got.Summary, got.Updates)
	}
	for _, r := range s.Requests() {
		if !r.Enterprise || r.Route == "" {
			t.Errorf("request %s %s: enterprise %v, route %q; want the /api/v3 prefix recognized", r.Method, r.Path, r.Enterprise, r.Route)
		}
	}
}

func TestReviewValidation(t *testing.T) {
	t.Parallel()
	line := func(path string, l int) map[string]any {
		return map[string]any{"path": path, "line": l, "side": "RIGHT", "body": "b"}
	}
	multi := func(start, end int) map[string]any {
		return map[string]any{"path": "a.go", "start_line": start, "line": end, "side": "RIGHT", "start_side": "RIGHT", "body": "b"}
	}
	review := func(comments ...map[string]any) map[string]any {
		return map[string]any{"commit_id": "head", "event": "COMMENT", "body": "x", "comments": comments}
	}
	unprocessable := func(msg string) answer {
		return answer{Status: 422, Message: "Unprocessable Entity", Errors: []string{msg}}
	}
	tests := []struct {
		name         string
		token        string
		body         map[string]any
		want         answer
		wantComments int
		violation    string // part of the one violation recorded; "" for none
	}{
		{"lines in the diff", DefaultToken, review(line("a.go", 1), line("a.go", 5), line("a.go", 14), multi(2, 4), multi(12, 14)), answer{Status: 200}, 5, ""},
		{"context line", DefaultToken, review(line("a.go", 4)), answer{Status: 200}, 1, ""},
		{"line between hunks", DefaultToken, review(line("a.go", 1), line("a.go", 8)), unprocessable(MsgLineNotInDiff), 0, ""},
		{"line after the last hunk", DefaultToken, review(line("a.go", 15)), unprocessable(MsgLineNotInDiff), 0, ""},
		{"start in another hunk", DefaultToken, review(multi(4, 12)), unprocessable(MsgStartSameHunk), 0, ""},
		{"start outside the diff", DefaultToken, review(multi(7, 12)), unprocessable(MsgLineNotInDiff), 0, ""},
		{"left side", DefaultToken, review(map[string]any{"path": "a.go", "line": 11, "side": "LEFT", "body": "b"}), answer{Status: 200}, 1, ""},
		{"left side outside", DefaultToken, review(map[string]any{"path": "a.go", "line": 5, "side": "LEFT", "body": "b"}), unprocessable(MsgLineNotInDiff), 0, ""},
		{"file without patch", DefaultToken, review(line("bin", 1)), unprocessable("diff hunk can't be blank"), 0, ""},
		{"file not in the pull request", DefaultToken, review(line("c.go", 1)), unprocessable("Path could not be resolved"), 0, ""},
		{"comment body too long", DefaultToken, review(map[string]any{"path": "a.go", "line": 1, "body": strings.Repeat("x", MaxBody+1)}),
			unprocessable("Body is too long (maximum is 65536 characters)"), 0, ""},
		{"review body at the limit", DefaultToken, map[string]any{"event": "COMMENT", "body": strings.Repeat("ü", MaxBody)}, answer{Status: 200}, 0, ""},
		{"review body too long", DefaultToken, map[string]any{"event": "COMMENT", "body": strings.Repeat("x", MaxBody+1)},
			unprocessable("Body is too long (maximum is 65536 characters)"), 0, ""},
		{"comment without body", DefaultToken, map[string]any{"event": "COMMENT"}, unprocessable("Body is required for this event"), 0, ""},
		{"unknown commit", DefaultToken, map[string]any{"event": "COMMENT", "body": "x", "commit_id": "other"}, unprocessable("No commit found for SHA: other"), 0, ""},
		{"bad event", DefaultToken, map[string]any{"event": "LGTM", "body": "x"}, unprocessable(`Event "LGTM" is not one of APPROVE, REQUEST_CHANGES, COMMENT`), 0,
			`/event: value is not one of the allowed values ["APPROVE","REQUEST_CHANGES","COMMENT"]`},
		{"read-only token", DefaultReadOnlyToken, review(line("a.go", 1)), answer{Status: 403, Message: MsgNoWriteAccess}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, url := newLenientServer(t)
			got, _, _ := do(t, "POST", fmt.Sprintf("%s/repos/o/r/pulls/%d/reviews", url, pr), tt.token, tt.body)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if n := len(s.ReviewComments(pr)); n != tt.wantComments {
				t.Errorf("comments stored = %d, want %d (a rejected review stores none)", n, tt.wantComments)
			}
			checkViolations(t, s, tt.violation)
		})
	}
}

func TestPaginationAndFileLimit(t *testing.T) {
	t.Parallel()
	s := New("o", "r")
	var files []File
	for i := range 3050 {
		files = append(files, File{Filename: fmt.Sprint("f", i), Status: "added"})
	}
	s.AddPullRequest(PullRequest{Number: 1, HeadSHA: "h", Files: files})
	url := s.Start(t).URL
	next := url + "/repos/o/r/pulls/1/files?per_page=100"
	var n, pages int
	for next != "" {
		a, h, raw := do(t, "GET", next, DefaultReadOnlyToken, nil)
		if a.Status != 200 {
			t.Fatalf("GET %s = %+v", next, a)
		}
		var page []File
		json.Unmarshal(raw, &page)
		n += len(page)
		pages++
		next = ""
		for _, l := range strings.Split(h.Get("Link"), ",") {
			if strings.Contains(l, `rel="next"`) {
				next = strings.Trim(strings.TrimSpace(strings.Split(l, ";")[0]), "<>")
			}
		}
	}
	if n != MaxFiles || pages != 30 {
		t.Errorf("listed %d files in %d pages, want %d in 30", n, pages, MaxFiles)
	}
	_, _, raw := do(t, "GET", url+"/repos/o/r/pulls/1", DefaultReadOnlyToken, nil)
	var got struct {
		ChangedFiles int `json:"changed_files"`
	}
	json.Unmarshal(raw, &got)
	if got.ChangedFiles != 3050 {
		t.Errorf("changed_files = %d, want 3050", got.ChangedFiles)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	s, url := newServer(t)
	reset := time.Unix(2000000000, 0)
	s.Fail(RouteGetPullRequest, Fault{Status: 403, RetryAfter: "30", Times: 2})
	s.Fail(RouteGetPullRequest, Fault{Status: 403, RateLimitReset: reset})
	s.Fail(RouteGetPullRequest, Fault{Status: 503})
	type seen struct {
		Status                       int
		RetryAfter, Remaining, Reset string
	}
	var got []seen
	for range 5 {
		a, h, _ := do(t, "GET", fmt.Sprintf("%s/repos/o/r/pulls/%d", url, pr), DefaultToken, nil)
		got = append(got, seen{a.Status, h.Get("Retry-After"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset")})
	}
	want := []seen{
		{403, "30", "", ""},
		{403, "30", "", ""},
		{403, "", "0", "2000000000"},
		{503, "", "", ""},
		{200, "", "", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	var statuses []int
	for _, r := range s.RequestsTo(RouteGetPullRequest) {
		statuses = append(statuses, r.Status)
	}
	if diff := cmp.Diff([]int{403, 403, 403, 503, 200}, statuses); diff != "" {
		t.Errorf("recorded statuses (-want +got):\n%s", diff)
	}
}

func TestFailUnknownRoutePanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Errorf("Fail(unknown route) did not panic")
		}
	}()
	New("o", "r").Fail("GET /nope", Fault{Status: 500})
}

func TestRecordingHidesAuthorization(t *testing.T) {
	t.Parallel()
	s := New("o", "r")
	s.EchoAuthorization = true
	url := s.Start(t).URL
	a, _, _ := do(t, "GET", url+"/repos/o/r/pulls/99", "ghs_wrong", nil)
	if a.Status != 401 || !strings.Contains(a.Message, "ghs_wrong") {
		t.Errorf("answer = %+v, want 401 echoing the Authorization header", a)
	}
	for _, r := range s.Requests() {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("recorded request keeps the Authorization header")
		}
	}
}

func TestOtherRepositoryIsNotFound(t *testing.T) {
	t.Parallel()
	_, url := newServer(t)
	for _, path := range []string{"/repos/o/other/pulls/3", "/repos/x/r/pulls/3", "/repos/o/r/pulls/99", "/nope"} {
		if a, _, _ := do(t, "GET", url+path, DefaultToken, nil); a.Status != 404 {
			t.Errorf("GET %s = %d, want 404", path, a.Status)
		}
	}
}

func TestTransport(t *testing.T) {
	t.Parallel()
	s := New("o", "r")
	s.AddPullRequest(PullRequest{Number: 1, HeadSHA: "h"})
	req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://fake.invalid/api/v3/repos/o/r/pulls/1", nil)
	req.Header.Set("Authorization", "token "+DefaultToken)
	resp, err := s.Transport().RoundTrip(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("RoundTrip() = %v, %v, want 200", resp, err)
	}
	var got struct {
		Head struct{ SHA string } `json:"head"`
	}
	json.NewDecoder(resp.Body).Decode(&got)
	if got.Head.SHA != "h" {
		t.Errorf("head.sha = %q, want h", got.Head.SHA)
	}
}
