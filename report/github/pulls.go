package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v62/github"

	"github.com/org/warden/hunks"
)

// MaxPullRequestFiles is where the files API stops: "Responses include a
// maximum of 3000 files. The paginated response returns 30 files per page by
// default." (REST docs, "List pull requests files").
const MaxPullRequestFiles = 3000

// File is one changed file of a pull request as the files API reports it.
// Patch is empty when GitHub left it out (a binary or very large file): the
// caller reports such a file as not reviewed.
type File struct {
	Path, PreviousPath, Status, Patch string
	Additions, Deletions              int
}

// PullRequest reads pull request number.
func (c *Client) PullRequest(ctx context.Context, number int) (*gh.PullRequest, error) {
	// GitHub API docs: https://docs.github.com/rest/pulls/pulls#get-a-pull-request
	pr, _, err := c.gh.PullRequests.Get(ctx, c.owner, c.repo, number)
	if err != nil {
		return nil, c.fail(fmt.Sprintf("get pull request #%d", number), false, err)
	}
	return pr, nil
}

// PullRequestFiles lists the changed files of pull request number, 100 per
// page. truncated is true when GitHub's limit of MaxPullRequestFiles cut
// the list (the pull request's changed_files says more); the files beyond it
// were not listed and so were not reviewed.
func (c *Client) PullRequestFiles(ctx context.Context, number int) (files []File, truncated bool, err error) {
	op := fmt.Sprintf("list files of pull request #%d", number)
	opts := &gh.ListOptions{PerPage: 100}
	for {
		// GitHub API docs: https://docs.github.com/rest/pulls/pulls#list-pull-requests-files
		page, resp, err := c.gh.PullRequests.ListFiles(ctx, c.owner, c.repo, number, opts)
		if err != nil {
			return nil, false, c.fail(op, false, err)
		}
		for _, f := range page {
			files = append(files, File{
				Path:         f.GetFilename(),
				PreviousPath: f.GetPreviousFilename(),
				Status:       f.GetStatus(),
				Patch:        f.GetPatch(),
				Additions:    f.GetAdditions(),
				Deletions:    f.GetDeletions(),
			})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if len(files) >= MaxPullRequestFiles {
		// Only at the limit is one more read worth it: changed_files tells
		// a list cut at 3,000 from a pull request of exactly 3,000 files.
		pr, err := c.PullRequest(ctx, number)
		if err != nil {
			return files, true, nil // assume the worst: said as truncated
		}
		truncated = pr.GetChangedFiles() > len(files)
	}
	return files, truncated, nil
}

// AnchorsFromFiles is the anchors of GitHub's own diff of the pull
// request (its files' patches, parsed by hunks). A file whose patch does
// not parse has none: no comment is anchored on it.
func AnchorsFromFiles(files []File) Anchors {
	var parsed []*hunks.File
	for _, f := range files {
		if hf, err := hunks.ParseGitHubPatch(f.Hunks()); err == nil {
			parsed = append(parsed, hf)
		}
	}
	return hunks.AnchorsOf(parsed)
}

// Hunks is the file as hunks reads GitHub's files.
func (f File) Hunks() hunks.GitHubFile {
	return hunks.GitHubFile{Path: f.Path, PreviousPath: f.PreviousPath, Status: f.Status, Patch: f.Patch}
}
