package main

import (
	"bytes"
	"context"
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
// changes (index, working tree and untracked files) against HEAD.
func readChange(ctx context.Context, e *env, o *reviewOptions) (*change, error) {
	var (
		diff  []byte
		name  string
		read  func(string) ([]byte, error)
		err   error
		isGit bool
	)
	switch {
	case o.diff == "-":
		name = "standard input"
		diff, err = readAllLimited(e.stdin)
		read = worktreeReader(e.dir)
	case o.diff != "":
		name = o.diff
		path := o.diff
		if !filepath.IsAbs(path) {
			path = filepath.Join(e.dir, path)
		}
		var f *os.File
		if f, err = os.Open(path); err == nil {
			diff, err = readAllLimited(f)
			f.Close()
		}
		err = unwrapPathError(err)
		read = worktreeReader(e.dir)
	case o.base != "":
		isGit = true
		name = "git diff " + o.base + "...HEAD"
		diff, err = gitrepo.RangeDiff(ctx, e.dir, o.base, "HEAD")
		if err != nil {
			err = fmt.Errorf("--base %s: %w", o.base, err)
		}
		read = func(path string) ([]byte, error) { return gitrepo.Output(ctx, e.dir, "show", "HEAD:"+path) }
	default:
		isGit = true
		name = "git diff HEAD"
		diff, err = gitrepo.WorktreeDiff(ctx, e.dir)
		read = worktreeReader(e.dir)
	}
	if err != nil {
		if isGit {
			return nil, &usageError{err}
		}
		return nil, usagef("diff %s: %v", name, err)
	}
	files, err := hunks.Parse(bytes.NewReader(diff))
	if err != nil {
		return nil, usagef("diff %s: %v", name, err)
	}
	if len(files) == 0 && len(bytes.TrimSpace(diff)) > 0 {
		return nil, usagef("diff %s: not a unified diff (no file header found)", name)
	}
	return &change{files: files, source: hunks.VerifiedSource(files, read)}, nil
}

func readAllLimited(r io.Reader) ([]byte, error) {
	return gitrepo.ReadCapped(r, gitrepo.MaxOutput)
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
