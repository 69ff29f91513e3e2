package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/gitrepo"
	ghreport "github.com/org/warden/report/github"
	"github.com/org/warden/review"
)

// Change is the diff under review and a way to read its files at the
// reviewed revision.
type Change struct {
	Files  []*hunks.File
	Source func(path string) ([]byte, error)
	// Ignored lists paths of the change that could not even be read (the
	// files API omits the patch of a very large file, and stops at 3,000
	// files), so the report says they were not reviewed.
	Ignored []review.Ignored
	// close ends the git process Source reads through; nil: none.
	close func() error
}

// Close ends what reading the change's files holds open (one git
// cat-file process for a checkout); the review's owner calls it when the
// review is done.
func (c *Change) Close() error {
	if c.close == nil {
		return nil
	}
	return c.close()
}

// readChange reads the pull request's change: from the checkout in the
// workspace when there is one (merge-base of base and head to head,
// fetching what is missing, so GitHub's diff size limits do not apply), or
// else from the paginated files API.
func readChange(ctx context.Context, dir string, pr *PullRequest, client *ghreport.Client, log io.Writer) (*Change, error) {
	if gitrepo.IsRepo(ctx, dir) {
		ch, err := checkoutChange(ctx, dir, pr)
		if err == nil {
			return ch, nil
		}
		fmt.Fprintf(log, "warden: the checkout cannot give the change (%v); using the pull request files API\n", err)
	}
	files, truncated, err := client.PullRequestFiles(ctx, pr.Number)
	if err != nil {
		return nil, fmt.Errorf("pull request #%d files: %w", pr.Number, err)
	}
	var patched []hunks.GitHubFile
	var ignored []review.Ignored
	for _, f := range files {
		if f.Patch == "" {
			if f.Status != "removed" && f.Additions+f.Deletions > 0 {
				ignored = append(ignored, review.Ignored{Path: f.Path, Reason: "github:no-patch"})
			}
			continue
		}
		patched = append(patched, f.Hunks())
	}
	if truncated {
		ignored = append(ignored, review.Ignored{Path: "(files beyond GitHub's 3,000-file limit)", Reason: "github:file-limit"})
	}
	parsed, err := hunks.ParseGitHub(patched)
	if err != nil {
		return nil, fmt.Errorf("pull request #%d files API patches: %w", pr.Number, err)
	}
	return &Change{Files: parsed, Ignored: ignored}, nil
}

// checkoutChange diffs the pull request in a local checkout.
func checkoutChange(ctx context.Context, dir string, pr *PullRequest) (*Change, error) {
	for _, sha := range []string{pr.BaseSHA, pr.HeadSHA} {
		if gitrepo.HasCommit(ctx, dir, sha) {
			continue
		}
		if _, err := gitrepo.Output(ctx, dir, "fetch", "--no-tags", "--quiet", "origin", sha); err != nil {
			if sha != pr.HeadSHA {
				return nil, err
			}
			// A fork's head is reachable through the pull request's ref.
			if _, err := gitrepo.Output(ctx, dir, "fetch", "--no-tags", "--quiet", "origin", fmt.Sprintf("refs/pull/%d/head", pr.Number)); err != nil {
				return nil, err
			}
		}
	}
	mb, err := gitrepo.Output(ctx, dir, "merge-base", pr.BaseSHA, pr.HeadSHA)
	if err != nil {
		if shallow, _ := gitrepo.Output(ctx, dir, "rev-parse", "--is-shallow-repository"); strings.TrimSpace(string(shallow)) == "true" {
			if _, ferr := gitrepo.Output(ctx, dir, "fetch", "--no-tags", "--quiet", "--unshallow", "origin"); ferr == nil {
				mb, err = gitrepo.Output(ctx, dir, "merge-base", pr.BaseSHA, pr.HeadSHA)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	diff, err := gitrepo.Stream(ctx, dir, append(gitrepo.DiffArgs, strings.TrimSpace(string(mb)), pr.HeadSHA, "--")...)
	if err != nil {
		return nil, err
	}
	files, err := hunks.ParseLimit(diff, gitrepo.MaxOutput)
	if gerr := diff.Close(); gerr != nil { // the diff is whole only if git succeeded
		return nil, gerr
	}
	if err != nil && !errors.Is(err, hunks.ErrEmpty) {
		return nil, fmt.Errorf("git diff of pull request #%d: %w", pr.Number, err)
	}
	// The head's files, through one git process for the whole review (the
	// review checks their lines against the diff before using them).
	head, err := gitrepo.OpenFiles(ctx, dir, pr.HeadSHA)
	if err != nil {
		return nil, err
	}
	return &Change{Files: files, Source: head.ReadFile, close: head.Close}, nil
}
