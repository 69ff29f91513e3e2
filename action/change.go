package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
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
func readChange(ctx context.Context, dir string, remote gitrepo.Remote, pr *PullRequest, client *ghreport.Client, log io.Writer) (*Change, error) {
	if gitrepo.IsRepo(ctx, dir) {
		ch, err := checkoutChange(ctx, dir, remote, pr, log)
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

// checkoutChange diffs the pull request in a local checkout, fetching what
// it lacks (fetchHistory).
func checkoutChange(ctx context.Context, dir string, remote gitrepo.Remote, pr *PullRequest, log io.Writer) (*Change, error) {
	mb, err := fetchHistory(ctx, dir, remote, pr, log)
	if err != nil {
		return nil, err
	}
	diff, err := gitrepo.Stream(ctx, dir, append(slices.Clone(gitrepo.DiffArgs), mb, pr.HeadSHA, "--")...)
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

// Shallow history is fetched in steps: the pull request's two tips with
// firstDepth commits each, then deeper by deepenSteps until their merge
// base is in the checkout, and only then the whole history. A pull
// request that left its base a few commits ago costs a few commits, not
// the repository's history (a shallow checkout is actions/checkout's
// default, fetch-depth: 1).
var (
	firstDepth  = 50
	deepenSteps = []int{50, 200, 800, 3200}
)

// fetchHistory makes sure the checkout at dir has the pull request's base
// and head commits and their merge base, and returns the merge base. What
// is missing is fetched from remote (with the token where the server is
// GitHub's: a checkout with persist-credentials: false keeps none); in a
// shallow checkout only as deep as needed (firstDepth, deepenSteps), with
// a line in the log saying so. A fork's head is fetched through the pull
// request's ref.
func fetchHistory(ctx context.Context, dir string, remote gitrepo.Remote, pr *PullRequest, log io.Writer) (string, error) {
	shallow := gitrepo.IsShallow(ctx, dir)
	var depth []string
	if shallow {
		depth = []string{"--depth=" + strconv.Itoa(firstDepth)}
	}
	fetched := 0
	for _, sha := range []string{pr.BaseSHA, pr.HeadSHA} {
		if gitrepo.HasCommit(ctx, dir, sha) {
			continue
		}
		err := remote.Fetch(ctx, dir, depth, sha)
		if err != nil && sha == pr.HeadSHA {
			err = remote.Fetch(ctx, dir, depth, fmt.Sprintf("refs/pull/%d/head", pr.Number))
		}
		if err != nil {
			return "", err
		}
		fetched++
	}
	mb, err := gitrepo.MergeBase(ctx, dir, pr.BaseSHA, pr.HeadSHA)
	deepened := 0
	for _, n := range deepenSteps {
		if !shallow || !errors.Is(err, gitrepo.ErrNoMergeBase) {
			break
		}
		if ferr := remote.Fetch(ctx, dir, []string{"--deepen=" + strconv.Itoa(n)}, pr.BaseSHA, pr.HeadSHA); ferr != nil {
			return "", ferr
		}
		deepened += n
		mb, err = gitrepo.MergeBase(ctx, dir, pr.BaseSHA, pr.HeadSHA)
	}
	if shallow && errors.Is(err, gitrepo.ErrNoMergeBase) {
		if ferr := remote.Fetch(ctx, dir, []string{"--unshallow"}); ferr != nil {
			return "", ferr
		}
		deepened = -1
		mb, err = gitrepo.MergeBase(ctx, dir, pr.BaseSHA, pr.HeadSHA)
	}
	if err != nil {
		return "", err
	}
	if shallow && (fetched > 0 || deepened != 0) {
		var what []string
		if fetched > 0 {
			what = append(what, fmt.Sprintf("%s (%d commits deep)", review.Plural(fetched, "the missing tip", "both tips"), firstDepth))
		}
		switch {
		case deepened < 0:
			what = append(what, "the whole history")
		case deepened > 0:
			what = append(what, fmt.Sprintf("history %d commits deeper", deepened))
		}
		fmt.Fprintf(log, "warden: the checkout is shallow: fetched %s to find where the pull request left its base (actions/checkout with fetch-depth: 0 makes this step unnecessary)\n",
			strings.Join(what, ", then "))
	}
	return mb, nil
}
