package ghbot

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// Commands on a fork's pull request. GitHub runs a
// pull_request_review_comment workflow as the pull request's merge commit
// has it, and for a fork's pull request "with the exception of
// GITHUB_TOKEN, secrets are not passed to the runner" and the token is
// read-only: warden can neither reply nor review there, and must not
// act in a job that runs a fork's workflow file anyway. GitHub's pattern
// for privileged follow-up: the unprivileged run records the event as an
// artifact, and a workflow_run workflow (the default branch's file, with
// secrets and a write token: "able to access secrets and write tokens,
// even if the previous workflow was not") acts on it. Only the comment's
// id is taken from the record, which the fork's workflow could have
// written to say anything; everything else (the text, its author, their
// association, the pull request) is read from GitHub.

// CommandArtifact is the name of the record of a command an unprivileged
// run could not act on.
const CommandArtifact = "warden-command"

// commandFile is the record's one file.
const commandFile = "command.json"

// CommandRecord is what an unprivileged run records of a command: the
// comment's id, nothing the follow-up believes beyond it.
type CommandRecord struct {
	CommentID int64 `json:"comment_id"`
}

// WriteCommandRecord writes r into dir, for action.yml's upload step.
func WriteCommandRecord(dir string, r CommandRecord) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, _ := json.Marshal(r)
	return os.WriteFile(filepath.Join(dir, commandFile), data, 0o644)
}

// maxRecordBytes caps the record read back.
const maxRecordBytes = 4096

// CommandRecorded reads the command record of workflow run runID (its
// artifact CommandArtifact); ok is false when the run recorded none.
func (s *Store) CommandRecorded(ctx context.Context, runID int64) (rec CommandRecord, ok bool, err error) {
	client, owner, repo := s.Client.REST()
	op := fmt.Sprintf("list the artifacts of workflow run %d", runID)
	// GitHub API docs: https://docs.github.com/rest/actions/artifacts#list-workflow-run-artifacts
	req, err := client.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/actions/runs/%d/artifacts?name=%s", url.PathEscape(owner), url.PathEscape(repo), runID, CommandArtifact), nil)
	if err != nil {
		return rec, false, s.Client.Fail(op, false, err)
	}
	var list gh.ArtifactList
	if _, err := client.Do(ctx, req, &list); err != nil {
		return rec, false, s.Client.Fail(op, false, err)
	}
	for _, a := range list.Artifacts {
		if a.GetName() != CommandArtifact || a.GetExpired() || a.GetWorkflowRun().GetID() != runID {
			continue
		}
		// GitHub API docs: https://docs.github.com/rest/actions/artifacts#download-an-artifact
		loc, _, err := client.Actions.DownloadArtifact(ctx, owner, repo, a.GetID(), 0)
		if err != nil {
			return rec, false, s.Client.Fail(fmt.Sprintf("download artifact %d", a.GetID()), false, err)
		}
		data, err := s.fetch(ctx, loc)
		if err != nil {
			return rec, false, err
		}
		rec, err := parseRecord(data)
		return rec, err == nil, err
	}
	return rec, false, nil
}

// parseRecord reads the record's file out of the artifact's zip.
func parseRecord(data []byte) (CommandRecord, error) {
	var rec CommandRecord
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return rec, fmt.Errorf("the command record is not a zip archive: %w", err)
	}
	for _, f := range zr.File {
		if f.Name != commandFile {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return rec, err
		}
		raw, err := io.ReadAll(io.LimitReader(rc, maxRecordBytes+1))
		rc.Close()
		if err != nil || len(raw) > maxRecordBytes {
			return rec, errors.Join(err, errors.New("the command record is too large"))
		}
		if err := json.Unmarshal(raw, &rec); err != nil || rec.CommentID <= 0 {
			return CommandRecord{}, fmt.Errorf("the command record names no comment: %s", strconv.QuoteToASCII(string(raw[:min(len(raw), 80)])))
		}
		return rec, nil
	}
	return rec, errors.New("the command record has no " + commandFile)
}

// ReviewComment is a pull request review comment as GitHub says it is.
type ReviewComment struct {
	ID                 int64
	Body               string
	Author, AuthorType string // login; "User" or "Bot"
	Association        string // author_association
	ReplyTo            int64  // in_reply_to_id: the thread's first comment; 0 for a first comment
	PullRequest        int
	Created            time.Time
}

// GetReviewComment reads review comment id.
func (s *Store) GetReviewComment(ctx context.Context, id int64) (ReviewComment, error) {
	client, owner, repo := s.Client.REST()
	// GitHub API docs: https://docs.github.com/rest/pulls/comments#get-a-review-comment-for-a-pull-request
	c, _, err := client.PullRequests.GetComment(ctx, owner, repo, id)
	if err != nil {
		return ReviewComment{}, s.Client.Fail(fmt.Sprintf("get review comment %d", id), false, err)
	}
	out := ReviewComment{
		ID: c.GetID(), Body: c.GetBody(), Author: c.GetUser().GetLogin(), AuthorType: c.GetUser().GetType(),
		Association: c.GetAuthorAssociation(), ReplyTo: c.GetInReplyTo(), Created: c.GetCreatedAt().Time,
	}
	pu := c.GetPullRequestURL()
	out.PullRequest, _ = strconv.Atoi(pu[strings.LastIndexByte(pu, '/')+1:])
	if out.PullRequest == 0 {
		return out, fmt.Errorf("review comment %d: no pull request in %q", id, pu)
	}
	return out, nil
}

// TakenRecord is the text of the sealed hidden record that ends warden's
// reply in a review thread when it takes up review comment id's command
// (the follow-up of a fork's pull request): Handled reads it.
func TakenRecord(id int64) string { return "taken:v1 id=" + strconv.FormatInt(id, 10) }

// Handled reports whether warden already took up the command in review
// comment id on pull request pr: one of the pull request's review comments
// by warden's own login (Ours) ends with TakenRecord(id), sealed. A 👀 is
// no such mark: every workflow using GITHUB_TOKEN reacts as warden's
// login, and another account's copy of the record, or one without its
// seal, does not count. It reads at most maxHandledPages pages of 100.
func (s *Store) Handled(ctx context.Context, pr int, id int64) (bool, error) {
	client, owner, repo := s.Client.REST()
	want := TakenRecord(id)
	opts := &gh.PullRequestListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for range maxHandledPages {
		// GitHub API docs: https://docs.github.com/rest/pulls/comments#list-review-comments-on-a-pull-request
		cs, resp, err := client.PullRequests.ListComments(ctx, owner, repo, pr, opts)
		if err != nil {
			return false, s.Client.Fail(fmt.Sprintf("list review comments of pull request #%d", pr), false, err)
		}
		for _, c := range cs {
			if rec, ok := s.Client.LastRecord(c.GetBody()); !ok || !rec.Sealed || rec.Text != want {
				continue
			}
			if ours, err := s.Client.Ours(ctx, c.GetUser().GetLogin()); err != nil || ours {
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

// maxHandledPages bounds Handled's reads.
const maxHandledPages = 30
