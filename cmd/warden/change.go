package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/org/warden/hunks"
	"github.com/org/warden/review"
)

// maxDiffBytes bounds the diff warden reads (a --diff file, standard input
// or git's output), so a runaway input fails with a clear one-line error
// naming the input and the cap instead of exhausting memory. It is a hard
// cap, not a setting: what a review covers is bounded by [filters]
// max_files, max_changed_lines and max_file_bytes, each reported per path;
// this one only keeps the process alive.
const maxDiffBytes = 512 << 20

// errDiffTooLarge is the error of a diff over maxDiffBytes.
var errDiffTooLarge = fmt.Errorf("larger than the %d MiB cap on a diff (review a smaller range)", maxDiffBytes>>20)

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
func readChange(e *env, o *reviewOptions) (*change, error) {
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
		diff, err = branchDiff(e.ctx, e.dir, o.base)
		read = func(path string) ([]byte, error) { return gitOutput(e.ctx, e.dir, "show", "HEAD:"+path) }
	default:
		isGit = true
		name = "git diff HEAD"
		diff, err = worktreeDiff(e.ctx, e.dir)
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
	return &change{files: files, source: verifiedSource(files, read)}, nil
}

func readAllLimited(r io.Reader) ([]byte, error) {
	return readCapped(r, maxDiffBytes)
}

// readCapped reads r to its end, or fails with errDiffTooLarge after more
// than limit bytes.
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && int64(len(b)) > limit {
		return nil, errDiffTooLarge
	}
	return b, err
}

// cappedBuffer collects a command's output up to limit bytes; a write past
// it fails (git then gets EPIPE and stops) and sets over. It does not embed
// bytes.Buffer, whose ReadFrom io.Copy would call instead of Write.
type cappedBuffer struct {
	buf   bytes.Buffer
	limit int64
	over  bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if int64(b.buf.Len()+len(p)) > b.limit {
		b.over = true
		return 0, errDiffTooLarge
	}
	return b.buf.Write(p)
}

func (b *cappedBuffer) Bytes() []byte { return b.buf.Bytes() }
func (b *cappedBuffer) Len() int      { return b.buf.Len() }

// gitDiffArgs make git's output parseable whatever the user's git config
// says: no colour, no external diff or textconv, standard a/ b/ prefixes,
// renames and copies detected.
var gitDiffArgs = []string{
	"-c", "core.quotePath=true", "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false",
	"-c", "color.ui=never", "diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", "-C",
}

func git(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_PAGER=cat", "LC_ALL=C")
	return cmd
}

// gitOutput runs git and returns its standard output; a failure names the
// command and quotes git's own message.
func gitOutput(ctx context.Context, dir string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	stdout := &cappedBuffer{limit: maxDiffBytes}
	cmd := git(ctx, dir, args...)
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	err := cmd.Run()
	if stdout.over {
		return nil, fmt.Errorf("git %s: output %w", strings.Join(args, " "), errDiffTooLarge)
	}
	out := stdout.Bytes()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s: %s", strings.Join(args, " "), firstLine(msg))
	}
	return out, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// worktreeDiff is the uncommitted change: tracked files against HEAD, plus
// untracked files that are not ignored, as new files.
func worktreeDiff(ctx context.Context, dir string) ([]byte, error) {
	if _, err := gitOutput(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		return nil, fmt.Errorf("%s is not a git repository with a commit to compare against (HEAD): %w", dir, err)
	}
	diff, err := gitOutput(ctx, dir, append(gitDiffArgs, "HEAD", "--")...)
	if err != nil {
		return nil, err
	}
	untracked, err := gitOutput(ctx, dir, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, err
	}
	for _, path := range strings.Split(string(untracked), "\x00") {
		if path == "" {
			continue
		}
		// --no-index exits 1 when the files differ, which they always do.
		out := &cappedBuffer{limit: maxDiffBytes - int64(len(diff))}
		cmd := git(ctx, dir, append(gitDiffArgs, "--no-index", "--", os.DevNull, path)...)
		cmd.Stdout = out
		err := cmd.Run()
		if out.over {
			return nil, fmt.Errorf("git diff HEAD with the untracked files: %w", errDiffTooLarge)
		}
		if err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				return nil, fmt.Errorf("git diff --no-index %s: %w", path, err)
			}
		}
		diff = append(diff, out.Bytes()...)
	}
	return diff, nil
}

// branchDiff is the change a pull request from HEAD into base would show:
// from the merge-base of base and HEAD to HEAD.
func branchDiff(ctx context.Context, dir, base string) ([]byte, error) {
	mb, err := gitOutput(ctx, dir, "merge-base", base, "HEAD")
	if err != nil {
		return nil, fmt.Errorf("--base %s: %w", base, err)
	}
	return gitOutput(ctx, dir, append(gitDiffArgs, strings.TrimSpace(string(mb)), "HEAD", "--")...)
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

// verifiedSource wraps read so a file is used for context only when its
// lines agree with the diff's new side; otherwise (the working tree moved
// on, or the diff came from elsewhere) hunks falls back to the diff alone.
func verifiedSource(files []*hunks.File, read func(string) ([]byte, error)) func(string) ([]byte, error) {
	byPath := map[string]*hunks.File{}
	for _, f := range files {
		if f.NewPath != "" {
			byPath[f.NewPath] = f
		}
	}
	return func(path string) ([]byte, error) {
		f := byPath[path]
		if f == nil {
			return nil, fmt.Errorf("%s is not in the diff", path)
		}
		data, err := read(path)
		if err != nil {
			return nil, err
		}
		lines := strings.Split(string(data), "\n")
		for _, frag := range f.Fragments {
			for _, l := range frag.Lines {
				if l.Op == hunks.Delete {
					continue
				}
				if l.NewLine < 1 || l.NewLine > len(lines) ||
					strings.TrimSuffix(lines[l.NewLine-1], "\r") != strings.TrimSuffix(l.Text, "\r") {
					return nil, fmt.Errorf("%s does not match the diff at line %d", path, l.NewLine)
				}
			}
		}
		return data, nil
	}
}
