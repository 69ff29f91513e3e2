package fakegithub

import (
	"cmp"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file is the fake's GitHub Actions: the workflow runs it knows (with
// the event, head repository and workflow path that say whose code and
// whose workflow file a run executed), their jobs' runtime tokens, and the
// REST routes that show runs and their artifacts to anyone with
// "actions: read". The runtime services a job talks to with its token
// (the Actions cache and the artifact upload) are in actions_runtime.go.

// The Actions REST routes the fake serves.
const (
	RouteListArtifacts    = "GET /repos/{owner}/{repo}/actions/artifacts"
	RouteListRunArtifacts = "GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts"
	RouteGetWorkflowRun   = "GET /repos/{owner}/{repo}/actions/runs/{run_id}"
	RouteDownloadArtifact = "GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}"
)

// WorkflowRun is one run of a workflow, as GitHub records it.
type WorkflowRun struct {
	// ID is assigned by StartRun when 0.
	ID int64
	// Name is the workflow's name; Path its file (".github/workflows/warden.yml"):
	// for pull_request and its kin the file as the pull request's merge
	// commit has it, for every other event the default branch's.
	Name, Path string
	// Event is the event that triggered the run (GITHUB_EVENT_NAME).
	Event string
	// HeadSHA and HeadBranch are the run's head commit and branch.
	HeadSHA, HeadBranch string
	// HeadRepo is the full name of the repository the head commit is in;
	// "" means this repository. A fork's pull request runs have the fork.
	HeadRepo string
	// PullRequests are the run's pull requests. GitHub leaves the list
	// empty for a fork's pull request (see the run's pull_requests in the
	// REST docs: "Pull requests that are open with a head_sha or
	// head_branch that matches the workflow run").
	PullRequests []int
	// Ref is GITHUB_REF; "" means what the event gives (RunRef).
	Ref string
	// BaseRef is the pull request's base branch for the pull request
	// events ("main"); "" means the default branch.
	BaseRef string
	// Attempt is run_attempt; 0 means 1.
	Attempt int
	// Actor is the login that triggered the run; "" means "octocat".
	Actor string
	// CacheMode is the job's declared cache-mode ("read", "write",
	// "write-only" or "none"); "" means the event's default (see
	// cacheAccess).
	CacheMode string
	// Concurrency is the workflow's concurrency: block, its group
	// evaluated for this run's event; the zero value is none
	// (actions_concurrency.go).
	Concurrency Concurrency
	// Status and Conclusion: "in_progress" and "" until CompleteRun;
	// "pending" while its concurrency group holds it, "completed" and
	// "cancelled" when the group cancelled it.
	Status, Conclusion string
}

// pullRequestEvents run the workflow file of the pull request's merge
// commit, on the merge ref: "GITHUB_SHA: Last merge commit on the
// GITHUB_REF branch; GITHUB_REF: PR merge branch refs/pull/PULL_REQUEST_NUMBER/merge"
// (docs.github.com, "Events that trigger workflows": pull_request,
// pull_request_review, pull_request_review_comment). For a fork's pull
// request that file is the fork's. Every other event runs the default
// branch's workflow file on the default branch ("GITHUB_SHA: Last commit
// on default branch; GITHUB_REF: Default branch": issue_comment,
// pull_request_target, check_run, workflow_run, ...).
var pullRequestEvents = map[string]bool{"pull_request": true, "pull_request_review": true, "pull_request_review_comment": true}

// defaultBranch is the repository's default branch.
func (s *Server) defaultBranch() string { return cmp.Or(s.DefaultBranch, "main") }

// RunRef is GITHUB_REF of r: its Ref when set, else the merge ref of its
// pull request for the pull request events, else the default branch.
func (s *Server) RunRef(r WorkflowRun) string {
	switch {
	case r.Ref != "":
		return r.Ref
	case pullRequestEvents[r.Event] && len(r.PullRequests) > 0:
		return fmt.Sprintf("refs/pull/%d/merge", r.PullRequests[0])
	}
	return "refs/heads/" + s.defaultBranch()
}

// Job is a run's one job as the runner sees it: the run and the runtime
// token with which its steps reach the Actions services
// (ACTIONS_RUNTIME_TOKEN; the cache and artifact services check it).
type Job struct {
	Run WorkflowRun
	// RuntimeToken is ACTIONS_RUNTIME_TOKEN.
	RuntimeToken string
	// Warnings are the annotations GitHub shows on the job, e.g. for a
	// cache-mode that gives a low-trust event write access.
	Warnings []string
	// access is what the cache service lets the job do (cacheAccess).
	access cacheAccess
	// runBackend and jobBackend are the ids the token's scp claim
	// carries ("Actions.Results:<run>:<job>"), which the artifact
	// service's requests must name.
	runBackend, jobBackend string
	// cancelled is closed when GitHub cancels the run (Cancelled).
	cancelled chan struct{}
}

// actionsState is what the fake keeps of GitHub Actions.
type actionsState struct {
	runs      []*WorkflowRun
	jobs      map[string]*Job // by runtime token
	artifacts []*artifact
	caches    []*cacheEntry
	blobs     map[string]*blob // by id
	runNumber int
	// started are the jobs of runs that started and that no runner took
	// yet (NextJob), in the order they started.
	started []*Job
}

// StartRun records the run r (assigning its ID) and returns its job with a
// fresh runtime token: QueueRun for a run that starts at once. A run its
// concurrency group holds pending panics (use QueueRun and NextJob); so
// does an unknown cache-mode.
func (s *Server) StartRun(r WorkflowRun) *Job {
	run := s.QueueRun(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, j := range s.actions.started {
		if j.Run.ID == run.ID {
			s.actions.started = slices.Delete(s.actions.started, i, i+1)
			return j
		}
	}
	panic(fmt.Sprintf("fakegithub: StartRun: run %d is %s in concurrency group %q; use QueueRun and NextJob", run.ID, run.Status, run.Concurrency.Group))
}

// startJob starts the recorded run r: its job, with a fresh runtime
// token, waits for a runner (NextJob). Call with s.mu held.
func (s *Server) startJob(r *WorkflowRun) {
	access, warning := s.cacheAccessOf(*r)
	job := &Job{Run: *r, access: access, runBackend: "run-" + randomHex(8), jobBackend: "job-" + randomHex(8), cancelled: make(chan struct{})}
	job.RuntimeToken = runtimeToken(job.runBackend, job.jobBackend)
	if warning != "" {
		job.Warnings = append(job.Warnings, warning)
	}
	if s.actions.jobs == nil {
		s.actions.jobs = map[string]*Job{}
	}
	s.actions.jobs[job.RuntimeToken] = job
	s.actions.started = append(s.actions.started, job)
}

// CompleteRun marks run id completed with conclusion, unless GitHub
// already cancelled it; the next pending run of its concurrency group
// starts.
func (s *Server) CompleteRun(id int64, conclusion string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.actions.runs {
		if r.ID == id && r.Conclusion != "cancelled" {
			r.Status, r.Conclusion = "completed", conclusion
		}
	}
	s.startPending()
}

// Runs returns every run, in the order they started.
func (s *Server) Runs() []WorkflowRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]WorkflowRun, len(s.actions.runs))
	for i, r := range s.actions.runs {
		out[i] = *r
	}
	return out
}

func (s *Server) run(id int64) (WorkflowRun, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.actions.runs {
		if r.ID == id {
			return *r, true
		}
	}
	return WorkflowRun{}, false
}

// runtimeToken is a runtime token in the shape the runner's toolkit reads:
// a JWT whose scp claim names the run's and job's backend ids
// ("Actions.Results:<run>:<job>"), which the artifact service's requests
// carry. The signature is random: only the fake checks tokens, by value.
func runtimeToken(run, job string) string {
	enc := base64.RawURLEncoding.EncodeToString
	header := enc([]byte(`{"alg":"RS256","typ":"JWT"}`))
	payload := enc([]byte(`{"scp":"Actions.ExampleScope Actions.Results:` + run + `:` + job + `"}`))
	return header + "." + payload + "." + randomHex(16)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// getWorkflowRun is "Get a workflow run".
func (s *Server) getWorkflowRun(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("run_id"), 10, 64)
	run, ok := s.run(id)
	if !ok {
		s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run")
		return
	}
	if !s.specOK(w, r, RouteGetWorkflowRun) {
		return
	}
	writeJSON(w, http.StatusOK, s.runJSON(run))
}

// runJSON is GitHub's workflow-run for run.
func (s *Server) runJSON(run WorkflowRun) map[string]any {
	full := s.Owner + "/" + s.Repo
	head := cmp.Or(run.HeadRepo, full)
	u := fmt.Sprintf("%s/repos/%s/actions/runs/%d", apiRoot, full, run.ID)
	s.mu.Lock()
	created := timestamp(cmp.Or(s.times[run.ID].created, s.now()))
	s.mu.Unlock()
	prs := []any{}
	if head == full { // GitHub leaves it empty for a fork's pull request
		for _, n := range run.PullRequests {
			prs = append(prs, s.minimalPullJSON(n, run))
		}
	}
	workflowID := stableID("workflow:" + run.Path)
	var conclusion any
	if run.Conclusion != "" {
		conclusion = run.Conclusion
	}
	actor := userJSON(run.Actor, userType(run.Actor))
	return map[string]any{
		"id": run.ID, "name": nullable(run.Name), "node_id": nodeID("WFR", run.ID),
		"check_suite_id": stableID(fmt.Sprintf("suite:%d", run.ID)), "check_suite_node_id": nodeID("CS", stableID(fmt.Sprintf("suite:%d", run.ID))),
		"head_branch": nullable(run.HeadBranch), "head_sha": run.HeadSHA, "path": run.Path,
		"display_title": cmp.Or(run.Name, run.Event),
		"run_number":    run.ID % 1000, "run_attempt": run.Attempt, "event": run.Event,
		"status": run.Status, "conclusion": conclusion, "workflow_id": workflowID,
		"url": u, "html_url": fmt.Sprintf("%s/%s/actions/runs/%d", htmlRoot, full, run.ID),
		"pull_requests": prs, "created_at": created, "updated_at": created, "run_started_at": created,
		"actor": actor, "triggering_actor": actor,
		"jobs_url": u + "/jobs", "logs_url": u + "/logs", "check_suite_url": fmt.Sprintf("%s/repos/%s/check-suites/%d", apiRoot, full, stableID(fmt.Sprintf("suite:%d", run.ID))),
		"artifacts_url": u + "/artifacts", "cancel_url": u + "/cancel", "rerun_url": u + "/rerun",
		"workflow_url": fmt.Sprintf("%s/repos/%s/actions/workflows/%d", apiRoot, full, workflowID),
		"head_commit": map[string]any{
			"id": run.HeadSHA, "tree_id": fakeSHA("tree:" + run.HeadSHA), "message": "commit", "timestamp": created,
			"author":    map[string]any{"name": "Mona", "email": "mona@example.com"},
			"committer": map[string]any{"name": "Mona", "email": "mona@example.com"},
		},
		"repository":      repoJSON(full, false, s.now()),
		"head_repository": repoJSON(head, head != full, s.now()),
	}
}

// minimalPullJSON is GitHub's pull-request-minimal of pull request n for
// run.
func (s *Server) minimalPullJSON(n int, run WorkflowRun) map[string]any {
	full := s.Owner + "/" + s.Repo
	repo := map[string]any{"id": stableID("repo:" + full), "url": apiRoot + "/repos/" + full, "name": s.Repo}
	s.mu.Lock()
	pr := s.pulls[n]
	s.mu.Unlock()
	base, baseSHA := s.defaultBranch(), ""
	if pr != nil {
		base, baseSHA = cmp.Or(pr.BaseRef, base), pr.BaseSHA
	}
	return map[string]any{
		"id": stableID(fmt.Sprintf("pull:%s#%d", full, n)), "number": n, "url": pullURL(s.Owner, s.Repo, n),
		"head": map[string]any{"ref": run.HeadBranch, "sha": run.HeadSHA, "repo": repo},
		"base": map[string]any{"ref": base, "sha": baseSHA, "repo": repo},
	}
}

// artifact is one uploaded workflow artifact.
type artifact struct {
	id       int64
	name     string
	run      int64
	blob     string // blob id of its zip
	size     int64
	digest   string
	created  time.Time
	expires  time.Time
	finished bool
}

// Artifact is an artifact as tests see it.
type Artifact struct {
	ID      int64
	Name    string
	RunID   int64
	Size    int64
	Expires time.Time
}

// Artifacts returns the finished artifacts, newest first.
func (s *Server) Artifacts() []Artifact {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Artifact
	for i := len(s.actions.artifacts) - 1; i >= 0; i-- {
		a := s.actions.artifacts[i]
		if a.finished {
			out = append(out, Artifact{ID: a.id, Name: a.name, RunID: a.run, Size: a.size, Expires: a.expires})
		}
	}
	return out
}

// listArtifacts is "List artifacts for a repository": every run's
// artifacts across refs and workflows ("Lists all artifacts for a
// repository. Anyone with read access to the repository can use this
// endpoint"), newest first, filtered by name (an exact match).
func (s *Server) listArtifacts(w http.ResponseWriter, r *http.Request) {
	if !s.specOK(w, r, RouteListArtifacts) {
		return
	}
	name := r.URL.Query().Get("name")
	s.writeArtifacts(w, r, func(a *artifact) bool { return name == "" || a.name == name })
}

// listRunArtifacts is "List workflow run artifacts".
func (s *Server) listRunArtifacts(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("run_id"), 10, 64)
	if _, ok := s.run(id); !ok {
		s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest/actions/artifacts#list-workflow-run-artifacts")
		return
	}
	if !s.specOK(w, r, RouteListRunArtifacts) {
		return
	}
	name := r.URL.Query().Get("name")
	s.writeArtifacts(w, r, func(a *artifact) bool { return a.run == id && (name == "" || a.name == name) })
}

// writeArtifacts answers {"total_count", "artifacts"} with the finished
// artifacts keep selects, newest first, a page at a time (per_page at most
// 100, default 30).
func (s *Server) writeArtifacts(w http.ResponseWriter, r *http.Request, keep func(*artifact) bool) {
	s.mu.Lock()
	var all []artifact
	for i := len(s.actions.artifacts) - 1; i >= 0; i-- {
		if a := s.actions.artifacts[i]; a.finished && keep(a) {
			all = append(all, *a)
		}
	}
	s.mu.Unlock()
	per := 30
	if v, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && v > 0 {
		per = min(v, 100)
	}
	page := 1
	if v, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && v > 0 {
		page = v
	}
	lo := min(len(all), (page-1)*per)
	hi := min(len(all), lo+per)
	out := []map[string]any{}
	for _, a := range all[lo:hi] {
		out = append(out, s.artifactJSON(a))
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(all), "artifacts": out})
}

// artifactJSON is GitHub's artifact for a, with the run that made it
// (id, repository, head repository, head branch and SHA).
func (s *Server) artifactJSON(a artifact) map[string]any {
	full := s.Owner + "/" + s.Repo
	u := fmt.Sprintf("%s/repos/%s/actions/artifacts/%d", apiRoot, full, a.id)
	m := map[string]any{
		"id": a.id, "node_id": nodeID("MDg", a.id), "name": a.name, "size_in_bytes": a.size,
		"url": u, "archive_download_url": u + "/zip", "expired": !s.now().Before(a.expires),
		"created_at": timestamp(a.created), "updated_at": timestamp(a.created), "expires_at": timestamp(a.expires),
		"workflow_run": nil,
	}
	if a.digest != "" {
		m["digest"] = a.digest
	}
	if run, ok := s.run(a.run); ok {
		m["workflow_run"] = map[string]any{
			"id": run.ID, "repository_id": stableID("repo:" + full), "head_repository_id": stableID("repo:" + cmp.Or(run.HeadRepo, full)),
			"head_branch": run.HeadBranch, "head_sha": run.HeadSHA,
		}
	}
	return m
}

// downloadArtifact is "Download an artifact": a 302 to a short-lived URL
// of the zip in blob storage ("Look for Location: in the response header
// to find the URL for the download ... The URL expires after 1 minute"),
// or 410 Gone once the artifact expired. archive_format must be zip.
func (s *Server) downloadArtifact(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("artifact_id"), 10, 64)
	s.mu.Lock()
	i := slices.IndexFunc(s.actions.artifacts, func(a *artifact) bool { return a.id == id && a.finished })
	var a artifact
	if i >= 0 {
		a = *s.actions.artifacts[i]
	}
	s.mu.Unlock()
	if i < 0 || r.PathValue("archive_format") != "zip" {
		s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest/actions/artifacts#download-an-artifact")
		return
	}
	if !s.now().Before(a.expires) {
		s.errorJSON(w, r, http.StatusGone, "Artifact has expired", nil, "https://docs.github.com/rest/actions/artifacts#download-an-artifact")
		return
	}
	if !s.specOK(w, r, RouteDownloadArtifact) {
		return
	}
	w.Header().Set("Location", s.blobURL(r, a.blob, http.MethodGet, time.Minute))
	w.WriteHeader(http.StatusFound)
}

// serverRoot is the scheme and host the request reached the fake on.
func serverRoot(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + cmp.Or(r.Host, "fake.invalid")
}

// trimRefs returns ref without "refs/heads/".
func trimRefs(ref string) string { return strings.TrimPrefix(ref, "refs/heads/") }
