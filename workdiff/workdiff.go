// Package workdiff reads the change under review from a local checkout:
// a unified diff file or a stream (spooled, and refused as it streams when
// over the cap), the commits since a base revision, or the uncommitted
// changes of the working tree. It returns the parsed files and a reader of
// their reviewed contents that refuses paths leaving the repository.
//
// Its errors are the user's input and name it the way the CLI's flags do
// (--diff, --base); the caller maps them to its exit code. It reads no
// environment. It may import hunks, internal/gitrepo and review (for its text
// helpers); it must not import action, the sinks or cmd/warden.
package workdiff

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/gitrepo"
	"github.com/org/warden/review"
)

var unwrapPathError = review.UnwrapPathError

// Options name the change to read.
type Options struct {
	Dir  string // the working directory: relative diff paths, the repository checks
	Root string // the repository's top level; "" for Dir
	// Diff is a diff file to read, "-" for Stdin; "" reads from git.
	Diff  string
	Stdin io.Reader
	// Base is the revision the commits under review left (merge-base of
	// it and HEAD, to HEAD); "" with no Diff: the uncommitted changes.
	Base string
	// AllowEmpty accepts an empty Diff as a change with nothing to review.
	AllowEmpty bool
}

// Change is the diff under review and a way to read its files at the
// reviewed revision.
type Change struct {
	Files  []*hunks.File
	Source func(path string) ([]byte, error)
	// Against is the revision the change is made against, whose tree is
	// trusted for the repository's instructions (the change's own text
	// never is): HEAD for the uncommitted changes and for a --diff inside
	// a repository, the merge base for --base; "" outside a repository or
	// before its first commit. Why says why it is "".
	Against, Why string
}

// Read gets the change the options name: a diff file or standard input
// (--diff), the commits since REF (--base), or by default the uncommitted
// changes (index, working tree and untracked files) against HEAD. Paths in
// the diff are relative to the repository's top level (as git writes
// them), so files are read from there, whatever the working directory.
//
// A --diff that is empty is an error unless --allow-empty: a failed command
// upstream in a pipe must not look like a clean review. It is read as it
// streams, and refused before reading when its size is known to be over
// the cap.
func Read(ctx context.Context, o Options) (*Change, error) {
	root := cmp.Or(o.Root, o.Dir)
	var (
		files        []*hunks.File
		read         func(string) ([]byte, error)
		err          error
		against, why = "HEAD", ""
	)
	switch {
	case o.Diff != "":
		if files, err = readDiff(o); err != nil {
			return nil, err
		}
		read = worktreeReader(root)
		if err := checkRepo(ctx, o.Dir, root); err != nil {
			against, why = "", "the diff is not read inside a git repository with a commit, whose HEAD would be trusted"
		}
	case o.Base != "":
		if err := checkRepo(ctx, o.Dir, root); err != nil {
			return nil, err
		}
		mb, err := gitrepo.MergeBase(ctx, root, o.Base, "HEAD")
		if err != nil {
			return nil, baseError(o.Base, err)
		}
		against = mb
		diff, err := gitrepo.RangeDiff(ctx, root, o.Base, "HEAD")
		if err != nil {
			return nil, baseError(o.Base, err)
		}
		if files, err = hunks.Parse(bytes.NewReader(diff)); err != nil {
			return nil, fmt.Errorf("git diff %s...HEAD: %v", o.Base, err)
		}
		read = func(path string) ([]byte, error) { return gitrepo.Output(ctx, root, "show", "HEAD:"+path) }
	default:
		if err := checkRepo(ctx, o.Dir, root); err != nil {
			return nil, err
		}
		// From the top level: untracked files are listed relative to git's
		// working directory, and the diff's paths must be the repository's.
		diff, err := gitrepo.WorktreeDiff(ctx, root)
		if err != nil {
			return nil, err
		}
		if files, err = hunks.Parse(bytes.NewReader(diff)); err != nil {
			return nil, fmt.Errorf("git diff HEAD: %v", err)
		}
		read = worktreeReader(root)
	}
	return &Change{Files: files, Source: hunks.VerifiedSource(files, read), Against: against, Why: why}, nil
}

// TrustedTree opens the tree of c.Against in the repository at root, for
// the repository's instructions, and names it ("HEAD (3b15d29)", "the
// merge base 3b15d29"); without one, it returns nil and says why. The
// caller closes the tree.
func (c *Change) TrustedTree(ctx context.Context, root string) (tree *gitrepo.Tree, from, why string) {
	if c.Against == "" {
		return nil, "", cmp.Or(c.Why, "no revision to read them from")
	}
	sha, err := gitrepo.Output(ctx, root, "rev-parse", "--verify", "--quiet", c.Against+"^{commit}")
	if err != nil {
		return nil, "", fmt.Sprintf("%s cannot be read: %v", c.Against, err)
	}
	short := gitrepo.Short(strings.TrimSpace(string(sha)))
	from = "the merge base " + short
	if c.Against == "HEAD" {
		from = "HEAD (" + short + ")"
	}
	if tree, err = gitrepo.OpenTree(ctx, root, c.Against); err != nil {
		return nil, "", fmt.Sprintf("%s cannot be read: %v", from, err)
	}
	return tree, from, ""
}

// readDiff parses the diff o.Diff names: a file, or standard input (-),
// spooled so that it is refused as it streams when over the cap.
func readDiff(o Options) ([]*hunks.File, error) {
	name, r := "standard input", o.Stdin
	if o.Diff == "-" {
		f, err := spool(r, gitrepo.MaxOutput)
		if err != nil {
			return nil, fmt.Errorf("--diff %s: %v", name, err)
		}
		if f != nil {
			defer os.Remove(f.Name())
			defer f.Close()
			r = f
		}
	} else {
		name = o.Diff
		path := o.Diff
		if !filepath.IsAbs(path) {
			path = filepath.Join(o.Dir, path)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--diff %s: %v", name, unwrapPathError(err))
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return nil, fmt.Errorf("--diff %s: is a directory, not a diff file", name)
		}
		r = f
	}
	files, err := hunks.ParseLimit(r, gitrepo.MaxOutput)
	switch {
	case errors.Is(err, hunks.ErrEmpty) && o.AllowEmpty:
		return nil, nil
	case errors.Is(err, hunks.ErrEmpty):
		return nil, fmt.Errorf("--diff %s: empty input, no diff to review (did the command before the pipe fail?); pass --allow-empty when an empty diff is expected", name)
	case err != nil:
		return nil, fmt.Errorf("--diff %s: %v", name, err)
	}
	return files, nil
}

// spool copies a stream of unknown size (a pipe) to a temporary file, up to
// limit bytes: a diff over the cap is refused with the memory of a copy
// buffer, not of a parse, and one within it is parsed from a file whose
// size is known. A regular file (standard input redirected from one) is
// not copied: nil, nil.
func spool(r io.Reader, limit int64) (*os.File, error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return nil, nil
		}
	}
	tmp, err := os.CreateTemp("", "warden-diff-*")
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(tmp, io.LimitReader(r, limit+1))
	if err == nil && n > limit {
		err = fmt.Errorf("%w: over the %d MiB cap (refused as it streamed, before parsing)", hunks.ErrTooLarge, limit>>20)
	}
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	return tmp, nil
}

// baseError says why --base cannot be diffed and, when the history is
// missing rather than wrong (a shallow or single-branch clone), how to
// fetch it.
func baseError(base string, err error) error {
	var he *gitrepo.HistoryError
	if !errors.As(err, &he) {
		return fmt.Errorf("--base %s: %v", base, err)
	}
	const checkout = "in GitHub Actions, check out with actions/checkout's fetch-depth: 0"
	switch {
	case errors.Is(he, gitrepo.ErrNoMergeBase) && he.Shallow:
		return fmt.Errorf("--base %s: no common ancestor of %s and HEAD in the local history: this is a shallow clone "+
			"(git clone --depth, or actions/checkout's default fetch-depth: 1), so the commit where HEAD left %s was not fetched; "+
			"fetch more history with git fetch --deepen=100 (again until this works) or git fetch --unshallow; %s",
			base, base, base, checkout)
	case errors.Is(he, gitrepo.ErrNoMergeBase):
		return fmt.Errorf("--base %s: %s and HEAD have no common ancestor (unrelated histories)", base, base)
	case he.Rev != base: // HEAD itself: checkRepo rules that out first
		return fmt.Errorf("--base %s: %v", base, he)
	case he.Shallow:
		return fmt.Errorf("--base %s: no revision %q in this clone, which is shallow and may hold only the branch it checked out "+
			"(git clone --depth, or actions/checkout's default fetch-depth: 1): fetch it with its history, %s; %s",
			base, base, fetchHint(base, he.Remote, "--unshallow "), checkout)
	case he.Remote == "":
		return fmt.Errorf("--base %s: no branch, tag or commit %q in this repository", base, base)
	}
	return fmt.Errorf("--base %s: no revision %q in this repository (a branch only the remote has? %s)", base, base, fetchHint(base, he.Remote, ""))
}

// fetchHint is the git command that fetches the branch a --base names from
// remote into a remote-tracking branch (also in a single-branch clone,
// whose fetch refspec covers one branch), and the --base to use after it.
func fetchHint(base, remote, opts string) string {
	remote = cmp.Or(remote, "origin")
	branch := strings.TrimPrefix(base, remote+"/")
	if strings.ContainsAny(branch, "~^:@{} ") || gitrepo.IsSHA(branch) || branch == "" {
		return "git fetch " + opts + remote // not a branch name: fetch everything
	}
	return fmt.Sprintf("git fetch %s%s %s:refs/remotes/%s/%s, then --base %s/%s", opts, remote, branch, remote, branch, remote, branch)
}

// checkRepo says what is wrong when the working directory cannot give a
// change to review: not a git checkout, or one without a commit yet.
func checkRepo(ctx context.Context, dir, root string) error {
	if !gitrepo.IsRepo(ctx, dir) {
		return fmt.Errorf("%s is not inside a git repository: review a diff with --diff FILE (or --diff - for standard input)", dir)
	}
	if _, err := gitrepo.Output(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		return fmt.Errorf("the repository at %s has no commit yet: nothing to compare against (commit first, or review a diff with --diff FILE)", root)
	}
	return nil
}

// worktreeReader reads files of the working tree, refusing paths that leave
// it (a diff is untrusted input and may name "../../etc/passwd").
func worktreeReader(dir string) func(string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		if !filepath.IsLocal(filepath.FromSlash(path)) {
			return nil, fmt.Errorf("path %q leaves the repository", path)
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil, err
		}
		defer root.Close()
		return root.ReadFile(filepath.FromSlash(path))
	}
}
