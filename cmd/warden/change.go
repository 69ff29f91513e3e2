package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/gitrepo"
	"github.com/org/warden/review"
)

// change is the diff under review and a way to read its files at the
// reviewed revision.
type change struct {
	files  []*hunks.File
	source func(path string) ([]byte, error)
	// ignored lists paths of the change that could not even be read (the
	// files API omits the patch of a very large file, and stops at 3,000
	// files), so the report says they were not reviewed.
	ignored []review.Ignored
}

// readChange gets the change the flags name: a diff file or standard input
// (--diff), the commits since REF (--base), or by default the uncommitted
// changes (index, working tree and untracked files) against HEAD. Paths in
// the diff are relative to the repository's top level (as git writes
// them), so files are read from there, whatever the working directory.
//
// A --diff that is empty is an error unless --allow-empty: a failed command
// upstream in a pipe must not look like a clean review. It is read as it
// streams, and refused before reading when its size is known to be over
// the cap.
func readChange(ctx context.Context, e *env, o *reviewOptions) (*change, error) {
	root := cmp.Or(e.root, e.dir)
	var (
		files []*hunks.File
		name  string
		read  func(string) ([]byte, error)
		err   error
	)
	switch {
	case o.diff != "":
		name = "standard input"
		r := e.stdin
		if o.diff == "-" {
			f, err := spool(r, gitrepo.MaxOutput)
			if err != nil {
				return nil, usagef("--diff %s: %v", name, err)
			}
			if f != nil {
				defer os.Remove(f.Name())
				defer f.Close()
				r = f
			}
		} else {
			name = o.diff
			path := o.diff
			if !filepath.IsAbs(path) {
				path = filepath.Join(e.dir, path)
			}
			f, err := os.Open(path)
			if err != nil {
				return nil, usagef("--diff %s: %v", name, unwrapPathError(err))
			}
			defer f.Close()
			if fi, err := f.Stat(); err == nil && fi.IsDir() {
				return nil, usagef("--diff %s: is a directory, not a diff file", name)
			}
			r = f
		}
		files, err = hunks.ParseLimit(r, gitrepo.MaxOutput)
		switch {
		case errors.Is(err, hunks.ErrEmpty) && o.allowEmpty:
			files, err = nil, nil
		case errors.Is(err, hunks.ErrEmpty):
			return nil, usagef("--diff %s: empty input, no diff to review (did the command before the pipe fail?); pass --allow-empty when an empty diff is expected", name)
		case err != nil:
			return nil, usagef("--diff %s: %v", name, err)
		}
		read = worktreeReader(root)
	case o.base != "":
		if err := checkRepo(ctx, e); err != nil {
			return nil, err
		}
		diff, err := gitrepo.RangeDiff(ctx, root, o.base, "HEAD")
		if err != nil {
			return nil, usagef("--base %s: %v", o.base, err)
		}
		if files, err = hunks.Parse(bytes.NewReader(diff)); err != nil {
			return nil, usagef("git diff %s...HEAD: %v", o.base, err)
		}
		read = func(path string) ([]byte, error) { return gitrepo.Output(ctx, root, "show", "HEAD:"+path) }
	default:
		if err := checkRepo(ctx, e); err != nil {
			return nil, err
		}
		// From the top level: untracked files are listed relative to git's
		// working directory, and the diff's paths must be the repository's.
		diff, err := gitrepo.WorktreeDiff(ctx, root)
		if err != nil {
			return nil, &usageError{err}
		}
		if files, err = hunks.Parse(bytes.NewReader(diff)); err != nil {
			return nil, usagef("git diff HEAD: %v", err)
		}
		read = worktreeReader(root)
	}
	return &change{files: files, source: hunks.VerifiedSource(files, read)}, nil
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

// checkRepo says what is wrong when the working directory cannot give a
// change to review: not a git checkout, or one without a commit yet.
func checkRepo(ctx context.Context, e *env) error {
	if !gitrepo.IsRepo(ctx, e.dir) {
		return usagef("%s is not inside a git repository: review a diff with --diff FILE (or --diff - for standard input)", e.dir)
	}
	if _, err := gitrepo.Output(ctx, e.dir, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		return usagef("the repository at %s has no commit yet: nothing to compare against (commit first, or review a diff with --diff FILE)", cmp.Or(e.root, e.dir))
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
