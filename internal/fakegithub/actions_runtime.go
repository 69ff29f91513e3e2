package fakegithub

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The runtime services of GitHub Actions that a job reaches with its
// ACTIONS_RUNTIME_TOKEN at ACTIONS_RESULTS_URL: the cache service
// (actions/cache) and the artifact service (actions/upload-artifact),
// both Twirp (JSON over POST), and the blob storage their signed URLs
// point at. They are not part of the REST API description, so their
// requests are recorded but not checked against it.

// ResultsPath is where the runtime services are served: the job's
// ACTIONS_RESULTS_URL is the server's root URL followed by it.
const ResultsPath = "/_actions/results/"

// The Twirp services, as the runner's toolkit names them.
const (
	cacheService    = "github.actions.results.api.v1.CacheService"
	artifactService = "github.actions.results.api.v1.ArtifactService"
	blobPath        = "/_actions/blob/"
)

// ResultsURL is ACTIONS_RESULTS_URL for a server whose root URL is root
// (an httptest server's URL).
func ResultsURL(root string) string { return strings.TrimSuffix(root, "/") + ResultsPath }

// trustedDefaultBranchEvents keep read-write access to the default
// branch's cache: "The most common workflow triggers that write to the
// default-branch cache keep full read-write caching. These triggers are
// push, schedule, workflow_dispatch, repository_dispatch, delete,
// registry_package, and page_build." Every other event on the default
// branch's scope is untrusted: "GitHub now issues a read-only cache token
// when both of these are true: The triggering event is untrusted, meaning
// someone other than a repository collaborator can trigger the event. The
// workflow execution context and cache scope come from the shared
// default-branch SHA." (github.blog changelog 2026-06-26, "Read-only
// Actions cache for untrusted triggers"; examples it names:
// pull_request_target, issue_comment, fork-pull-request workflow_run
// cascades.)
var trustedDefaultBranchEvents = map[string]bool{
	"push": true, "schedule": true, "workflow_dispatch": true, "repository_dispatch": true,
	"delete": true, "registry_package": true, "page_build": true,
}

// CacheModes are the values of a job's cache-mode, enforced by the cache
// service since 2026-09-10: read (restore only), write (restore and save),
// write-only (save only), none. read is the default for low-trust events
// such as pull_request_target, and declaring write there draws a warning
// annotation (github.blog changelog 2026-09-10, as REFERENCE.md's
// corrections record it; the 2026-06-26 changelog above is the rule it
// made configurable per job).
var CacheModes = []string{"read", "write", "write-only", "none"}

// cacheAccess is what the cache service lets a job do.
type cacheAccess struct {
	read, write bool
	// own is the scope saves go to: the run's GITHUB_REF.
	own string
	// scopes are the scopes a restore searches, in order. "Workflow runs
	// can restore caches created in either the current branch or the
	// default branch (usually main). If a workflow run is triggered for a
	// pull request, it can also restore caches created in the base
	// branch" and "When a cache is created by a workflow run triggered on
	// a pull request, the cache is created for the merge ref
	// (refs/pull/.../merge). Because of this, the cache will have a
	// limited scope and can only be restored by re-runs of the pull
	// request." (docs.github.com, "Dependency caching reference",
	// Restrictions for accessing a cache). The search order: "If there
	// are still no hits in the current branch, the cache action retries
	// the same steps on the default branch" (Cache key matching).
	scopes []string
	// lowTrust: an untrusted event on the default branch's scope.
	lowTrust bool
	mode     string
}

// cacheAccessOf is the cache access of a job of run r, and the warning
// GitHub shows for a write mode on a low-trust event. An unknown
// cache-mode panics.
func (s *Server) cacheAccessOf(r WorkflowRun) (cacheAccess, string) {
	if r.CacheMode != "" && !slices.Contains(CacheModes, r.CacheMode) {
		panic(fmt.Sprintf("fakegithub: cache-mode %q is not one of %q", r.CacheMode, CacheModes))
	}
	def := "refs/heads/" + s.defaultBranch()
	a := cacheAccess{own: s.RunRef(r)}
	a.scopes = []string{a.own}
	if pullRequestEvents[r.Event] || r.Event == "pull_request_target" {
		if base := "refs/heads/" + cmp.Or(r.BaseRef, s.defaultBranch()); !slices.Contains(a.scopes, base) {
			a.scopes = append(a.scopes, base)
		}
	}
	if !slices.Contains(a.scopes, def) {
		a.scopes = append(a.scopes, def)
	}
	a.lowTrust = a.own == def && !trustedDefaultBranchEvents[r.Event]
	a.mode = r.CacheMode
	if a.mode == "" {
		a.mode = "write"
		if a.lowTrust {
			a.mode = "read"
		}
	}
	a.read = a.mode == "read" || a.mode == "write"
	a.write = a.mode == "write" || a.mode == "write-only"
	warning := ""
	if a.lowTrust && a.write && r.CacheMode != "" {
		warning = fmt.Sprintf("cache-mode %s on %s: this job can write caches of the default branch, which trusted runs restore, from an event someone without write access can trigger", r.CacheMode, r.Event)
	}
	return a, warning
}

// cacheEntry is one cache in a scope.
type cacheEntry struct {
	scope, key, version string
	blob                string
	size                int64
	created             time.Time
	finished            bool
}

// CacheEntry is a cache as tests see it.
type CacheEntry struct {
	Scope, Key, Version string
	Size                int64
}

// Caches returns the finished caches, oldest first.
func (s *Server) Caches() []CacheEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CacheEntry
	for _, c := range s.actions.caches {
		if c.finished {
			out = append(out, CacheEntry{Scope: c.scope, Key: c.key, Version: c.version, Size: c.size})
		}
	}
	return out
}

// blob is an object in the fake's blob storage.
type blob struct {
	data      []byte
	committed bool
}

// twirpError is a Twirp error answer: {"code", "msg"} with the code's
// HTTP status.
func twirpError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"code": code, "msg": msg})
}

// serveRuntime serves the Twirp runtime services under ResultsPath and the
// blob storage under blobPath.
func (s *Server) serveRuntime(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, blobPath) {
		s.serveBlob(w, r)
		return
	}
	rest := strings.TrimPrefix(r.URL.Path, ResultsPath+"twirp/")
	service, method, ok := strings.Cut(rest, "/")
	if !ok || r.Method != http.MethodPost {
		twirpError(w, http.StatusNotFound, "bad_route", "no such Twirp method: "+r.URL.Path)
		return
	}
	tok, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	job := s.actions.jobs[tok]
	s.mu.Unlock()
	if !found || job == nil {
		twirpError(w, http.StatusUnauthorized, "unauthenticated", "invalid runtime token")
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	switch service + "/" + method {
	case cacheService + "/CreateCacheEntry":
		s.createCacheEntry(w, r, job, body)
	case cacheService + "/FinalizeCacheEntryUpload":
		s.finalizeCacheEntry(w, r, job, body)
	case cacheService + "/GetCacheEntryDownloadURL":
		s.cacheDownloadURL(w, r, job, body)
	case artifactService + "/CreateArtifact":
		s.createArtifact(w, r, job, body)
	case artifactService + "/FinalizeArtifact":
		s.finalizeArtifact(w, r, job, body)
	case artifactService + "/DeleteArtifact":
		s.deleteArtifact(w, r, job, body)
	default:
		twirpError(w, http.StatusNotFound, "bad_route", "no such Twirp method: "+service+"/"+method)
	}
}

// maxCacheKey: "Keys have a maximum length of 512 characters, and keys
// longer than the maximum length will cause the action to fail"
// (Dependency caching reference); actions/cache also refuses a comma.
const maxCacheKey = 512

func validCacheKey(k string) bool {
	return k != "" && len(k) <= maxCacheKey && !strings.Contains(k, ",")
}

type cacheRequest struct {
	Key         string   `json:"key"`
	RestoreKeys []string `json:"restore_keys"`
	Version     string   `json:"version"`
	SizeBytes   string   `json:"size_bytes"`
}

func decodeTwirp(w http.ResponseWriter, body []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		twirpError(w, http.StatusBadRequest, "malformed", "the body is not the method's request: "+err.Error())
		return false
	}
	return true
}

// createCacheEntry reserves a cache in the job's own scope and returns a
// signed upload URL. "You cannot change the contents of an existing
// cache. Instead, you can create a new cache with a new key" (Dependency
// caching reference): an existing key and version in the scope is not
// reserved again.
func (s *Server) createCacheEntry(w http.ResponseWriter, r *http.Request, job *Job, body []byte) {
	var req cacheRequest
	if !decodeTwirp(w, body, &req) {
		return
	}
	if !validCacheKey(req.Key) || req.Version == "" {
		twirpError(w, http.StatusBadRequest, "invalid_argument", fmt.Sprintf("cache key %q: at most %d characters, no comma, and a version", req.Key, maxCacheKey))
		return
	}
	if !job.access.write {
		twirpError(w, http.StatusForbidden, "permission_denied", fmt.Sprintf("cache write denied: this job's cache access is %s (%s on %s)", job.access.mode, job.Run.Event, job.access.own))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.actions.caches {
		if c.scope == job.access.own && c.key == req.Key && c.version == req.Version {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "message": "cache entry with the same key, version, and scope already exists"})
			return
		}
	}
	id := s.newBlob()
	s.actions.caches = append(s.actions.caches, &cacheEntry{scope: job.access.own, key: req.Key, version: req.Version, blob: id, created: s.now()})
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "signed_upload_url": s.blobURL(r, id, http.MethodPut, time.Hour)})
}

func (s *Server) finalizeCacheEntry(w http.ResponseWriter, r *http.Request, job *Job, body []byte) {
	var req cacheRequest
	if !decodeTwirp(w, body, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.actions.caches {
		if c.scope != job.access.own || c.key != req.Key || c.version != req.Version || c.finished {
			continue
		}
		b := s.actions.blobs[c.blob]
		if b == nil || !b.committed || strconv.Itoa(len(b.data)) != req.SizeBytes {
			twirpError(w, http.StatusBadRequest, "invalid_argument", "the upload is missing or its size differs from size_bytes")
			return
		}
		c.size, c.finished, c.created = int64(len(b.data)), true, s.now()
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "entry_id": strconv.FormatInt(stableID(c.scope+"\x00"+c.key), 10)})
		return
	}
	twirpError(w, http.StatusNotFound, "not_found", "no reserved cache entry with that key and version in this job's scope")
}

// cacheDownloadURL finds the cache a restore gets: in each scope the job
// may read, in order, the key exactly, then the newest cache whose key
// starts with it, then each restore key the same way ("The cache action
// first searches for cache hits for key and the cache version in the
// branch containing the workflow run. If there is no hit, it searches for
// prefix-matches for key, and if there is still no hit, it searches for
// restore-keys and the version. If there are still no hits in the current
// branch, the cache action retries the same steps on the default branch";
// "If there are multiple partial matches for a restore key, the action
// returns the most recently created cache").
func (s *Server) cacheDownloadURL(w http.ResponseWriter, r *http.Request, job *Job, body []byte) {
	var req cacheRequest
	if !decodeTwirp(w, body, &req) {
		return
	}
	if !job.access.read {
		twirpError(w, http.StatusForbidden, "permission_denied", fmt.Sprintf("cache read denied: this job's cache-mode is %s", job.access.mode))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := append([]string{req.Key}, req.RestoreKeys...)
	for _, scope := range job.access.scopes {
		for _, k := range keys {
			if c := s.findCache(scope, k, req.Version); c != nil {
				writeJSON(w, http.StatusOK, map[string]any{"ok": true, "signed_download_url": s.blobURL(r, c.blob, http.MethodGet, 10*time.Minute), "matched_key": c.key})
				return
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": false})
}

// findCache is the cache in scope whose key is k, else the newest whose
// key starts with k, with version. Call with s.mu held.
func (s *Server) findCache(scope, k, version string) *cacheEntry {
	var prefix *cacheEntry
	for _, c := range s.actions.caches {
		if !c.finished || c.scope != scope || c.version != version {
			continue
		}
		if c.key == k {
			return c
		}
		if strings.HasPrefix(c.key, k) && (prefix == nil || !c.created.Before(prefix.created)) {
			prefix = c
		}
	}
	return prefix
}

// artifactRequest is the ArtifactService's request shape.
type artifactRequest struct {
	RunBackendID string `json:"workflow_run_backend_id"`
	JobBackendID string `json:"workflow_job_run_backend_id"`
	Name         string `json:"name"`
	Version      int    `json:"version"`
	ExpiresAt    string `json:"expires_at"`
	Size         string `json:"size"`
	Hash         string `json:"hash"`
}

// invalidArtifactName are the characters upload-artifact refuses in a
// name.
const invalidArtifactName = "\"<>|*?\r\n\\/:"

func (s *Server) artifactOf(w http.ResponseWriter, job *Job, req artifactRequest) bool {
	switch {
	case req.RunBackendID != job.runBackend || req.JobBackendID != job.jobBackend:
		twirpError(w, http.StatusForbidden, "permission_denied", "the backend ids are not this job's")
		return false
	case req.Name == "" || strings.ContainsAny(req.Name, invalidArtifactName):
		twirpError(w, http.StatusBadRequest, "invalid_argument", fmt.Sprintf("artifact name %q is empty or contains one of %q", req.Name, invalidArtifactName))
		return false
	}
	return true
}

// createArtifact starts an upload. Names are unique within a run: "you
// cannot upload an artifact with the same name" twice in one run (409).
func (s *Server) createArtifact(w http.ResponseWriter, r *http.Request, job *Job, body []byte) {
	var req artifactRequest
	if !decodeTwirp(w, body, &req) || !s.artifactOf(w, job, req) {
		return
	}
	expires := s.now().Add(90 * 24 * time.Hour) // the default retention
	if req.ExpiresAt != "" {
		t, err := time.Parse(time.RFC3339, req.ExpiresAt)
		if err != nil || t.Before(s.now()) || t.After(s.now().Add(90*24*time.Hour+time.Minute)) {
			twirpError(w, http.StatusBadRequest, "invalid_argument", "expires_at must be within the 90 days of retention")
			return
		}
		expires = t
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.actions.artifacts {
		if a.run == job.Run.ID && a.name == req.Name {
			twirpError(w, http.StatusConflict, "already_exists", "an artifact with this name already exists on the workflow run")
			return
		}
	}
	id := s.newBlob()
	s.actions.artifacts = append(s.actions.artifacts, &artifact{id: 200000 + s.id(), name: req.Name, run: job.Run.ID, blob: id, created: s.now(), expires: expires})
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "signed_upload_url": s.blobURL(r, id, http.MethodPut, time.Hour)})
}

func (s *Server) finalizeArtifact(w http.ResponseWriter, r *http.Request, job *Job, body []byte) {
	var req struct {
		artifactRequest
		Hash *struct {
			Value string `json:"value"`
		} `json:"hash"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		twirpError(w, http.StatusBadRequest, "malformed", err.Error())
		return
	}
	if !s.artifactOf(w, job, req.artifactRequest) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.actions.artifacts {
		if a.run != job.Run.ID || a.name != req.Name || a.finished {
			continue
		}
		b := s.actions.blobs[a.blob]
		if b == nil || !b.committed || strconv.Itoa(len(b.data)) != req.Size {
			twirpError(w, http.StatusBadRequest, "invalid_argument", "the upload is missing or its size differs")
			return
		}
		a.size, a.finished = int64(len(b.data)), true
		sum := sha256.Sum256(b.data)
		a.digest = "sha256:" + hex.EncodeToString(sum[:])
		if req.Hash != nil && req.Hash.Value != "" && req.Hash.Value != a.digest {
			twirpError(w, http.StatusBadRequest, "invalid_argument", "hash does not match the upload")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "artifact_id": strconv.FormatInt(a.id, 10)})
		return
	}
	twirpError(w, http.StatusNotFound, "not_found", "no artifact upload of that name in this run")
}

// deleteArtifact removes the run's artifact of that name (what
// upload-artifact's overwrite does before uploading again).
func (s *Server) deleteArtifact(w http.ResponseWriter, r *http.Request, job *Job, body []byte) {
	var req artifactRequest
	if !decodeTwirp(w, body, &req) || !s.artifactOf(w, job, req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.actions.artifacts, func(a *artifact) bool { return a.run == job.Run.ID && a.name == req.Name })
	if i < 0 {
		twirpError(w, http.StatusNotFound, "not_found", "no artifact of that name in this run")
		return
	}
	id := s.actions.artifacts[i].id
	s.actions.artifacts = slices.Delete(s.actions.artifacts, i, i+1)
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "artifact_id": strconv.FormatInt(id, 10)})
}

// newBlob creates an empty blob and returns its id. Call with s.mu held.
func (s *Server) newBlob() string {
	if s.actions.blobs == nil {
		s.actions.blobs = map[string]*blob{}
	}
	id := randomHex(12)
	s.actions.blobs[id] = &blob{}
	return id
}

// blobKey signs blob URLs; one per server.
func (s *Server) blobKey() []byte {
	s.blobKeyOnce.Do(func() { s.blobSecret = []byte(randomHex(16)) })
	return s.blobSecret
}

// blobURL is a signed URL for method on blob id, valid for ttl, on the
// host the request r reached (like a storage SAS URL: no token needed).
func (s *Server) blobURL(r *http.Request, id, method string, ttl time.Duration) string {
	exp := strconv.FormatInt(s.now().Add(ttl).Unix(), 10)
	q := url.Values{"sig": {s.blobSig(id, method, exp)}, "se": {exp}, "sp": {method}}
	return serverRoot(r) + blobPath + id + "?" + q.Encode()
}

func (s *Server) blobSig(id, method, exp string) string {
	m := hmac.New(sha256.New, s.blobKey())
	m.Write([]byte(id + "\x00" + method + "\x00" + exp))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// serveBlob serves the blob storage: GET and PUT with a signature the
// fake issued for that method, before it expires. A request that carries
// an Authorization header is a violation: a signed storage URL needs no
// token, and a client that sends its GitHub token there leaks it to the
// storage host.
func (s *Server) serveBlob(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		s.violation(r, "request: the blob storage got an Authorization header (a client sent its token to a signed storage URL)")
	}
	id := strings.TrimPrefix(r.URL.Path, blobPath)
	q := r.URL.Query()
	exp, _ := strconv.ParseInt(q.Get("se"), 10, 64)
	if q.Get("sp") != r.Method || !hmac.Equal([]byte(q.Get("sig")), []byte(s.blobSig(id, r.Method, q.Get("se")))) || s.now().After(time.Unix(exp, 0)) {
		http.Error(w, "AuthenticationFailed: signature mismatch or expired", http.StatusForbidden)
		return
	}
	s.mu.Lock()
	b := s.actions.blobs[id]
	s.mu.Unlock()
	if b == nil {
		http.Error(w, "BlobNotFound", http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodPut:
		data, err := io.ReadAll(io.LimitReader(r.Body, 256<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		b.data, b.committed = data, true
		s.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	case http.MethodGet:
		s.mu.Lock()
		data, ok := b.data, b.committed
		s.mu.Unlock()
		if !ok {
			http.Error(w, "BlobNotFound", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/zip")
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data)
	default:
		http.Error(w, "UnsupportedHttpVerb", http.StatusMethodNotAllowed)
	}
}
