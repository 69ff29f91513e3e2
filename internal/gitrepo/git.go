// Package gitrepo runs git for warden: its output capped, its diff format
// fixed whatever the user's configuration says, and a commit's tree read as
// an fs.FS from the object database (Tree), never from the working tree.
//
// It owns how warden calls git. It imports no package of this module and
// reads no environment of its own.
package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// MaxOutput bounds what warden reads from git or a diff (a --diff file,
// standard input or git's output), so a runaway input fails with a clear
// one-line error naming the input and the cap instead of exhausting memory.
// It is a hard cap, not a setting: what a review covers is bounded by
// [filters] max_files, max_changed_lines and max_file_bytes, each reported
// per path; this one only keeps the process alive.
const MaxOutput = 512 << 20

// ErrTooLarge is the error of a diff over MaxOutput.
var ErrTooLarge = fmt.Errorf("larger than the %d MiB cap on a diff (review a smaller range)", MaxOutput>>20)

// ReadCapped reads r to its end, or fails with ErrTooLarge after more than
// limit bytes.
func ReadCapped(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && int64(len(b)) > limit {
		return nil, ErrTooLarge
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
		return 0, ErrTooLarge
	}
	return b.buf.Write(p)
}

func (b *cappedBuffer) Bytes() []byte { return b.buf.Bytes() }
func (b *cappedBuffer) Len() int      { return b.buf.Len() }

// DiffArgs make git's output parseable whatever the user's git config
// says: no colour, no external diff or textconv, standard a/ b/ prefixes,
// renames and copies detected.
var DiffArgs = []string{
	"-c", "core.quotePath=true", "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false",
	"-c", "color.ui=never", "diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", "-C",
}

func command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	return commandEnv(ctx, nil, dir, args...)
}

// commandEnv is git in dir with env as its environment (nil: the
// process's), its pager and language fixed.
func commandEnv(ctx context.Context, env []string, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env[:len(env):len(env)], "GIT_PAGER=cat", "LC_ALL=C")
	return cmd
}

// TopLevel is the top level of the git checkout dir is in (git rev-parse
// --show-toplevel), or dir when it is in none (or git is missing).
func TopLevel(ctx context.Context, dir string) string {
	out, err := Output(ctx, dir, "rev-parse", "--show-toplevel")
	if top := strings.TrimSpace(string(out)); err == nil && top != "" {
		return top
	}
	return dir
}

// Output runs git in dir and returns its standard output; a failure names
// the command and quotes git's own message.
func Output(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return OutputEnv(ctx, nil, dir, args...)
}

// OutputEnv is Output with env as git's whole environment (nil: the
// process's): a caller that is given its environment, such as `warden
// eval` fetching a corpus with the user's git configuration, passes it.
func OutputEnv(ctx context.Context, env []string, dir string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	stdout := &cappedBuffer{limit: MaxOutput}
	cmd := commandEnv(ctx, env, dir, args...)
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	err := cmd.Run()
	if stdout.over {
		return nil, fmt.Errorf("git %s: output %w", strings.Join(args, " "), ErrTooLarge)
	}
	out := stdout.Bytes()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		msg, _, _ = strings.Cut(msg, "\n")
		return nil, fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return out, nil
}

// IsRepo reports whether dir is inside a git checkout.
func IsRepo(ctx context.Context, dir string) bool {
	_, err := Output(ctx, dir, "rev-parse", "--git-dir")
	return err == nil
}

// WorktreeDiff is the uncommitted change: tracked files against HEAD, plus
// untracked files that are not ignored, as new files.
func WorktreeDiff(ctx context.Context, dir string) ([]byte, error) {
	if _, err := Output(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		return nil, fmt.Errorf("%s is not a git repository with a commit to compare against (HEAD): %w", dir, err)
	}
	diff, err := Output(ctx, dir, append(DiffArgs, "HEAD", "--")...)
	if err != nil {
		return nil, err
	}
	untracked, err := Output(ctx, dir, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, err
	}
	for _, path := range strings.Split(string(untracked), "\x00") {
		if path == "" {
			continue
		}
		// --no-index exits 1 when the files differ, which they always do.
		out := &cappedBuffer{limit: MaxOutput - int64(len(diff))}
		cmd := command(ctx, dir, append(DiffArgs, "--no-index", "--", os.DevNull, path)...)
		cmd.Stdout = out
		err := cmd.Run()
		if out.over {
			return nil, fmt.Errorf("git diff HEAD with the untracked files: %w", ErrTooLarge)
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

// RangeDiff is the change from the merge-base of base and head to head: what
// a pull request from head into base shows.
func RangeDiff(ctx context.Context, dir, base, head string) ([]byte, error) {
	mb, err := Output(ctx, dir, "merge-base", base, head)
	if err != nil {
		return nil, err
	}
	return Output(ctx, dir, append(DiffArgs, strings.TrimSpace(string(mb)), head, "--")...)
}

// EnsureCommit fetches commit sha from origin, as git objects only (nothing
// is checked out), unless the checkout already has it.
func EnsureCommit(ctx context.Context, dir, sha string) error {
	if HasCommit(ctx, dir, sha) {
		return nil
	}
	_, err := Output(ctx, dir, "fetch", "--no-tags", "--quiet", "--no-recurse-submodules", "origin", sha)
	return err
}

// HasCommit reports whether the checkout at dir has commit sha.
func HasCommit(ctx context.Context, dir, sha string) bool {
	_, err := Output(ctx, dir, "cat-file", "-e", sha+"^{commit}")
	return err == nil
}

// IsSHA reports whether s is a full commit id (SHA-1 or SHA-256), lower-case hex.
func IsSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// Short is a commit id's first seven characters.
func Short(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	return s
}
