// Package workdiff reads the change under review from a local checkout:
// a unified diff file or a stream (spooled, and refused as it streams when
// over the cap), the commits since a base revision, or the uncommitted
// changes of the working tree. The diff is planned as it streams (Plan:
// hunks.PrepareDiff), never held whole; the reviewed files are read from
// git through one long-lived process (internal/gitrepo.Files) or from the
// working tree, refusing paths that leave the repository.
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
	"slices"
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

// Change is the change under review: its diff, read once by Plan as it
// streams, and a way to read its files at the reviewed revision. It holds
// what reading it needs open (git's diff and cat-file processes, the
// spooled standard input) until Close, which its owner calls when the
// review is done; the context given to Read kills the git processes.
type Change struct {
	// Source reads a file of the change (a path relative to the
	// repository's top level) at the reviewed revision: from the commit
	// for --base, else from the working tree. A path that leaves the
	// repository is refused.
	Source func(path string) ([]byte, error)
	// Against is the revision the change is made against, whose tree is
	// trusted for the repository's instructions (the change's own text
	// never is): HEAD for the uncommitted changes and for a --diff inside
	// a repository, the merge base for --base; "" outside a repository or
	// before its first commit. Why says why it is "".
	Against, Why string

	diff    io.Reader // the diff, for Plan
	what    string    // the input, as errors name it: "--diff x.diff", "--base main"
	parse   string    // how a parse error is named: what plus git's range
	empty   error     // what an empty --diff is; nil: no error, nothing to review
	git     io.Closer // git diff, whose status says whether the diff is whole
	planned bool
	closers []func() error
}

// Read gets the change the options name: a diff file or standard input
// (--diff), the commits since REF (--base), or by default the uncommitted
// changes (index, working tree and untracked files) against HEAD. Paths in
// the diff are relative to the repository's top level (as git writes
// them), so files are read from there, whatever the working directory.
//
// Read opens the input and checks what can be checked before planning
// (the file, the repository, the base revision); Plan reads the diff. A
// --diff that is empty is an error unless --allow-empty: a failed command
// upstream in a pipe must not look like a clean review. A diff over the
// cap is refused before it is read when its size is known, else as soon as
// the cap is passed.
func Read(ctx context.Context, o Options) (*Change, error) {
	root := cmp.Or(o.Root, o.Dir)
	switch {
	case o.Diff != "":
		ch, err := readDiff(o)
		if err != nil {
			return nil, err
		}
		ch.Source, ch.Against = worktreeReader(root), "HEAD"
		if err := checkRepo(ctx, o.Dir, root); err != nil {
			ch.Against, ch.Why = "", "the diff is not read inside a git repository with a commit, whose HEAD would be trusted"
		}
		return ch, nil
	case o.Base != "":
		if err := checkRepo(ctx, o.Dir, root); err != nil {
			return nil, err
		}
		// HEAD is read once: the diff and every file come from that commit.
		files, err := gitrepo.OpenFiles(ctx, root, "HEAD")
		if err != nil {
			return nil, fmt.Errorf("--base %s: %v", o.Base, err)
		}
		head := files.Commit()
		mb, err := gitrepo.MergeBase(ctx, root, o.Base, head)
		if err != nil {
			files.Close()
			return nil, baseError(o.Base, err)
		}
		diff, err := gitrepo.Stream(ctx, root, append(slices.Clone(gitrepo.DiffArgs), mb, head, "--")...)
		if err != nil {
			files.Close()
			return nil, baseError(o.Base, err)
		}
		return &Change{
			Source: files.ReadFile, Against: mb, diff: diff, git: diff,
			what: "--base " + o.Base, parse: fmt.Sprintf("git diff %s...HEAD", o.Base),
			closers: []func() error{diff.Close, files.Close},
		}, nil
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
		return &Change{Source: worktreeReader(root), Against: "HEAD", diff: bytes.NewReader(diff), what: "git diff HEAD", parse: "git diff HEAD"}, nil
	}
}

// Plan plans the change with opts as its diff streams (hunks.PrepareDiff):
// the review.Diff of a local change. It reads the diff once; its errors
// name the input. A diff read from git counts only when git succeeded.
func (c *Change) Plan(opts hunks.Options) (*hunks.Plan, error) {
	if c.planned {
		return nil, errors.New("workdiff: the change was planned already (its diff is read once)")
	}
	c.planned = true
	plan, err := hunks.PrepareDiff(c.diff, gitrepo.MaxOutput, opts)
	if c.git != nil {
		// git failing on its own leaves a diff that may parse but is not
		// whole: its error comes first. Stopped by the cap, it is not one.
		if gerr := c.git.Close(); gerr != nil {
			return nil, fmt.Errorf("%s: %v", c.what, gerr)
		}
	}
	switch {
	case errors.Is(err, hunks.ErrBadGlob):
		return nil, err
	case errors.Is(err, hunks.ErrEmpty) && c.empty != nil:
		return nil, c.empty
	case errors.Is(err, hunks.ErrEmpty):
		return hunks.Prepare(nil, opts) // nothing to review
	case errors.Is(err, hunks.ErrTooLarge):
		return nil, fmt.Errorf("%s: %v (review a smaller range)", c.what, err)
	case err != nil:
		return nil, fmt.Errorf("%s: %v", c.parse, err)
	}
	return plan, nil
}

// Close ends what the change holds open: git's processes (stopping a diff
// that was not read to its end), the spooled standard input. It may be
// called more than once.
func (c *Change) Close() error {
	var errs []error
	for _, f := range c.closers {
		errs = append(errs, f())
	}
	c.closers = nil
	return errors.Join(errs...)
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

// readDiff opens the diff o.Diff names: a file, or standard input (-),
// spooled so that it is refused as it streams when over the cap.
func readDiff(o Options) (*Change, error) {
	ch := &Change{}
	name := "standard input"
	if o.Diff == "-" {
		f, err := spool(o.Stdin, gitrepo.MaxOutput)
		if err != nil {
			return nil, fmt.Errorf("--diff %s: %v", name, err)
		}
		ch.diff = o.Stdin
		if f != nil {
			ch.diff = f
			ch.closers = append(ch.closers, func() error { f.Close(); return os.Remove(f.Name()) })
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
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			f.Close()
			return nil, fmt.Errorf("--diff %s: is a directory, not a diff file", name)
		}
		ch.diff = f
		ch.closers = append(ch.closers, f.Close)
	}
	ch.what, ch.parse = "--diff "+name, "--diff "+name
	if !o.AllowEmpty {
		ch.empty = fmt.Errorf("--diff %s: empty input, no diff to review (did the command before the pipe fail?); pass --allow-empty when an empty diff is expected", name)
	}
	return ch, nil
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
