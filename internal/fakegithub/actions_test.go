package fakegithub

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testVersion is the cache version of the tests' saves.
var testVersion = CacheVersion("warden-results")

// runtimeClient starts a run on s and returns a client for its job.
func runtimeClient(s *Server, url string, r WorkflowRun) (*RuntimeClient, *Job) {
	job := s.StartRun(r)
	return &RuntimeClient{ResultsURL: ResultsURL(url), Token: job.RuntimeToken}, job
}

func dirWith(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCacheScoping: the cache service restores what GitHub's documented
// access restrictions allow, and nothing else. A pull request's run saves
// under its merge ref, which only that pull request's runs restore; the
// default branch's caches are restored by every run; a run for a pull
// request also restores its base branch's; runs on the default branch
// cannot see a pull request's cache (the bug of an issue_comment
// /warden resume that found nothing).
func TestCacheScoping(t *testing.T) {
	t.Parallel()
	s, url := newServer(t)
	save := func(r WorkflowRun, key string) {
		t.Helper()
		c, _ := runtimeClient(s, url, r)
		if ok, err := c.SaveCache(context.Background(), key, testVersion, dirWith(t, map[string]string{"f": key})); err != nil || !ok {
			t.Fatalf("save %s from %s: %v, %v", key, r.Event, ok, err)
		}
	}
	pr7 := WorkflowRun{Event: "pull_request", PullRequests: []int{7}, BaseRef: "main", HeadBranch: "feature"}
	pr8 := WorkflowRun{Event: "pull_request", PullRequests: []int{8}, BaseRef: "main", HeadBranch: "other"}
	pr9 := WorkflowRun{Event: "pull_request", PullRequests: []int{9}, BaseRef: "feature-a", HeadBranch: "feature-b"}
	push := WorkflowRun{Event: "push", HeadBranch: "main"}
	pushA := WorkflowRun{Event: "push", Ref: "refs/heads/feature-a", HeadBranch: "feature-a"}
	comment := WorkflowRun{Event: "issue_comment"}
	target := WorkflowRun{Event: "pull_request_target", PullRequests: []int{7}, BaseRef: "main"}
	save(pr7, "warden-pr7")
	save(push, "warden-main")
	save(pushA, "warden-feature-a")

	tests := []struct {
		name string
		run  WorkflowRun
		key  string
		want string // matched key; "" for a miss
	}{
		{"the pull request's own re-run", pr7, "warden-pr7", "warden-pr7"},
		{"issue_comment cannot see the merge ref", comment, "warden-pr7", ""},
		{"pull_request_target cannot see the merge ref", target, "warden-pr7", ""},
		{"a sibling pull request cannot", pr8, "warden-pr7", ""},
		{"the default branch cannot see a child's", push, "warden-pr7", ""},
		{"every run sees the default branch", comment, "warden-main", "warden-main"},
		{"a pull request sees the default branch", pr8, "warden-main", "warden-main"},
		{"a pull request sees its base branch", pr9, "warden-feature-a", "warden-feature-a"},
		{"not another branch", pr7, "warden-feature-a", ""},
		{"prefix match", pr7, "warden-p", "warden-pr7"},
	}
	for _, tt := range tests {
		c, _ := runtimeClient(s, url, tt.run)
		got, err := c.RestoreCache(context.Background(), tt.key, nil, testVersion, t.TempDir())
		if err != nil || got != tt.want {
			t.Errorf("%s: RestoreCache(%q) = %q, %v; want %q", tt.name, tt.key, got, err, tt.want)
		}
	}
	// Own scope first, then the default branch; the restored files are the
	// saved ones.
	save(WorkflowRun{Event: "pull_request", PullRequests: []int{7}, BaseRef: "main"}, "warden-main")
	c, _ := runtimeClient(s, url, pr7)
	dir := t.TempDir()
	if got, err := c.RestoreCache(context.Background(), "warden-main", nil, testVersion, dir); err != nil || got != "warden-main" {
		t.Fatalf("restore: %q, %v", got, err)
	}
	scopes := map[string]bool{}
	for _, e := range s.Caches() {
		if e.Key == "warden-main" {
			scopes[e.Scope] = true
		}
	}
	if diff := cmp.Diff(map[string]bool{"refs/heads/main": true, "refs/pull/7/merge": true}, scopes); diff != "" {
		t.Errorf("scopes of warden-main (-want +got):\n%s", diff)
	}
}

// TestCacheModes: a low-trust event on the default branch's scope
// (pull_request_target, issue_comment) gets read-only cache access unless
// its job declares write, which works and draws a warning; trusted events
// and pull request scopes keep read-write; write-only and none refuse
// restores.
func TestCacheModes(t *testing.T) {
	t.Parallel()
	s, url := newServer(t)
	tests := []struct {
		run               WorkflowRun
		canSave, canRead  bool
		warning           bool
		wantSavedInScopes string
	}{
		{WorkflowRun{Event: "pull_request_target", PullRequests: []int{7}}, false, true, false, ""},
		{WorkflowRun{Event: "issue_comment"}, false, true, false, ""},
		{WorkflowRun{Event: "check_run"}, false, true, false, ""},
		{WorkflowRun{Event: "workflow_run"}, false, true, false, ""},
		{WorkflowRun{Event: "pull_request_target", PullRequests: []int{7}, CacheMode: "write"}, true, true, true, "refs/heads/main"},
		{WorkflowRun{Event: "push"}, true, true, false, "refs/heads/main"},
		{WorkflowRun{Event: "workflow_dispatch"}, true, true, false, "refs/heads/main"},
		{WorkflowRun{Event: "pull_request", PullRequests: []int{7}}, true, true, false, "refs/pull/7/merge"},
		{WorkflowRun{Event: "pull_request", PullRequests: []int{7}, CacheMode: "read"}, false, true, false, ""},
		{WorkflowRun{Event: "push", CacheMode: "write-only"}, true, false, false, "refs/heads/main"},
		{WorkflowRun{Event: "push", CacheMode: "none"}, false, false, false, ""},
	}
	for i, tt := range tests {
		name := fmt.Sprintf("%s/%s", tt.run.Event, tt.run.CacheMode)
		c, job := runtimeClient(s, url, tt.run)
		key := fmt.Sprintf("mode-%d", i)
		saved, err := c.SaveCache(context.Background(), key, testVersion, dirWith(t, map[string]string{"f": "x"}))
		if saved != tt.canSave || (!tt.canSave && !errors.Is(err, ErrCacheDenied)) {
			t.Errorf("%s: save = %v, %v; want saved %v (denied otherwise)", name, saved, err, tt.canSave)
		}
		_, err = c.RestoreCache(context.Background(), key, nil, testVersion, t.TempDir())
		if denied := errors.Is(err, ErrCacheDenied); denied == tt.canRead {
			t.Errorf("%s: restore error %v; want denied %v", name, err, !tt.canRead)
		}
		if got := len(job.Warnings) > 0; got != tt.warning {
			t.Errorf("%s: warnings %q, want one: %v", name, job.Warnings, tt.warning)
		}
		for _, e := range s.Caches() {
			if e.Key == key && e.Scope != tt.wantSavedInScopes {
				t.Errorf("%s: saved in %s, want %q", name, e.Scope, tt.wantSavedInScopes)
			}
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("an unknown cache-mode did not panic")
			}
		}()
		s.StartRun(WorkflowRun{Event: "push", CacheMode: "readwrite"})
	}()
	// A key already in the scope is not replaced.
	c, _ := runtimeClient(s, url, WorkflowRun{Event: "push"})
	if saved, err := c.SaveCache(context.Background(), "mode-5", testVersion, dirWith(t, map[string]string{"f": "y"})); saved || err != nil {
		t.Errorf("saving an existing key again = %v, %v; want not saved, no error", saved, err)
	}
}

// readZip returns the files of a zip archive.
func readZip(t *testing.T, data []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = string(b)
	}
	return out
}

// TestArtifactsAcrossRefs: an artifact a fork's pull_request run uploads is
// listed and downloaded through the REST API by a run on the default
// branch (artifacts are not scoped by ref), and the run that made it says
// whose it is: its event, head repository and workflow path; GitHub's
// pull_requests list is empty for a fork. Names are unique within a run;
// overwrite replaces; an expired artifact is 410 Gone; the storage URL
// needs no token.
func TestArtifactsAcrossRefs(t *testing.T) {
	t.Parallel()
	s, url := newServer(t)
	now := time.Now()
	s.Now = func() time.Time { return now }
	fork := WorkflowRun{Name: "warden", Path: ".github/workflows/warden.yml", Event: "pull_request", HeadSHA: "abc", HeadBranch: "patch-1", HeadRepo: "mallory/r", PullRequests: []int{3}}
	c, job := runtimeClient(s, url, fork)
	dir := dirWith(t, map[string]string{"trusted/ab/abcd": "forged", "fork/cd/cdef": "own"})
	id, err := c.UploadArtifact(context.Background(), "warden-results-trusted-pr3", dir, 7, false)
	if err != nil || id == 0 {
		t.Fatalf("upload: %d, %v", id, err)
	}
	if _, err := c.UploadArtifact(context.Background(), "warden-results-trusted-pr3", dir, 7, false); err == nil || !strings.Contains(err.Error(), "already_exists") {
		t.Errorf("the same name twice in a run: %v, want 409 already_exists", err)
	}
	id2, err := c.UploadArtifact(context.Background(), "warden-results-trusted-pr3", dir, 7, true)
	if err != nil || id2 == id {
		t.Errorf("overwrite: %d, %v; want a new artifact", id2, err)
	}
	if empty, err := c.UploadArtifact(context.Background(), "nothing", filepath.Join(dir, "missing"), 7, false); empty != 0 || err != nil {
		t.Errorf("uploading no files = %d, %v; want nothing uploaded", empty, err)
	}

	// A run on the default branch, with a read token, finds it.
	_, _, raw := do(t, "GET", url+"/repos/o/r/actions/artifacts?name=warden-results-trusted-pr3", DefaultReadOnlyToken, nil)
	var list struct {
		TotalCount int `json:"total_count"`
		Artifacts  []struct {
			ID          int64
			Name        string
			Expired     bool
			WorkflowRun struct {
				ID               int64 `json:"id"`
				HeadRepositoryID int64 `json:"head_repository_id"`
				RepositoryID     int64 `json:"repository_id"`
			} `json:"workflow_run"`
		}
	}
	json.Unmarshal(raw, &list)
	if list.TotalCount != 1 || list.Artifacts[0].ID != id2 || list.Artifacts[0].WorkflowRun.ID != job.Run.ID ||
		list.Artifacts[0].WorkflowRun.HeadRepositoryID == list.Artifacts[0].WorkflowRun.RepositoryID {
		t.Fatalf("list artifacts = %s", raw)
	}
	_, _, raw = do(t, "GET", fmt.Sprintf("%s/repos/o/r/actions/runs/%d", url, job.Run.ID), DefaultReadOnlyToken, nil)
	var run struct {
		Event          string
		Path           string
		HeadRepository struct {
			FullName string `json:"full_name"`
			Fork     bool
		} `json:"head_repository"`
		PullRequests []any `json:"pull_requests"`
	}
	json.Unmarshal(raw, &run)
	want := struct {
		Event, Path, Head string
		Fork              bool
		PRs               int
	}{"pull_request", ".github/workflows/warden.yml", "mallory/r", true, 0}
	got := want
	got.Event, got.Path, got.Head, got.Fork, got.PRs = run.Event, run.Path, run.HeadRepository.FullName, run.HeadRepository.Fork, len(run.PullRequests)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the run's origin (-want +got):\n%s", diff)
	}

	// Download: a redirect to storage, fetched without the token.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/repos/o/r/actions/artifacts/%d/zip", url, id2), nil)
	req.Header.Set("Authorization", "Bearer "+DefaultReadOnlyToken)
	resp, err := noFollow.Do(req)
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("download = %v, %v; want 302", resp, err)
	}
	resp.Body.Close()
	blobResp, err := http.Get(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(blobResp.Body)
	blobResp.Body.Close()
	if diff := cmp.Diff(map[string]string{"trusted/ab/abcd": "forged", "fork/cd/cdef": "own"}, readZip(t, data)); diff != "" {
		t.Errorf("downloaded files (-want +got):\n%s", diff)
	}
	if a, _, _ := do(t, "GET", fmt.Sprintf("%s/repos/o/r/actions/artifacts/%d/tar", url, id2), DefaultToken, nil); a.Status != 404 {
		t.Errorf("archive_format tar = %d, want 404", a.Status)
	}
	if a, _, _ := do(t, "GET", fmt.Sprintf("%s/repos/o/r/actions/runs/%d/artifacts", url, job.Run.ID), DefaultToken, nil); a.Status != 200 {
		t.Errorf("list run artifacts = %+v", a)
	}
	// Expired after its retention.
	now = now.Add(8 * 24 * time.Hour)
	if a, _, _ := do(t, "GET", fmt.Sprintf("%s/repos/o/r/actions/artifacts/%d/zip", url, id2), DefaultToken, nil); a.Status != http.StatusGone {
		t.Errorf("expired artifact download = %+v, want 410", a)
	}
}

// TestBlobStorageRefusesTokens: the storage URL is signed per method;
// sending the GitHub token along is recorded as a violation.
func TestBlobStorageRefusesTokens(t *testing.T) {
	t.Parallel()
	s, url := newLenientServer(t)
	c, _ := runtimeClient(s, url, WorkflowRun{Event: "push"})
	if ok, err := c.SaveCache(context.Background(), "k", testVersion, dirWith(t, map[string]string{"f": "x"})); !ok || err != nil {
		t.Fatal(ok, err)
	}
	var got struct {
		SignedDownloadURL string `json:"signed_download_url"`
	}
	if err := c.call(context.Background(), cacheService, "GetCacheEntryDownloadURL", map[string]any{"key": "k", "version": CacheVersion("elsewhere")}, &got); err != nil {
		t.Fatal(err)
	}
	// a version other than the saved one is a miss
	if got.SignedDownloadURL != "" {
		t.Errorf("a restore with another cache version found %q", got.SignedDownloadURL)
	}
	dir := t.TempDir()
	c2, _ := runtimeClient(s, url, WorkflowRun{Event: "push"})
	c2.SaveCache(context.Background(), "k2", testVersion, dirWith(t, map[string]string{"f": "x"}))
	c2.call(context.Background(), cacheService, "GetCacheEntryDownloadURL", map[string]any{"key": "k", "version": CacheVersion("elsewhere")}, &got)
	req, _ := http.NewRequest("PUT", strings.Replace(url+"/_actions/blob/x?sp=PUT", "x", "nope", 1), nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("unsigned PUT = %v, %v; want 403", resp, err)
	}
	req, _ = http.NewRequest("GET", url+"/_actions/blob/nope", nil)
	req.Header.Set("Authorization", "Bearer "+DefaultToken)
	http.DefaultClient.Do(req)
	checkViolations(t, s, "Authorization header")
	if _, err := (&RuntimeClient{ResultsURL: ResultsURL(url), Token: "bogus"}).RestoreCache(context.Background(), "k", nil, testVersion, dir); err == nil || !strings.Contains(err.Error(), "unauthenticated") {
		t.Errorf("a bogus runtime token: %v, want 401 unauthenticated", err)
	}
}

// TestRequestActionTriggers: a button press starts workflows only on a
// check run that GitHub Actions' own token did not create.
func TestRequestActionTriggers(t *testing.T) {
	t.Parallel()
	s, url := newServer(t)
	body := map[string]any{"name": "warden", "head_sha": "head", "status": "completed", "conclusion": "neutral",
		"actions": []map[string]any{{"label": "Resume review", "description": "Review only what was not finished", "identifier": "warden-resume"}},
		"output":  map[string]any{"title": "Partial", "summary": "s"}}
	for _, tt := range []struct {
		token, app string
		triggers   bool
	}{{DefaultToken, AppActions, false}, {AppToken, AppSlug, true}} {
		a, _, raw := do(t, "POST", url+"/repos/o/r/check-runs", tt.token, body)
		var cr struct{ ID int64 }
		json.Unmarshal(raw, &cr)
		if a.Status != 201 {
			t.Fatalf("create: %+v %s", a, raw)
		}
		c, _ := s.CheckRun(cr.ID)
		payload, triggers, ok := s.RequestAction(cr.ID, "warden-resume", "alice")
		if !ok || triggers != tt.triggers || c.App != tt.app || !bytes.Contains(payload, []byte(`"identifier":"warden-resume"`)) {
			t.Errorf("token of %s: app %q, ok %v, starts workflows %v; want %v", tt.app, c.App, ok, triggers, tt.triggers)
		}
		if _, _, ok := s.RequestAction(cr.ID, "other", "alice"); ok {
			t.Errorf("an identifier the check run has no button for was pressed")
		}
	}
	lenient, lurl := newLenientServer(t)
	body["actions"] = []map[string]any{{"label": "A label of more than twenty", "description": "d", "identifier": "i"}}
	if a, _, _ := do(t, "POST", lurl+"/repos/o/r/check-runs", DefaultToken, body); a.Status != 422 {
		t.Errorf("a label over 20 characters: %+v, want 422", a)
	}
	checkViolations(t, lenient, "maximum string length is 20")
}
