package ghbot

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"

	ghreport "github.com/org/warden/report/github"
)

// Why workflow artifacts and not the Actions cache: "Workflow runs can
// restore caches created in either the current branch or the default
// branch ... When a cache is created by a workflow run triggered on a pull
// request, the cache is created for the merge ref (refs/pull/.../merge).
// Because of this, the cache will have a limited scope and can only be
// restored by re-runs of the pull request" (docs.github.com, "Dependency
// caching reference"). An issue_comment, check_run or workflow_run run
// runs on the default branch and cannot restore what a pull_request run
// saved; a pull_request_target run, on the default branch's scope, has
// read-only cache access (github.blog changelog 2026-06-26, and the
// per-job cache-mode since 2026-09-10). Artifacts are listed and
// downloaded through the REST API from any run with "actions: read", with
// the run that uploaded them, so their origin can be checked first.

// Artifact names: one per trust domain and pull request, so a reader lists
// only its own (GET .../actions/artifacts?name=, an exact match).
func ArtifactName(domain string, pr int) string {
	return fmt.Sprintf("warden-results-%s-pr%d", domain, pr)
}

// Bounds of what a restore reads. The results cache keeps at most 64 MiB
// (review.DefaultCacheMaxBytes) of entries of at most 1 MiB and a few
// names each; an artifact is that directory, zipped.
const (
	// MaxRestored is how many artifacts (the newest accepted ones) a
	// restore merges; each holds what its run restored plus its own.
	MaxRestored = 3
	// MaxCandidates bounds the artifacts of the name looked at (one REST
	// request for the run of each).
	MaxCandidates = 20
	// MaxArchiveBytes caps one artifact's zip.
	MaxArchiveBytes = 80 << 20
	// maxEntryBytes caps one entry in it.
	maxEntryBytes = 1<<20 + 4096
	// maxTotalBytes caps what one restore writes.
	maxTotalBytes = 128 << 20
)

// entryName is the layout of the results cache's entries: Dir/ab/<sha256>.
var entryName = regexp.MustCompile(`^[0-9a-f]{2}/[0-9a-f]{64}$`)

// pullRequestEvents run the workflow file of the pull request's merge
// commit ("Events that trigger workflows": pull_request, pull_request_review
// and pull_request_review_comment run on GITHUB_REF refs/pull/N/merge), so
// for a fork's pull request the fork's file: a run of one of them whose
// head repository is not this repository executed a fork's workflow. Every
// other event runs the default branch's workflow file.
var pullRequestEvents = map[string]bool{"pull_request": true, "pull_request_review": true, "pull_request_review_comment": true}

// Origin is who made an artifact: the run that uploaded it, as the REST
// API describes it.
type Origin struct {
	RunID int64
	// Event triggered the run; Path is its workflow file.
	Event, Path string
	// Repo is the run's repository, HeadRepo the repository of its head
	// commit (a fork's, for a fork's pull request).
	Repo, HeadRepo string
	// Artifact is the artifact's id.
	Artifact int64
}

// ForkWorkflow reports whether the run executed a workflow file a fork
// controls: a pull request event whose head is in another repository.
func (o Origin) ForkWorkflow() bool {
	return pullRequestEvents[o.Event] && !strings.EqualFold(o.HeadRepo, o.Repo)
}

// String is the origin for a log line.
func (o Origin) String() string {
	return fmt.Sprintf("run %d (%s of %s, head %s)", o.RunID, o.Event, o.Path, o.HeadRepo)
}

// Domains of the results cache (action's trust domains).
const (
	DomainTrusted = "trusted"
	DomainFork    = "fork"
)

// Accepts says whether a reader of domain may use an artifact of origin o:
// the trusted domain (a privileged run, or a pull request from a branch of
// the repository) only artifacts of runs that did not execute a fork's
// workflow file (any event but the pull request ones runs the default
// branch's, whatever its head); the fork domain only its own fork's runs
// (headRepo).
func Accepts(domain, headRepo string, o Origin) (bool, string) {
	switch {
	case domain == DomainTrusted && o.ForkWorkflow():
		return false, fmt.Sprintf("it ran %s from the fork %s (a %s run): a fork's workflow file never feeds a privileged run", o.Path, o.HeadRepo, o.Event)
	case domain == DomainFork && !strings.EqualFold(o.HeadRepo, headRepo):
		return false, fmt.Sprintf("it ran for %s, not this pull request's head repository %s", o.HeadRepo, headRepo)
	}
	return true, ""
}

// Store reads warden's results state back from workflow artifacts. The
// writing half is action.yml's upload step (the runtime token that
// uploads is not given to a step's process).
type Store struct {
	Client *ghreport.Client
	// Storage downloads an artifact's zip from the signed storage URL the
	// REST API redirects to. It must not add the GitHub token (the URL
	// needs none, and the storage host is not GitHub's API). Nil means a
	// plain client with a 5-minute timeout.
	Storage *http.Client
}

// Restored is what a restore did.
type Restored struct {
	// From are the artifacts whose entries were restored, newest first.
	From []Origin
	// Rejected are the artifacts not used, each with why.
	Rejected []string
	// Entries counts the entries written.
	Entries int
}

// ErrNoActionsRead marks a restore the token may not do ("actions: read"
// is not in the workflow's permissions).
var ErrNoActionsRead = errors.New(`the token cannot read workflow artifacts: add "actions: read" to the workflow's permissions`)

// Restore downloads into dir (the results cache directory of domain) the
// entries of the newest artifacts of pull request pr's results that the
// domain accepts (Accepts), at most MaxRestored of them. headRepo is the
// pull request's head repository (for the fork domain). An artifact that
// cannot be read is listed as rejected; an error is returned only when
// the listing itself fails.
func (s *Store) Restore(ctx context.Context, domain string, pr int, headRepo, dir string) (Restored, error) {
	var out Restored
	name := ArtifactName(domain, pr)
	arts, err := s.list(ctx, name)
	if err != nil {
		return out, err
	}
	_, owner, repo := s.Client.REST()
	full := owner + "/" + repo
	for i, a := range arts {
		if len(out.From) == MaxRestored {
			break
		}
		if i == MaxCandidates {
			out.Rejected = append(out.Rejected, fmt.Sprintf("%d older artifacts named %s not looked at (at most %d)", len(arts)-i, name, MaxCandidates))
			break
		}
		if a.GetExpired() {
			continue
		}
		o, err := s.origin(ctx, a)
		if err != nil {
			out.Rejected = append(out.Rejected, fmt.Sprintf("artifact %d: %v", a.GetID(), err))
			continue
		}
		o.Repo = full
		if ok, why := Accepts(domain, headRepo, o); !ok {
			out.Rejected = append(out.Rejected, fmt.Sprintf("artifact %d of %s: %s", a.GetID(), o, why))
			continue
		}
		n, err := s.extract(ctx, a, dir)
		out.Entries += n
		if err != nil {
			out.Rejected = append(out.Rejected, fmt.Sprintf("artifact %d of %s: %v", a.GetID(), o, err))
			continue
		}
		out.From = append(out.From, o)
	}
	return out, nil
}

// list returns the artifacts named name, newest first (two pages at
// most: MaxCandidates of them are looked at).
func (s *Store) list(ctx context.Context, name string) ([]*gh.Artifact, error) {
	client, owner, repo := s.Client.REST()
	op := "list the artifacts named " + name
	// GitHub API docs: https://docs.github.com/rest/actions/artifacts#list-artifacts-for-a-repository
	u := fmt.Sprintf("repos/%s/%s/actions/artifacts?name=%s&per_page=%d", url.PathEscape(owner), url.PathEscape(repo), url.QueryEscape(name), MaxCandidates)
	req, err := client.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, s.Client.Fail(op, false, err)
	}
	var list gh.ArtifactList
	if _, err := client.Do(ctx, req, &list); err != nil {
		var er *gh.ErrorResponse
		if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusForbidden {
			return nil, fmt.Errorf("%w: %w", ErrNoActionsRead, s.Client.Fail(op, false, err))
		}
		return nil, s.Client.Fail(op, false, err)
	}
	return list.Artifacts, nil
}

// workflowRun is what a restore reads of a run (go-github's WorkflowRun
// has no path).
type workflowRun struct {
	Event      string `json:"event"`
	Path       string `json:"path"`
	Repository *struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	HeadRepository *struct {
		FullName string `json:"full_name"`
	} `json:"head_repository"`
}

// origin reads the run that uploaded a.
func (s *Store) origin(ctx context.Context, a *gh.Artifact) (Origin, error) {
	id := a.GetWorkflowRun().GetID()
	if id == 0 {
		return Origin{}, errors.New("no workflow run")
	}
	client, owner, repo := s.Client.REST()
	op := fmt.Sprintf("get workflow run %d", id)
	// GitHub API docs: https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run
	req, err := client.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/actions/runs/%d", url.PathEscape(owner), url.PathEscape(repo), id), nil)
	if err != nil {
		return Origin{}, s.Client.Fail(op, false, err)
	}
	var run workflowRun
	if _, err := client.Do(ctx, req, &run); err != nil {
		return Origin{}, s.Client.Fail(op, false, err)
	}
	o := Origin{RunID: id, Event: run.Event, Path: run.Path, Artifact: a.GetID(), HeadRepo: "(a deleted repository)"}
	if run.Repository != nil {
		o.Repo = run.Repository.FullName
	}
	if run.HeadRepository != nil && run.HeadRepository.FullName != "" {
		o.HeadRepo = run.HeadRepository.FullName
	}
	return o, nil
}

// extract downloads a's zip and writes its entries that have the results
// cache's layout into dir, keeping what is there (a newer artifact's
// entry, or the run's own). It returns how many it wrote.
func (s *Store) extract(ctx context.Context, a *gh.Artifact, dir string) (int, error) {
	if a.GetSizeInBytes() > MaxArchiveBytes {
		return 0, fmt.Errorf("%d bytes, over the %d MiB a restore reads", a.GetSizeInBytes(), MaxArchiveBytes>>20)
	}
	client, owner, repo := s.Client.REST()
	// GitHub API docs: https://docs.github.com/rest/actions/artifacts#download-an-artifact
	loc, _, err := client.Actions.DownloadArtifact(ctx, owner, repo, a.GetID(), 0)
	if err != nil {
		return 0, s.Client.Fail(fmt.Sprintf("download artifact %d", a.GetID()), false, err)
	}
	data, err := s.fetch(ctx, loc)
	if err != nil {
		return 0, err
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return 0, fmt.Errorf("not a zip archive: %w", err)
	}
	n, total := 0, int64(0)
	for _, f := range zr.File {
		if !entryName.MatchString(f.Name) || f.UncompressedSize64 > maxEntryBytes {
			continue // not an entry of the results cache
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if _, err := os.Stat(p); err == nil {
			continue
		}
		total += int64(f.UncompressedSize64)
		if total > maxTotalBytes {
			return n, fmt.Errorf("over the %d MiB a restore writes", maxTotalBytes>>20)
		}
		if err := writeEntry(f, p); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// fetch reads the zip at the storage URL loc, without the GitHub token.
func (s *Store) fetch(ctx context.Context, loc *url.URL) ([]byte, error) {
	hc := s.Storage
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Minute}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download from storage (%s): %w", loc.Host, stripQuery(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download from storage (%s): %s", loc.Host, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxArchiveBytes+1))
	if err != nil {
		return nil, fmt.Errorf("download from storage (%s): %w", loc.Host, stripQuery(err))
	}
	if len(data) > MaxArchiveBytes {
		return nil, fmt.Errorf("over the %d MiB a restore reads", MaxArchiveBytes>>20)
	}
	return data, nil
}

// stripQuery drops a signed URL's query (its signature) from a transport
// error.
func stripQuery(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			u.RawQuery = ""
			return &url.Error{Op: ue.Op, URL: u.String(), Err: ue.Err}
		}
	}
	return err
}

// writeEntry writes zip entry f at p (created, never followed through a
// link), at most maxEntryBytes.
func writeEntry(f *zip.File, p string) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxEntryBytes+1))
	if err != nil {
		return err
	}
	if len(data) > maxEntryBytes {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := out.Write(data)
	return errors.Join(werr, out.Close())
}
