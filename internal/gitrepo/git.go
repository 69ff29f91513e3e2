// Package gitrepo runs git for warden: its output capped or streamed, its
// diff format fixed whatever the user's configuration says, a commit's tree
// read as an fs.FS from the object database (Tree), never from the working
// tree, and a commit's files read by path (Files). Both read contents
// through one long-lived `git cat-file --batch` process, not one git
// process per file; Started counts the processes.
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
	"sync/atomic"
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

// started counts the git processes command made.
var started atomic.Int64

// Started is the number of git processes this package has started since
// the program began (each command once, however long it lives): how a test
// tells that reading a change costs a few processes, not one per file.
func Started() int64 { return started.Load() }

// command is the one place a git process is made: every function of the
// package runs git through it.
func command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	started.Add(1)
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_PAGER=cat", "LC_ALL=C")
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
	var stderr bytes.Buffer
	stdout := &cappedBuffer{limit: MaxOutput}
	cmd := command(ctx, dir, args...)
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	err := cmd.Run()
	if stdout.over {
		return nil, fmt.Errorf("git %s: output %w", strings.Join(args, " "), ErrTooLarge)
	}
	out := stdout.Bytes()
	if err != nil {
		return nil, failed(args, stderr.String(), err)
	}
	return out, nil
}

// failed is the error of a git command that failed: the command and the
// first line of git's message (else how it ended).
func failed(args []string, stderr string, err error) error {
	msg := firstLine(stderr)
	if msg == "" {
		msg = err.Error()
	}
	return fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
}

// Stream runs git in dir and returns its standard output as git writes it,
// so that a large output is read as it comes and never held whole. What
// was read is git's whole output only once the reader gave io.EOF and
// Close returned nil: Close waits for git and returns its failure (naming
// the command, quoting git's message). Closing before io.EOF stops git
// (the reader wanted no more) and returns nil. The context kills git.
func Stream(ctx context.Context, dir string, args ...string) (io.ReadCloser, error) {
	s := &stream{args: args, stderr: &cappedBuffer{limit: 64 << 10}}
	s.cmd = command(ctx, dir, args...)
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	s.out = out
	return s, nil
}

// stream is Stream's reader.
type stream struct {
	args   []string
	cmd    *exec.Cmd
	out    io.ReadCloser
	stderr *cappedBuffer
	eof    bool // git's output ended
	closed bool
	err    error
}

func (s *stream) Read(p []byte) (int, error) {
	n, err := s.out.Read(p)
	if err == io.EOF {
		s.eof = true
	}
	return n, err
}

// Close waits for git; see Stream. It returns the same on every call.
func (s *stream) Close() error {
	if s.closed {
		return s.err
	}
	s.closed = true
	s.out.Close()
	if !s.eof {
		_ = s.cmd.Process.Kill() // the reader stopped early: git need not finish
		_ = s.cmd.Wait()
		return nil
	}
	if err := s.cmd.Wait(); err != nil {
		s.err = failed(s.args, s.stderr.buf.String(), err)
	}
	return s.err
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

// RangeDiff streams the change from the merge-base of base and head to
// head: what a pull request from head into base shows (Stream; the caller
// must Close it, and caps what it reads).
func RangeDiff(ctx context.Context, dir, base, head string) (io.ReadCloser, error) {
	mb, err := Output(ctx, dir, "merge-base", base, head)
	if err != nil {
		return nil, err
	}
	return Stream(ctx, dir, append(DiffArgs, strings.TrimSpace(string(mb)), head, "--")...)
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
